/**
 * Serializers: which fields a collection shows and accepts, in which order,
 * which are read-only, hidden, searched or nested; body → values to store
 * (or `details` of what is wrong), and stored row → JSON record.
 */
import type { StoredFile } from '../../core/file-fields.js';
import { renderFile } from '../base/file-links.js';
import { cached } from '../../core/cache.js';
import { FieldError, type DefaultContext, type Field } from '../../core/fields.js';
import { isPending, type MaybePromise } from '../../core/maybe-promise.js';
import { compileFieldsParser, compileRender, fieldErrors, interpretRender, type FieldsParser, type ParseStep, type RecordRenderer, type RenderStep } from './compiled-serializer.js';
import type { Aggregate, Batch, Join, Row, Selection } from '../../core/rows.js';
import { clashDetails, type RecordRefused } from '../../core/refused.js';
import { emptyDetails, parseError, validationFailed, type ErrorDetails, throwIfInvalid } from '../base/errors.js';
import type { AuthUser } from '../base/auth-user.js';
import type { Permission, PermissionContext } from './permission-classes.js';
import { aggregatesFor, type ComputedField, type RenderContext } from './computed.js';
import type { Model } from './model.js';
import { parseRelatedIds, parseRelatedSlugs } from './related-ids.js';
import { formFieldValue, formListValue } from './form-values.js';
import type { JoinColumns } from '../../store/read/join-rows.js';
import type { Across } from '../../core/list-query.js';
import type { Table } from '../../core/model.js';

export type WriteMode = 'create' | 'update' | 'partial_update';

/** A record a foreign key names, rendered as an object by its own serializer (read-only: clients write the key). */
export interface NestedField {
  /** The foreign-key field of this model that names the nested record. */
  readonly source: string;
  readonly serializer: Serializer;
}

/** `serializer(model, options)`'s options. */
export interface SerializerOptions {
  /**
   * Its schemas' names in the OpenAPI document (`Book`, `BookCreate`, …); by
   * default the model's table in the singular (`books` → `Book`). Two
   * serializers of one model need names of their own.
   */
  name?: string;
  /** Output order; names of model fields, of `nested` entries or of `computed` ones. */
  fields: string[];
  /**
   * Fields shown under another name (DRF's `source=`): `{ created_at: 'createdAt' }`. The shown name
   * is the only one clients see and send: in records, bodies, validation errors, `?fields=`, the
   * OpenAPI document and the browsable forms; filters and `ordering` keep the model's names (DRF's).
   */
  rename?: Record<string, string>;
  readOnly?: string[];
  /** Always rendered as null; still writable (a password, say). */
  hidden?: string[];
  /** Written, never rendered: no key in responses (DRF's `write_only=True`), where an API shows no null for a password. */
  writeOnly?: string[];
  /**
   * Fields only some requests may write, each with the permission that lets them (a permission
   * class, as a collection's `permissions` take): `{ price: hasPermission('events.set_price') }`.
   * Another request's body setting one is refused whole, 403 `details.<field>` (401 when anonymous),
   * never dropped; an update sending the value the record already has writes nothing, and passes.
   */
  writableBy?: Record<string, Permission>;
  /** String fields the `search` parameter looks through. */
  search?: string[];
  nested?: Record<string, NestedField>;
  /** Read-only values computed from the row or, SQL-backed, over related rows (see `computed`). */
  computed?: Record<string, ComputedField>;
  /**
   * Reverse and many-to-many relations, rendered as lists of ids, or of nested records where the
   * relation names a serializer (see relations.ts); a many-to-many of ids is writable unless `readOnly`.
   */
  relations?: Record<string, Relation>;
  /**
   * Per-field rendering in place of the field's own: what was read for the field in (a stored value,
   * the row a nested field names, a relation's ids or its related rows), JSON out.
   */
  format?: Record<string, (stored: unknown, row: Row) => unknown>;
  /**
   * Whole-object validation, once every field is valid: `values` is the record as it would be
   * stored (on PATCH, the stored record with the sent fields over it). Returns what is wrong, by
   * field or under `non_field_errors`, or nothing.
   */
  validate?: ObjectValidator;
  /**
   * The fields some versions of the API show (the app's `versions`), where not all of `fields`:
   * `{ '1': ['id', 'title'] }`. A version named here renders, accepts in bodies and documents only
   * those; any other version, `fields`. DRF's `get_serializer_class` choosing by `request.version`.
   */
  versions?: Record<string, string[]>;
}

/** Whole-object validation, on a serializer or a collection (see SerializerOptions.validate). */
export type ObjectValidator = (values: Row, context: ObjectContext) => ObjectErrors | void | Promise<ObjectErrors | void>;

/** Object validation's findings: messages by field, or under `non_field_errors` (fields left out, or undefined, are fine). */
export type ObjectErrors = Readonly<Partial<Record<string, readonly string[]>>>;

/** What object validation sees beside the values. */
export interface ObjectContext {
/** The stored record, on an update; undefined on a create. */
  readonly existing: Row | undefined;
  readonly user: AuthUser | null;
  /** The API version the request asked for (the app's `versions`); undefined when it declares none. */
  readonly version?: string;
}

// ---- relation fields: a serializer's reverse, many-to-many and slug fields (declared with relations.ts) ----

/** A join table linking records of `source` to records of `target`, both by id. */
export interface JoinTable extends JoinColumns {
  readonly source: string;
  readonly target: string;
  /** The table itself, for migrations: the two foreign keys (cascading) are its primary key. */
  readonly declaration: Table;
}

/** A forward foreign key shown, and written, as a unique field of the record it names. */
export interface SlugKey {
  /** The foreign-key field of the serializer's model. */
  readonly source: string;
  readonly target: Table;
  /** The target's unique field that names its records. */
  readonly field: string;
}

/** A relation of a serializer, as `relations.*` declares it. */
export interface Relation {
  readonly kind: 'reverse' | 'many_to_many' | 'slug';
  /** How reverse and many-to-many ids are read (an aggregate of the record's statement). */
  readonly aggregate?: Omit<Aggregate, 'name'>;
  /** How `?<name>=` filters: over these related rows, on their id column (the slug field, for a slug). */
  readonly across: Across;
  /** Set on a many-to-many: what a write replaces. */
  readonly through?: JoinTable;
  /** Set on a many-to-many: the most ids (or slugs) one write may give. */
  readonly maxItems?: number;
  /** Set on a slug: the key it shows and sets. */
  readonly slug?: SlugKey;
  /** Set on a many-to-many shown and written as a unique field of the records it links (their slugs). */
  readonly slugs?: SlugField;
  /** Set on a reverse or many-to-many relation shown nested: how each related record renders (read-only). */
  readonly serializer?: Serializer;
  /** How the nested records are read: a statement per page (see store/read/records.ts attachBatches). */
  readonly batch?: Omit<Batch, 'name'>;
}

/** A unique field of `target` that names its records. */
export interface SlugField {
  readonly target: Table;
  readonly field: string;
}

export interface WriteContext extends DefaultContext {
  /** Whether the requesting user holds the named permission (false for anonymous requests; AuthUser.hasPermission). */
  hasPermission(name: string): Promise<boolean>;
  /** The API version the request asked for (the app's `versions`); undefined when it declares none. */
  readonly version?: string;
}

const UNKNOWN_FIELD = 'Unknown field.';
const REQUIRED = 'This field is required.';

/** `books` → `Book`, `reading_lists` → `ReadingList`. */
const schemaNameOf = (table: string): string =>
  table
    .replace(/s$/, '')
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/**
 * Which of a model's fields a collection shows and accepts, and how (made by `serializer()`; subclass it only
 * for what no option says).
 */
export class Serializer {
  readonly model: Model;
  /** Its schemas' names in the OpenAPI document. */
  readonly name: string;
  readonly fields: readonly string[];
  readonly readOnly: ReadonlySet<string>;
  readonly hidden: ReadonlySet<string>;
  readonly writeOnly: ReadonlySet<string>;
  /** Writable fields only some requests may write, and the permission that lets them (SerializerOptions.writableBy). */
  readonly writableBy: ReadonlyMap<string, Permission>;
  readonly search: readonly string[];
  readonly nested: Readonly<Record<string, NestedField>>;
  readonly computed: Readonly<Record<string, ComputedField>>;
  readonly relations: Readonly<Record<string, Relation>>;
  /** Shown many-to-many relations a body may set (as lists of ids). */
  readonly relationInputs: readonly string[];
  /** Model fields a body may carry. */
  readonly writable: readonly string[];
  /** Body fields an update may carry beside `writable`, which the model's rules read (never stored). */
  readonly updateInputs: readonly string[];
  /** Writable fields stored as a slow hash (passwords): a body that sets one costs a derivation. */
  readonly hashed: readonly string[];
  readonly selection: Selection;
  /** Field → the name clients see (itself unless renamed), and back. */
  private readonly shownNames: ReadonlyMap<string, string>;
  private readonly fieldNames: ReadonlyMap<string, string>;
  /** Whether a shown field is renamed (a body's names are then translated). */
  private readonly renames: boolean;
  /** The body fields a create may carry, and an update (with `updateInputs`): known ones, decided once. */
  private readonly creatable: ReadonlySet<string>;
  private readonly updatable: ReadonlySet<string>;
  /** The model's fields with a default, which a create sets when the body does not. */
  private readonly defaulted: readonly (readonly [string, Field])[];
  private readonly format: Readonly<Record<string, (stored: unknown, row: Row) => unknown>>;
  private readonly options: SerializerOptions;
  /** Each shown field and how its value comes from a row, decided once rather than per row. */
  private readonly renderSteps: readonly RenderStep[];
  /** A row → its record: compiled from renderSteps (compiled-serializer.ts). */
  private readonly renderRecord: RecordRenderer;
  /** The body's writable fields parsed: compiled, where their names allow (else parseInputs does it all). */
  private readonly parseFields: FieldsParser<WriteContext> | undefined;
  /** Whether a shown aggregate depends on the requesting user (the selection is then made per request). */
  readonly perUser: boolean;
  /**
   * Whether a record renders from its row alone: no shown field's rendering reads the request or its
   * user (a computed function, a record's URL, a file's signed link), in nested and listed records
   * too. Requests that read the same row then render the same record (live streams share it).
   */
  readonly rendersFromRow: boolean;
  /** The versions its `versions` or a nested record's serializer's name: each shows fewer fields. */
  readonly versions: readonly string[];
  /** Each of those versions' serializer, made once. */
  private readonly atVersions = new Map<string, Serializer>();

  constructor(model: Model, options: SerializerOptions) {
    this.model = model;
    this.name = options.name ?? schemaNameOf(model.table);
    this.options = options;
    this.fields = options.fields;
    this.nested = options.nested ?? {};
    this.computed = options.computed ?? {};
    this.relations = options.relations ?? {};
    this.hidden = new Set(options.hidden ?? []);
    this.writeOnly = new Set(options.writeOnly ?? []);
    this.search = options.search ?? [];
    this.format = options.format ?? {};
    const fieldOf = (name: string): Field | undefined => model.fields[name];
    for (const name of this.fields) {
      if (!fieldOf(name) && !this.nested[name] && !this.computed[name] && !this.relations[name]) throw new Error(`${model.table}: unknown field "${name}" in fields.`);
    }
    const named = [...this.fields, ...this.search, ...Object.values(this.computed).flatMap((computed) => computed.reads ?? [])];
    const internal = [...new Set(named.filter((name) => model.rules?.internal?.includes(name)))];
    if (internal.length > 0) throw new Error(`${model.table}: ${internal.join(', ')} only the framework reads and writes: no serializer may show, write, search or compute from them.`);
    for (const [name, computed] of Object.entries(this.computed)) {
      const { table, via } = computed.aggregate ?? {};
      // Names become SQL identifiers (aliases, related tables and columns): plain lower-case only.
      const names = [name, table, via, computed.aggregate?.requestingUser, computed.aggregate?.on, ...(computed.reads ?? [])].filter((part) => part !== undefined);
      if (names.some((part) => !/^[a-z_][a-z0-9_]*$/.test(part))) throw new Error(`${model.table}: computed "${name}" names must match [a-z_][a-z0-9_]*.`);
      if (fieldOf(name) || this.nested[name]) throw new Error(`${model.table}: computed "${name}" is also a field.`);
      if (computed.onlyOn !== undefined && computed.onlyOn !== model.table) throw new Error(`${model.table}: computed "${name}" may be shown only by a serializer of ${computed.onlyOn}.`);
      for (const column of computed.reads ?? []) if (!fieldOf(column)) throw new Error(`${model.table}: computed "${name}" reads unknown field "${column}".`);
      const on = computed.aggregate?.on;
      if (on !== undefined && !fieldOf(on)) throw new Error(`${model.table}: computed "${name}" is correlated on unknown field "${on}".`);
    }
    for (const [name, relation] of Object.entries(this.relations)) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name) || fieldOf(name) || this.nested[name] || this.computed[name]) throw new Error(`${model.table}: relation "${name}" needs a plain name of its own.`);
      if (relation.through && relation.through.source !== model.table) throw new Error(`${model.table}: relation "${name}" goes through a join table of ${relation.through.source}.`);
      if (relation.slug && fieldOf(relation.slug.source)?.references !== relation.slug.target.table) {
        throw new Error(`${model.table}: relation "${name}" needs "${relation.slug.source}" to be a foreign key to ${relation.slug.target.table}.`);
      }
    }
    const rename = options.rename ?? {};
    for (const [name, shown] of Object.entries(rename)) {
      if (!fieldOf(name) && !this.nested[name] && !this.computed[name] && !this.relations[name]) throw new Error(`${model.table}: rename names unknown field "${name}".`);
      // A JSON key that is also a query parameter's and a form input's name: plain letters, digits and underscores.
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(shown)) throw new Error(`${model.table}: "${name}" cannot be shown as "${shown}": use letters, digits and underscores.`);
      if (shown !== name && (fieldOf(shown) || this.nested[shown] || this.computed[shown] || this.relations[shown])) {
        throw new Error(`${model.table}: "${name}" cannot be shown as "${shown}", the name of another field.`);
      }
    }
    const shownOf = (name: string): string => rename[name] ?? name;
    const shownFields = this.fields.map(shownOf);
    for (const [index, shown] of shownFields.entries()) {
      if (shownFields.indexOf(shown) !== index) throw new Error(`${model.table}: two fields are shown as "${shown}".`);
    }
    this.shownNames = new Map(this.fields.map((name) => [name, shownOf(name)]));
    this.fieldNames = new Map(this.fields.map((name) => [shownOf(name), name]));
    this.renames = this.fields.some((name) => shownOf(name) !== name);
    for (const name of this.search) {
      if (fieldOf(name)?.valueType !== 'string') throw new Error(`${model.table}: search field "${name}" is not a string.`);
    }
    for (const [name, nested] of Object.entries(this.nested)) {
      if (fieldOf(nested.source)?.references !== nested.serializer.model.table) {
        throw new Error(`${model.table}: nested "${name}" needs "${nested.source}" to be a foreign key to ${nested.serializer.model.table}.`);
      }
      // A nested record is read by a join, which carries columns only.
      if (nested.serializer.selection.batches) throw new Error(`${model.table}: nested "${name}" shows relations as nested lists, which a nested record cannot: show them as ids.`);
    }
    // Nested objects and write-only-by-nature fields are never taken from a body as they are.
    const declaredReadOnly = new Set([...(options.readOnly ?? []), ...Object.keys(this.nested), ...Object.keys(this.computed), 'id']);
    // Relations are no columns: the writable ones (many-to-many) are set apart, the others are read-only.
    // A relation shown nested is read-only, as a nested foreign key is.
    this.relationInputs = this.fields.filter((name) => ((this.relations[name]?.through && !this.relations[name]?.serializer) || this.relations[name]?.slug) && !declaredReadOnly.has(name));
    this.readOnly = new Set([...declaredReadOnly, ...Object.keys(this.relations).filter((name) => !this.relationInputs.includes(name))]);
    this.writable = this.fields.filter((name) => !this.readOnly.has(name) && !this.relations[name]);
    this.updateInputs = Object.keys(model.rules?.updates?.inputs ?? {});
    this.hashed = this.writable.filter((name) => fieldOf(name)?.kind === 'password');
    this.creatable = new Set(shownFields);
    this.updatable = new Set([...shownFields, ...this.updateInputs]);
    this.defaulted = Object.entries(model.fields).filter(([, field]) => field.default);
    const own = this.fields.filter((name) => fieldOf(name) && !this.hidden.has(name) && !fieldOf(name)?.writeOnly);
    const slugs = this.fields.flatMap((name) => (this.relations[name]?.slug ? [[name, this.relations[name].slug] as const] : []));
    const shownComputed = this.fields.filter((name) => this.computed[name]);
    const readable = Object.keys(model.fields).filter((name) => !fieldOf(name)!.writeOnly && !model.rules?.internal?.includes(name));
    // An aggregate `on` a column reads it beside the record: a write's returned row is aggregated in its own statement.
    const computedReads = shownComputed.flatMap((name) => {
      const { reads, compute, aggregate } = this.computed[name]!;
      return reads ?? (compute ? readable : aggregate?.on !== undefined ? [aggregate.on] : []);
    });
    const batches = this.fields.flatMap((name) => {
      const batch = this.relations[name]?.batch;
      return batch ? [{ name, ...batch }] : [];
    });
    // A nested record's computed fields for the requesting user make the page's selection per user too.
    this.perUser = shownComputed.some((name) => this.computed[name]!.aggregate?.requestingUser !== undefined) || Object.values(this.nested).some((nested) => nested.serializer.perUser);
    const columns = [...new Set(['id', ...own, ...computedReads, ...Object.values(this.nested).map((n) => n.source), ...slugs.map(([, slug]) => slug.source), ...(model.rules?.reads ?? [])])];
    this.selection = {
      table: model.table,
      columns,
      int64: columns.filter((name) => fieldOf(name)?.kind === 'bigint'),
      aggregates: this.aggregatesOf(null),
      joins: [
        ...this.nestedJoins(null),
        // A slug is read by a join, as a nested record of its id and that field.
        ...slugs.map(([name, slug]) => ({ name, table: slug.target.table, via: slug.source, columns: ['id', slug.field] })),
      ],
      ...(batches.length > 0 && { batches }),
    };
    const unwritable = [...this.writeOnly].filter((name) => !this.writable.includes(name));
    if (unwritable.length > 0) throw new Error(`${model.table}: writeOnly ${unwritable.join(', ')} must be writable fields of \`fields\`.`);
    this.writableBy = new Map(Object.entries(options.writableBy ?? {}));
    const unrestrictable = [...this.writableBy.keys()].filter((name) => !this.writable.includes(name) && !this.relationInputs.includes(name));
    if (unrestrictable.length > 0) throw new Error(`${model.table}: writableBy ${unrestrictable.join(', ')} must be writable fields of \`fields\`.`);
    this.renderSteps = this.fields.filter((name) => !this.writeOnly.has(name)).map((name) => this.renderStepOf(name, shownOf(name)));
    this.renderRecord = compileRender(this.renderSteps) ?? interpretRender(this.renderSteps);
    this.rendersFromRow = this.renderSteps.every((step) => !step.readsContext);
    const parseSteps = this.writable.map((name): ParseStep<WriteContext> => {
      const field = fieldOf(name)!;
      const ruled = field.validate !== undefined || field.requestingUserOnly !== undefined;
      return { name, key: shownOf(name), field, hidden: this.hidden.has(name), ...(ruled && { parseValue: (value, context) => this.parseValue(field, value, context) }) };
    });
    this.parseFields = compileFieldsParser(parseSteps, emptyDetails, (index, pending, body, mode, context, values, details) =>
      this.parsedLater(index, pending, this.inputOf(body, mode), mode, context, values, details).then(() => details),
    );
    this.versions = [...new Set([...Object.keys(options.versions ?? {}), ...Object.values(this.nested).flatMap(({ serializer }) => serializer.versions)])];
    for (const [version, names] of Object.entries(options.versions ?? {})) {
      const unknown = names.filter((name) => !this.fields.includes(name));
      if (unknown.length > 0) throw new Error(`${model.table}: version "${version}" shows ${unknown.join(', ')}, which are not among its fields.`);
    }
  }

  /**
   * The serializer of an API version: the same one, unless `versions` gives that version fewer
   * fields, or a nested record's serializer does (a nested record renders as its own would).
   */
  forVersion(version: string | undefined): Serializer {
    if (version === undefined || !this.versions.includes(version)) return this;
    let own = this.atVersions.get(version);
    if (!own) this.atVersions.set(version, (own = this.atVersion(version)));
    return own;
  }

  private atVersion(version: string): Serializer {
    const names = this.options.versions?.[version];
    const narrowed = names ? this.narrow(names, []) : this;
    const nested = Object.fromEntries(Object.entries(narrowed.nested).map(([name, field]) => [name, { ...field, serializer: field.serializer.forVersion(version) }]));
    return new Serializer(this.model, { ...narrowed.options, nested, versions: undefined });
  }

  /** The name clients see the field under (its own, unless renamed). */
  shown(name: string): string {
    return this.shownNames.get(name) ?? name;
  }

  /** The names of a rendered record, in order (write-only fields are never rendered). */
  get shownFields(): readonly string[] {
    return this.renderSteps.map(({ name }) => name);
  }

  /**
   * An HTML form's fields → the body JSON would carry, for parseBody (form-values.ts). Values that
   * read as no kind stay text, for parseBody to refuse with the errors a JSON body gets; unknown
   * names pass through, for it to name. A JSON field's text that is no JSON: 400 naming it.
   */
  formBody(form: URLSearchParams, mode: WriteMode): Row {
    const body: Row = {};
    const details = emptyDetails();
    for (const key of new Set(form.keys())) {
      const name = this.fieldNames.get(key) ?? key;
      const texts = form.getAll(key);
      const relation = this.relationInputs.includes(name) ? this.relations[name]! : undefined;
      const field = this.model.fields[name];
      try {
        if (relation?.slug) body[key] = texts.at(-1) === '' && this.model.fields[relation.slug.source]!.nullable ? null : texts.at(-1);
        else if (relation) body[key] = formListValue(texts, relation.slugs !== undefined);
        else body[key] = field && this.writable.includes(name) ? formFieldValue(field, texts) : texts.at(-1);
      } catch (error) {
        details[key] = fieldErrors(error);
      }
    }
    throwIfInvalid(details);
    // An unticked checkbox sends nothing: a boolean a whole form leaves out is false (DRF's BooleanField.default_empty_html).
    if (mode !== 'partial_update') {
      for (const name of this.writable) {
        if (this.model.fields[name]!.valueType === 'boolean' && !this.hidden.has(name) && !form.has(this.shown(name))) body[this.shown(name)] = false;
      }
    }
    return body;
  }

  /** Messages by field (a bulk create's under `<index>.<field>`) → by the names clients see. */
  shownDetails(details: ErrorDetails): ErrorDetails {
    const shownKey = (key: string): string => {
      const [, index = '', name = key] = /^(\d+\.)(.*)$/.exec(key) ?? [];
      return `${index}${this.shown(name)}`;
    };
    return !this.renames ? details : Object.fromEntries(Object.entries(details).map(([key, messages]) => [shownKey(key), messages]));
  }

  /** What the database refused, by the names clients see: a unique clash's message names them too. */
  refusalDetails(refused: RecordRefused): ErrorDetails {
    return refused.clashing ? clashDetails(refused.clashing, (name) => this.shown(name)) : this.shownDetails(refused.details);
  }

  /**
   * The same serializer showing fewer fields: `include` (all when undefined)
   * minus `exclude`; `author.username` reaches into a nested field.
   */
  narrow(include: readonly string[] | undefined, exclude: readonly string[]): Serializer {
    const details = emptyDetails();
    const wanted = include && this.group(include, 'fields', details);
    const unwanted = this.group(exclude, 'omit', details);
    throwIfInvalid(details, 'Invalid query parameters.');
    const fields = this.fields.filter((name) => (!wanted || wanted.has(name)) && unwanted.get(name)?.length !== 0);
    const nested: Record<string, NestedField> = {};
    for (const name of fields) {
      const field = this.nested[name];
      if (!field) continue;
      const inner = wanted?.get(name);
      nested[name] = {
        ...field,
        serializer: field.serializer.narrow(inner?.length ? inner : undefined, unwanted.get(name) ?? []),
      };
    }
    // Only the kept fields' new names: a nested record left out is not declared in the narrowed serializer.
    const rename = Object.fromEntries(fields.flatMap((name) => (this.shown(name) === name ? [] : [[name, this.shown(name)]])));
    return new Serializer(this.model, {
      ...this.options,
      fields,
      nested,
      rename,
      writeOnly: [...this.writeOnly].filter((name) => fields.includes(name)),
      writableBy: Object.fromEntries([...this.writableBy].filter(([name]) => fields.includes(name))),
      versions: undefined,
    });
  }

  /** Dotted paths → top-level field → the paths below it (empty: the whole field). */
  private group(paths: readonly string[], parameter: string, details: ErrorDetails): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const path of paths) {
      const [shownTop = '', ...rest] = path.split('.');
      // `?fields=` names fields as clients see them.
      const top = this.fieldNames.get(shownTop);
      if (top === undefined || (rest.length > 0 && !this.nested[top])) {
        (details[parameter] ??= []).push(`Unknown field "${path}". Allowed: ${[...this.fieldNames.keys()].join(', ')}.`);
        continue;
      }
      const below = groups.get(top);
      if (rest.length === 0) groups.set(top, []);
      else if (below === undefined) groups.set(top, [rest.join('.')]);
      else if (below.length > 0) below.push(rest.join('.'));
    }
    return groups;
  }

  /**
   * What to read for this request: the selection, with aggregates over the requesting user's rows
   * bound to that user (a selection of its own, then, read without the compiled queries kept per selection).
   */
  selectionFor(user: AuthUser | null): Selection {
    if (!this.perUser) return this.selection;
    const slugJoins = this.selection.joins.slice(Object.keys(this.nested).length);
    return { ...this.selection, aggregates: this.aggregatesOf(user), joins: [...this.nestedJoins(user), ...slugJoins] };
  }

  /** One join per nested record, with its serializer's aggregates for this user (correlated to the joined row). */
  private nestedJoins(user: AuthUser | null): Join[] {
    return Object.entries(this.nested).map(([name, nested]) => {
      const aggregates = nested.serializer.aggregatesOf(user);
      return {
        name,
        table: nested.serializer.model.table,
        via: nested.source,
        columns: nested.serializer.selection.columns,
        int64: nested.serializer.selection.int64,
        ...(aggregates.length > 0 && { aggregates }),
      };
    });
  }

  /** The shown computed fields' aggregates for this user, then the shown relations'. */
  private aggregatesOf(user: AuthUser | null): Aggregate[] {
    const related = this.fields.flatMap((name) => {
      const aggregate = this.relations[name]?.aggregate;
      return aggregate ? [{ name, ...aggregate }] : [];
    });
    return [...aggregatesFor(this.computed, this.fields, user), ...related];
  }

  /** A stored row (nested rows already attached under their names) → the JSON record; `context` is what computed fields see. */
  render(row: Row, context: RenderContext = { user: null }): Row {
    return this.renderRecord(row, context);
  }

  /** How the field `name`, shown as `shown`, renders: its model field's rendering of its column, or a function of the row. */
  private renderStepOf(name: string, shown: string): RenderStep {
    const step = (render: (row: Row, context: RenderContext) => unknown, readsContext = false): RenderStep => ({ name: shown, render, readsContext });
    const format = this.format[name];
    const nested = this.nested[name]?.serializer;
    const computed = this.computed[name];
    if (this.hidden.has(name)) return step(() => null);
    // The app's function is given the context: whether it reads it cannot be told.
    if (computed?.compute) return step(computed.compute, true);
    if (computed?.recordUrl) {
      const { table } = this.model;
      return step((row, { request, links }) => (request && links ? links.recordUrl(request, table, row) : null), true);
    }
    if (format) return step((row) => format(row[name], row));
    const slug = this.relations[name]?.slug;
    if (slug) return step((row) => (row[name] as Row | null)?.[slug.field] ?? null);
    const listed = this.relations[name]?.serializer;
    if (listed) return step((row, context) => (row[name] as Row[]).map((related) => listed.render(related, context)), !listed.rendersFromRow);
    const slugs = this.relations[name]?.slugs;
    if (slugs) {
      const field = slugs.target.fields[slugs.field]!;
      return step((row) => (row[name] as Row[]).map((related) => field.render(related[slugs.field])));
    }
    if (computed || this.relations[name]) return step((row) => row[name]);
    if (nested) return step((row, context) => (row[name] ? nested.render(row[name] as Row, context) : null), !nested.rendersFromRow);
    const field = this.model.fields[name]!;
    if (field.file) {
      const { table } = this.model;
      return step((row, { request, fileLinks, links }) => {
        const stored = field.render(row[name]) as StoredFile | null;
        if (!stored || !request || !fileLinks) return renderFile(stored, null);
        const place = links?.filePlace(request, table, row);
        return renderFile(stored, place ? fileLinks.url(request, place, shown, stored) : null);
      }, true);
    }
    return { name: shown, column: name, field };
  }

  /**
   * A request body → the model values to store. Read-only fields are ignored, a hidden field sent
   * as null counts as not sent, unknown fields fail. Answered at once while every field parses at
   * once (a password's hash answers later): the pipeline awaits only what is pending. Throws at
   * once what it finds at once.
   */
  parseBody(body: unknown, mode: WriteMode, context: WriteContext): MaybePromise<Row> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw parseError('Expected a JSON object.');
    }
    const values: Row = {};
    const known = mode === 'create' ? this.creatable : this.updatable;
    // Named as sent, never as the fields they might be renamed from.
    const unknown = Object.keys(body).filter((name) => !known.has(name));
    const { parseFields } = this;
    if (!parseFields) return this.parsedFrom(body as Row, mode, context, values, emptyDetails(), 0, unknown);
    // The compiled parse reads the body by the names it is sent under, and makes the details only
    // when there is an error; the relations, and the rest after a value that answers later, go the interpreted way.
    const found = parseFields(body as Row, mode, context, values);
    if (isPending(found)) return found.then((details) => this.parsedBody(values, details, unknown, mode, context));
    if (this.relationInputs.length > 0) return this.parsedFrom(body as Row, mode, context, values, found ?? emptyDetails(), this.writable.length, unknown);
    return this.parsedBody(values, found, unknown, mode, context);
  }

  /** The body's inputs parsed the interpreted way from the `from`th on, then the parsed body. */
  private parsedFrom(body: Row, mode: WriteMode, context: WriteContext, values: Row, details: ErrorDetails, from: number, unknown: readonly string[]): MaybePromise<Row> {
    const parsing = this.parseInputs(this.inputOf(body, mode), mode, context, values, details, from);
    return parsing ? parsing.then(() => this.parsedBody(values, details, unknown, mode, context)) : this.parsedBody(values, details, unknown, mode, context);
  }

  /** A body's known fields by the model's names (itself, unless fields are renamed). */
  private inputOf(body: Row, mode: WriteMode): Row {
    return this.renames ? this.renamed(body, mode === 'create' ? this.creatable : this.updatable) : body;
  }

  /** The parsed values, or 400 with the fields' errors and the unknown names; a create's defaults filled in. */
  private parsedBody(values: Row, details: ErrorDetails | undefined, unknown: readonly string[], mode: WriteMode, context: WriteContext): Row {
    if ((details && Object.keys(details).length > 0) || unknown.length > 0) {
      throw validationFailed({ ...(details && this.shownDetails(details)), ...Object.fromEntries(unknown.map((name) => [name, [UNKNOWN_FIELD]])) });
    }
    if (mode === 'create') {
      for (const [name, field] of this.defaulted) {
        if (!(name in values)) values[name] = field.default!(context);
      }
    }
    return values;
  }

  /**
   * The body's writable fields, then its relations, from the `from`th on, parsed into `values`
   * (their errors into `details`), in order. Synchronous while the parses are: only a field that
   * answers later (a password's hash, a permission asked of the user) is awaited, and the rest
   * after it.
   */
  private parseInputs(input: Row, mode: WriteMode, context: WriteContext, values: Row, details: ErrorDetails, from: number): Promise<void> | undefined {
    const { writable, relationInputs } = this;
    for (let index = from; index < writable.length + relationInputs.length; index++) {
      const name = index < writable.length ? writable[index]! : relationInputs[index - writable.length]!;
      let parsed: unknown;
      try {
        parsed = index < writable.length ? this.parseField(input, name, mode, context, details) : this.parseRelation(input, name, mode, context, details);
      } catch (error) {
        details[name] = fieldErrors(error);
        continue;
      }
      if (parsed === SKIPPED) continue;
      if (!isPending(parsed)) {
        values[name] = parsed;
        continue;
      }
      return this.parsedLater(index, parsed, input, mode, context, values, details);
    }
    return undefined;
  }

  /** The `index`th input's value once it answers (or its errors), then the inputs after it. */
  private parsedLater(index: number, pending: Promise<unknown>, input: Row, mode: WriteMode, context: WriteContext, values: Row, details: ErrorDetails): Promise<void> {
    const { writable, relationInputs } = this;
    const name = index < writable.length ? writable[index]! : relationInputs[index - writable.length]!;
    return Promise.resolve(pending)
      .then(
        (value) => {
          values[name] = value;
        },
        (error: unknown) => {
          details[name] = fieldErrors(error);
        },
      )
      .then(() => this.parseInputs(input, mode, context, values, details, index + 1));
  }

  /** A writable model field's value from the body; SKIPPED when the body does not set it (noting it in `details` when it must). */
  private parseField(input: Row, name: string, mode: WriteMode, context: WriteContext, details: ErrorDetails): unknown {
    const field = this.model.fields[name]!;
    if (this.sends(input, name)) return this.parseValue(field, input[name], context);
    if (field.required === 'always' ? mode !== 'partial_update' : field.required === 'create' && mode === 'create') details[name] = [REQUIRED];
    return SKIPPED;
  }

  /** A relation's value from the body (its ids, slugs or slug); SKIPPED as parseField. */
  private parseRelation(input: Row, name: string, mode: WriteMode, context: WriteContext, details: ErrorDetails): unknown {
    const { slug, slugs, maxItems } = this.relations[name]!;
    if (!this.sends(input, name)) {
      // A slug stands for its key: required where the key is, unless the key is sent itself.
      const key = slug && this.model.fields[slug.source]!;
      if (key?.required === 'always' && mode !== 'partial_update' && !this.sends(input, slug!.source)) details[name] = [REQUIRED];
      return SKIPPED;
    }
    // The slug names a record: the target field's rules are for writing it, not for finding it.
    if (slug) return this.parseValue({ ...slug.target.fields[slug.field]!, nullable: this.model.fields[slug.source]!.nullable }, input[name], context, false);
    return slugs ? parseRelatedSlugs(slugs.target.fields[slugs.field]!, input[name], maxItems) : parseRelatedIds(input[name], maxItems);
  }

  /**
   * The fields of `body` (by the names clients see) this request may not write (`writableBy`), each
   * with its message; undefined when there are none. On an update, a field sent with the value
   * `existing` has is no write of it; the permission is asked of that record too. At once unless a
   * field is sent that some permission answers later.
   */
  refusedWrites(body: unknown, context: PermissionContext, existing?: Row): MaybePromise<ErrorDetails | undefined> {
    if (this.writableBy.size === 0 || typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
    const sent = [...this.writableBy].filter(([name]) => {
      const key = this.shown(name);
      return this.sends(body as Row, name, key) && !(existing && this.keeps(name, (body as Row)[key], existing));
    });
    return sent.length === 0 ? undefined : this.refusals(sent, context, existing);
  }

  private async refusals(sent: readonly (readonly [string, Permission])[], context: PermissionContext, existing: Row | undefined): Promise<ErrorDetails | undefined> {
    const details = emptyDetails();
    for (const [name, permission] of sent) {
      const allowed = (await permission.hasPermission(context)) && (!existing || ((await permission.hasObjectPermission?.(context, existing)) ?? true));
      if (!allowed) details[this.shown(name)] = [`You may not set this field: it needs ${permission.description}.`];
    }
    return Object.keys(details).length > 0 ? details : undefined;
  }

  /** Whether `value`, sent for the model field `name`, is the value `existing` has (compared as both render). */
  private keeps(name: string, value: unknown, existing: Row): boolean {
    const field = this.model.fields[name];
    if (!field || !(name in existing)) return false;
    let parsed: unknown;
    try {
      parsed = value === null ? null : field.parse(value);
    } catch {
      return false;
    }
    // A value that answers later (a password's hash) is never the stored one.
    if (isPending(parsed)) return false;
    const rendered = (stored: unknown): string => JSON.stringify(stored === null ? null : field.render(stored), (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
    return rendered(parsed) === rendered(existing[name]);
  }

  /** Whether an update must validate the record as a whole (its own `validate`, or the collection's: `also`). */
  validatesObjects(also?: ObjectValidator): boolean {
    return this.options.validate !== undefined || also !== undefined;
  }

  /**
   * The model's fields of a stored record, as object validation sees them: each as a body's value
   * of it parses (a timestamp a Date, a JSON field its document, a boolean true or false), as a
   * create's values are, whatever form the driver handed it back in (SQLite gives text and 0/1).
   */
  storedFields(existing: Row): Row {
    const record: Row = {};
    for (const [name, field] of Object.entries(this.model.fields)) {
      if (name in existing) record[name] = asParsed(field, existing[name]);
    }
    return record;
  }

  /**
   * The serializer's `validate`, then `also` (the collection's), on the values (over the stored
   * record's fields, on an update): 400 with what both found, as field errors are.
   */
  validateObject(values: Row, context: ObjectContext, also?: ObjectValidator): Promise<void> | undefined {
    // Without validators nothing is built (the record, the list of validators, a promise apiece), and there is nothing to await.
    return this.validatesObjects(also) ? this.validateRecord(values, context, also) : undefined;
  }

  private async validateRecord(values: Row, context: ObjectContext, also?: ObjectValidator): Promise<void> {
    const record = { ...(context.existing && this.storedFields(context.existing)), ...values };
    const details: ErrorDetails = {};
    for (const validate of [this.options.validate, also]) {
      for (const [field, messages] of Object.entries((await validate?.(record, context)) ?? {})) {
        if (messages?.length) (details[field] ??= []).push(...messages);
      }
    }
    throwIfInvalid(this.shownDetails(details));
  }

  /** A body's known names (`known`) by the model's names: each shown name as the field it shows. */
  private renamed(body: Row, known: ReadonlySet<string>): Row {
    return Object.fromEntries(Object.entries(body).flatMap(([name, value]) => (known.has(name) ? [[this.fieldNames.get(name) ?? name, value]] : [])));
  }

  /** Whether a body sets `name` (sent as `key`; a hidden field sent as null counts as not sent). */
  private sends(input: Row, name: string, key = name): boolean {
    return Object.hasOwn(input, key) && !(this.hidden.has(name) && input[key] === null);
  }

  /** How many records of a body (an object, or a bulk create's array) set a hashed field. */
  hashingsIn(body: unknown): number {
    if (this.hashed.length === 0) return 0;
    const records: unknown[] = Array.isArray(body) ? body : [body];
    return records.filter(
      (record) => typeof record === 'object' && record !== null && this.hashed.some((name) => this.sends(record as Row, name, this.shown(name))),
    ).length;
  }

  /**
   * The value parsed, held to the field's declared rules (unless `validated` is false), and checked
   * where it names a user: at once, unless any of them answers later.
   */
  private parseValue(field: Field, value: unknown, context: WriteContext, validated = true): unknown {
    if (value === null) {
      if (field.nullable) return null;
      throw new FieldError('This field may not be null.');
    }
    const parsed = field.parse(value);
    const validate = validated ? field.validate : undefined;
    // Whether a referenced record exists is the foreign key constraint's to say, when the record is
    // written (src/store/writes.ts): after this, so naming an unknown user says no more than naming another one.
    if (isPending(parsed)) {
      return Promise.resolve(parsed).then(async (parsed) => {
        await validate?.(parsed);
        return requestingUserChecked(field, parsed, context);
      });
    }
    const validating = validate?.(parsed);
    if (isPending(validating)) return validating.then(() => requestingUserChecked(field, parsed, context));
    return requestingUserChecked(field, parsed, context);
  }
}

/**
 * A stored value as parsing its rendering gives it; the stored value itself where that is no value
 * a body could send (a password's hash, a file's record) or parses only later.
 */
function asParsed(field: Field, stored: unknown): unknown {
  if (stored === null || stored === undefined || field.writeOnly || field.file) return stored;
  try {
    const parsed = field.parse(field.render(stored));
    return isPending(parsed) ? stored : parsed;
  } catch {
    return stored;
  }
}

/** What is not taken from a body (a field it does not set). */
const SKIPPED = Symbol('skipped');

/** `id`, once checkRequestingUser passed: at once when the field names no requesting user, or names them. */
function requestingUserChecked(field: Field, id: unknown, context: WriteContext): unknown {
  const only = field.requestingUserOnly;
  if (!only || id === context.userId) return id;
  return checkRequestingUser(field, id, context).then(() => id);
}

/** A key that may name only the requesting user (unless they hold a permission): throws FieldError when it names another. */
export async function checkRequestingUser(field: Field, id: unknown, context: WriteContext): Promise<void> {
  const only = field.requestingUserOnly;
  if (only && id !== context.userId && !(await context.hasPermission(only.unless))) {
    throw new FieldError(`You may only name yourself here, unless you hold the permission "${only.unless}".`);
  }
}

const listOf = (text: string | undefined): string[] | undefined =>
  text === undefined || text.trim() === '' ? undefined : text.split(',').map((name) => name.trim()).filter(Boolean);

const narrowed = new WeakMap<Serializer, Map<string, Serializer>>();
/** Field choices kept per serializer. */
const CHOICES = 100;

/**
 * The serializer narrowed by the request's `fields` and `omit` parameters (400 for names it does not
 * have). Each choice is narrowed once and kept: the record query is compiled and kept for its
 * selection, so a new one per request would compile it again every time.
 */
export function chosenFields(serializer: Serializer, parameters: ReadonlyMap<string, string>): Serializer {
  const include = listOf(parameters.get('fields'));
  const exclude = listOf(parameters.get('omit')) ?? [];
  if (include === undefined && exclude.length === 0) return serializer;
  let choices = narrowed.get(serializer);
  if (!choices) narrowed.set(serializer, (choices = new Map()));
  return cached(choices, JSON.stringify([include, exclude]), CHOICES, () => serializer.narrow(include, exclude));
}

/**
 * A serializer of `model`: its fields in order, read-only and write-only ones, nested records, relations,
 * computed fields, renames, object validation (docs/guides/serializers-and-fields.md).
 */
export const serializer = (model: Model, options: SerializerOptions): Serializer => new Serializer(model, options);
