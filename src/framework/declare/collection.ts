/**
 * A collection: a serializer plus the policies of one resource (filters,
 * ordering, page sizes, permissions). Everything is checked once, here, at
 * start-up, so a request never meets a declaration error.
 */
import type { Field, Lookup } from '../../core/fields.js';
import type { Across, Condition, ListSource, Ordering } from '../../core/list-query.js';
import type { CountMode } from '../../core/list-query.js';
import { automaticIndex, type IndexFacts } from '../../core/schema.js';
import { assertCustomActions, PATH_SEGMENT, type CustomAction } from './custom-action.js';
import type { Hooks } from './hooks.js';
import { recordKey, type RecordKey } from './record-key.js';
import { actions as allActions, type Action, type Permission } from './permission-classes.js';
import { relatedFilter } from './relations.js';
import { assertScope, whereConditions, type RequestContext, type Scope, type ScopeConditions } from './scope.js';
import type { RecordId } from '../../store/read/records.js';
import type { AuthUser } from '../base/auth-user.js';
import type { ObjectValidator, Serializer, WriteMode } from './serializer.js';
import { API_REPRESENTATIONS, assertRenderers, type Renderer, type Representation } from './renderer.js';

/** A list's pagination class: page numbers (the default), limit and offset, an opaque cursor, or none. */
export type Pagination = 'page' | 'limit_offset' | 'cursor' | 'none';

/** The kinds of index a collection's declarations bring with them. */
export type AutomaticIndexes = 'fields' | 'search';
const AUTOMATIC_INDEXES: readonly AutomaticIndexes[] = ['fields', 'search'];

/** A collection's declaration: its serializer, and everything else optional (`collection(name, options)`). */
export interface CollectionOptions {
  serializer: Serializer;
  /**
   * Serializers in place of `serializer` for the built-in actions named (DRF's `get_serializer_class`):
   * `{ list: articleListSerializer }`. Over the same model; custom actions read their record with `serializer`.
   */
  serializers?: Partial<Readonly<Record<Action, Serializer>>>;
  /**
   * The serializer for each request, chosen from what it is (DRF's `get_serializer_class` reading
   * `self.request`): `{ among: [staffEvents], choose: ({ action, user }) => (user?.isSuperuser ? staffEvents : undefined) }`.
   * `choose` answers at once, one of `among`, or undefined for the action's own (`serializers`, else `serializer`).
   */
  chooseSerializer?: SerializerChoice;
  /**
   * The built-in actions the collection serves (DRF's viewset mixins; `['list', 'retrieve']` is a
   * ReadOnlyModelViewSet). Default: all six. The others are absent: no route, no document, no form.
   */
  builtInActions?: readonly Action[];
  /** `partial`: PUT validates as PATCH does, every field optional (Conduit's PUT). Default `replace`. */
  put?: 'replace' | 'partial';
  /** What a create answers: 201 with `Location` (the default), or 200 without it (Conduit's comments). */
  createStatus?: 200 | 201;
  /**
   * Fields that may be filtered: a list (every lookup that fits each type) or field → lookups. Besides
   * the model's fields: a serializer's relation (`tags`: by related id, `exact` and `in`) and a field
   * of a nested record (`author__username`), matched through EXISTS over the related rows.
   */
  filterFields?: readonly string[] | Readonly<Record<string, readonly Lookup[]>>;
  /**
   * Filters named by the app, each a path to a field through foreign keys and relations, ending
   * in an optional lookup: `{ author: 'author_id__username', tag: 'tag_list__has_element' }`
   * (`?author=jake`). See named-filters.ts.
   */
  filters?: Readonly<Record<string, string>>;
  /** Fields the `ordering` parameter may name; `id` is always allowed besides. */
  orderingFields?: readonly string[];
  /** Used when a request gives no `ordering`, e.g. `['-created_at']`; ties always fall back to `id`. */
  defaultOrdering?: readonly string[];
  pageSize?: number;
  maxPageSize?: number;
  /**
   * The longest text a filter's value may be, in characters. Default: a string field compared whole
   * (`exact`, `in`, `gte`...) takes any value it can hold (its maxLength, at least 200; unbounded
   * without one, but for the query string's own limit); a pattern (`icontains`...) at most 200
   * (docs/query-language.md). Set, it bounds them all: the example service's 200 (SPEC).
   */
  maxFilterLength?: number;
  /** Counts a client may prefer over the exact one (`Prefer: count=estimated` or `count=none`). */
  countModes?: readonly ('estimated' | 'none')[];
  /** Below this many estimated records, `count=estimated` counts exactly (default 10 000). */
  estimateThreshold?: number;
  /**
   * `page` (`?page=&page_size=`), `limit_offset` (`?limit=&offset=`, DRF's LimitOffsetPagination),
   * or `cursor`: pages by opaque cursors, stable under inserts and without counting, for very
   * large collections (ordering fields must then be indexed and not nullable); or `none` (DRF's
   * `pagination_class = None`): the list is a plain JSON array of at most `maxPageSize` records,
   * more matching being a 400 that asks for narrower filters. Default: the app's `pagination`,
   * else `page` (docs/api-style.md).
   */
  pagination?: Pagination;
  /** How this collection's lists, records and bodies are wrapped, in place of the app's (docs/api-style.md). */
  envelope?: Envelope;
  /** Accept a JSON array on POST: created in one transaction, all or nothing, at most `max` records. */
  bulkCreate?: { max: number };
  /**
   * DELETE on the list path deletes every record the list's filters (and `search`) select, within the
   * scope, in one statement, with the `destroy` action's permissions; 204. `filtered`: a DELETE naming
   * no filter is a 400; `all`: it deletes every record the request may reach. Needs the destroy
   * action; refused for a collection with delete hooks, which see each record (docs/guides/collections-and-actions.md).
   */
  bulkDelete?: BulkDelete;
  /** Checks for every action, or per action; actions left out get the API's default. */
  permissions?: readonly Permission[] | Partial<Readonly<Record<Action, readonly Permission[]>>>;
  /**
   * Indexes this collection's lists need beyond the ones its declarations bring (one per filter or
   * ordering field, a trigram one per search field): composite ones, say a filter then an ordering, tie-broken by `id`.
   */
  indexes?: readonly IndexFacts[];
  /**
   * Which indexes the declarations bring: a B-tree per filter or ordering field (`fields`), a
   * trigram GIN per search field on PostgreSQL (`search`); both by default. Each costs every write
   * (docs/performance.md, what an index costs): `{ search: false }` where a search may scan.
   */
  automaticIndexes?: Readonly<Partial<Record<AutomaticIndexes, boolean>>>;
  /**
   * Which records a request may reach, built from it (and awaited, when it answers later):
   * `({ user }) => ({ owner_id: user?.id ?? null })`. Applies to every read and write of the
   * collection (a record outside it is 404, a write that would leave it 403), and to the table's
   * rows wherever else a request reaches them (docs/guides/permissions-and-scopes.md, Row-level security).
   */
  scope?: Scope;
  /**
   * Fixed conditions on what the collection itself lists, shows and writes (DRF's
   * `queryset = Tag.objects.filter(...)`): `{ archived: false }`, or filters and storeConditions.
   * Unlike a scope, the rows it leaves out stay visible wherever else a request reaches them (a
   * relation naming them, another collection): a way to choose what an endpoint serves, not a rule
   * of who may see what.
   */
  where?: ScopeConditions;
  /** Code run before and after each write (see hooks.ts). */
  hooks?: Hooks;
  /** Whole-object validation, as the serializer's `validate` (after it, when both are set; what both find is reported together). */
  validate?: ObjectValidator;
  /** Endpoints of the collection's own, by name: `/<name>/{id}/<action>/` or `/<name>/<action>/`. */
  actions?: Readonly<Record<string, CustomAction>>;
  /**
   * Mounts the collection under one record of another (`/<parent>/{parent}/<name>/` only), scoped to
   * it: `{ collection: articles, field: 'article_id' }`. The field is set from the path (see nested.ts).
   */
  parent?: Parent;
  /** The unique field detail paths name a record by, in place of `id` (`/articles/{slug}/`); see record-key.ts. */
  recordKey?: string;
  /**
   * A singleton resource (DRF's RetrieveUpdateAPIView with its own get_object()): the one record a
   * request reaches, by id, chosen from the request: `({ user }) => user?.id` serves the caller's own
   * at `/<name>/` (GET, PUT, PATCH; DELETE only when `builtInActions` names `destroy`). No list, no
   * create; nothing chosen (an anonymous caller) is 401, an id of no record 404.
   */
  singleton?: Singleton;
  /**
   * Live changes: `GET /<name>/events/` (or the options' `path`) streams the changes to the records each subscriber may list,
   * as Server-Sent Events, with the list's permissions, scope and filters (docs/guides/live-changes.md,
   * Live changes). `true`, or the options.
   */
  live?: boolean | LiveOptions;
  /**
   * Representations beside JSON and the browsable page, negotiated as they are (`Accept`,
   * `?format=`): `[csvRenderer]` (CSV, as DRF's rest_framework_csv), or the app's own,
   * `{ mediaType: 'application/x-ndjson', format: 'ndjson', lists: 'all', render }`
   * (declare/renderer.ts, docs/guides/collections-and-actions.md).
   */
  renderers?: readonly Renderer[];
}

/**
 * A live collection's stream: its path segment and how many ids it tracks per subscriber
 * (docs/guides/live-changes.md).
 */
export interface LiveOptions {
  /**
   * How many record ids a stream remembers having shown its subscriber (default 1000), so that a
   * record leaving what they may see arrives as `deleted` and one entering as `created`. Past it,
   * a record they cannot see when it changes arrives as `deleted` with its id alone.
   */
  readonly track?: number;
  /** The stream's path segment under the list's path (default `events`): `stream` serves a collection named `events` at `/events/stream/`. */
  readonly path?: string;
}

const DEFAULT_TRACK = 1000;

function liveOptions(name: string, { live, bulkCreate, actions = {} }: CollectionOptions): Required<LiveOptions> | undefined {
  if (!live) return undefined;
  const { track = DEFAULT_TRACK, path = 'events' } = live === true ? {} : live;
  if (!Number.isInteger(track) || track < 0) throw new Error(`${name}: live.track must be a whole number of record ids.`);
  if (typeof path !== 'string' || !PATH_SEGMENT.test(path)) throw new Error(`${name}: live.path "${String(path)}" must match ${PATH_SEGMENT}.`);
  const listActions = Object.entries(actions).flatMap(([action, { detail, path: at }]) => (detail ? [] : [at ?? action]));
  if ((bulkCreate && path === 'bulk') || listActions.includes(path)) throw new Error(`${name}: live.path "${path}" is another route's path under the list; choose another.`);
  return { track, path };
}

/** What a collection's serializer is chosen by (CollectionOptions.chooseSerializer): the request's action and user. */
export interface SerializerContext {
  /** The built-in action, or the one a custom action stands for. */
  readonly action: Action;
  readonly user: AuthUser | null;
  /** The API version the request names, where the app declares versions. */
  readonly version?: string;
}

/** A serializer chosen per request, among those declared (every one is known at start-up: the document, the forms, the scopes' plan). */
export interface SerializerChoice {
  readonly among: readonly Serializer[];
  /** Called for each use within the request: answer from the context alone. */
  readonly choose: (context: SerializerContext) => Serializer | undefined;
}

/** What a DELETE on a collection's list path may delete: what its filters select, or (`all`) with none, everything in scope. */
export type BulkDelete = 'filtered' | 'all';

/** A singleton collection's record chooser. */
export type Singleton = (context: RequestContext) => RecordId | null | undefined;

/**
 * How a collection's lists, records and request bodies are wrapped, when an API must match one that
 * exists (Conduit's `{"articles": [...], "articlesCount": n}` and `{"article": {...}}`, in and out).
 */
export interface Envelope {
  /** The key one record travels under, in request bodies and responses: `article` → `{"article": {...}}`. */
  readonly record: string;
  /** The key of a list's records (and of a bulk create's, in and out): `articles` → `{"articles": [...]}`. */
  readonly list: string;
  /** The key of a list's count; left out of the list when not named. */
  readonly count?: string;
  /** The keys of a list's next and previous links; each left out when not named. */
  readonly next?: string;
  readonly previous?: string;
}

/** A named filter as a list query applies it: on `field` (a model field, or the filter's own name with `across`), with `lookup`. */
export interface NamedFilter {
  readonly field: string;
  readonly lookup: Lookup;
}

/** A nested collection's parent (DRF's nested routers): mounted under one record of it, `/articles/{parent}/comments/`. */
export interface Parent {
  /** The collection whose records this one is mounted under. */
  readonly collection: Collection;
  /** This model's foreign key to the parent's model: the path sets it, so the serializer may not take it from a body. */
  readonly field: string;
}

/** Refuses, at start-up, a parent this collection cannot be nested under. */
function assertParent(name: string, serializer: Serializer, parent: Parent): void {
  const { model } = parent.collection.serializer;
  if (parent.collection.parent) throw new Error(`${name}: its parent "${parent.collection.name}" is nested itself; nest one level only.`);
  if (serializer.model.fields[parent.field]?.references !== model.table) {
    throw new Error(`${name}: parent field "${parent.field}" must be a foreign key to ${model.table}.`);
  }
  if (serializer.writable.includes(parent.field)) {
    throw new Error(`${name}: "${parent.field}" is set from the path; list it in the serializer's readOnly (or leave it out of its fields).`);
  }
}

/** What a collection's list accepts in its query string: the parsing stage's rules. */
export interface QueryRules {
  readonly fields: Readonly<Record<string, Field>>;
  /** Field name → the lookups it may be filtered with. */
  readonly filters: ReadonlyMap<string, readonly Lookup[]>;
  /** Filters named by the app (named-filters.ts): parameter → the field and lookup it applies. */
  readonly named?: ReadonlyMap<string, NamedFilter>;
  readonly ordering: readonly string[];
  readonly defaultOrdering: readonly Ordering[];
  readonly pageSize: number;
  readonly maxPageSize: number;
  /** CollectionOptions.maxFilterLength. */
  readonly maxFilterLength?: number;
}

/** A declared collection, as `collection()` makes it; listed in `defineApp({ collections })`. */
export interface Collection {
  readonly name: string;
  readonly serializer: Serializer;
  /**
   * The serializer a request reads, validates and renders with: the one `chooseSerializer` chooses
   * for it, else the action's own from `serializers`, else `serializer`.
   */
  serializerFor(context: SerializerContext): Serializer;
  /** Every serializer a request of `action` may get, the action's own first, each once. */
  serializersFor(action: Action): readonly Serializer[];
  /** Every serializer of the collection, `serializer` first, each once. */
  readonly serializers: readonly Serializer[];
  /** The built-in actions it serves. */
  readonly builtInActions: ReadonlySet<Action>;
  /** How PUT validates a body: `update` (every required field) or `partial_update`. */
  readonly putMode: WriteMode;
  readonly createStatus: 200 | 201;
  readonly queryRules: QueryRules;
  readonly listSource: ListSource;
  /** undefined: the app's (buildApp fills it in). */
  readonly pagination: Pagination | undefined;
  readonly envelope: Envelope | undefined;
  readonly countModes: readonly CountMode[];
  readonly estimateThreshold: number;
  /** The most records one bulk create may carry; undefined when the collection takes one object only. */
  readonly bulkCreateMax: number | undefined;
  /** Whether DELETE on the list path deletes what its filters select (undefined: it is not served). */
  readonly bulkDelete: BulkDelete | undefined;
  /** The indexes of its model's table its lists need (framework/schema.ts puts them in the app's migrations). */
  readonly indexes: readonly IndexFacts[];
  /** The collection's own checks for an action, if it set any. */
  permissionsFor(action: Action): readonly Permission[] | undefined;
  readonly scope: Scope | undefined;
  /** The declaration's `where`, checked. */
  readonly where: readonly Condition[] | undefined;
  readonly hooks: Hooks;
  readonly validate: ObjectValidator | undefined;
  readonly customActions: Readonly<Record<string, CustomAction>>;
  /** The record this collection is mounted under, when it is nested. */
  readonly parent: Parent | undefined;
  /** How a detail path names a record: by `id`, or by the collection's record key. */
  readonly recordKey: RecordKey;
  /** Filters named by the app, by parameter: their paths, resolved by buildApp against the app's models (named-filters.ts). */
  readonly namedFilters: Readonly<Record<string, string>>;
  /** Set for a singleton resource (CollectionOptions.singleton). */
  readonly singleton: Singleton | undefined;
  /** Set when the collection streams its changes (`/<name>/events/`). */
  readonly live: Required<LiveOptions> | undefined;
  /** The app's own renderers (CollectionOptions.renderers). */
  readonly renderers: readonly Renderer[];
  /** What its actions may answer in: the API's representations, then its own renderers'. */
  readonly representations: readonly Representation[];
}

const RESOURCE_NAME = /^[a-z][a-z0-9_-]*$/;

/** A user deleting their own record is a choice to make, not a default: a singleton serves `destroy` only when `builtInActions` names it. */
const singletonActions: readonly Action[] = ['retrieve', 'update', 'partial_update'];

/** A singleton has no list, no record key segment and no parent: declarations that need one are refused. */
function assertSingleton(name: string, options: CollectionOptions): void {
  const refused = [
    options.parent && 'parent',
    options.bulkCreate && 'bulkCreate',
    options.bulkDelete && 'bulkDelete',
    options.recordKey && options.recordKey !== 'id' && 'recordKey',
    Object.values(options.actions ?? {}).some((action) => action.detail) && 'detail actions',
    Object.values(options.actions ?? {}).some((action) => action.where !== undefined) && 'actions with where (a page of the list)',
    ...(options.builtInActions ?? []).filter((action) => action === 'list' || action === 'create'),
  ].filter(Boolean);
  if (refused.length > 0) throw new Error(`${name}: a singleton collection has one record and no record key segment: ${refused.join(', ')} cannot apply.`);
}

/**
 * A bulk delete is one statement, which reads no record: hooks that see each deleted record
 * (beforeDelete, afterDelete, and afterCommit, told of each delete) could not run, so they refuse it.
 */
function assertBulkDelete(name: string, bulkDelete: BulkDelete, served: ReadonlySet<Action>, hooks: Hooks): void {
  if (bulkDelete !== 'filtered' && bulkDelete !== 'all') throw new Error(`${name}: bulkDelete must be 'filtered' or 'all'.`);
  if (!served.has('destroy')) throw new Error(`${name}: bulkDelete needs the destroy action.`);
  const seeing = (['beforeDelete', 'afterDelete', 'afterCommit'] as const).filter((hook) => hooks[hook] !== undefined);
  if (seeing.length > 0) throw new Error(`${name}: bulkDelete deletes in one statement, reading no record, so the ${seeing.join(' and ')} hooks could not see what it deletes; leave bulkDelete out or the hooks.`);
}

/**
 * How a request's serializer is found: the choice's, checked to be one it declared (another would
 * read tables the scopes' plan never saw), else the action's own, else the collection's.
 */
function chosenSerializers(
  name: string,
  serializer: Serializer,
  own: Partial<Readonly<Record<Action, Serializer>>>,
  choice: SerializerChoice | undefined,
): (context: SerializerContext) => Serializer {
  if (!choice) return ({ action }) => own[action] ?? serializer;
  if (typeof choice.choose !== 'function' || !Array.isArray(choice.among)) throw new Error(`${name}: chooseSerializer needs \`among\` (the serializers it may choose) and \`choose\`, a function of the request.`);
  const among = new Set(choice.among);
  for (const chosen of among) {
    if (chosen.model !== serializer.model) throw new Error(`${name}: chooseSerializer's serializer "${chosen.name}" is over "${chosen.model.table}", not "${serializer.model.table}".`);
  }
  return (context) => {
    const chosen = choice.choose(context);
    if (chosen === undefined) return own[context.action] ?? serializer;
    if (!among.has(chosen)) throw new Error(`${name}: chooseSerializer chose the serializer "${chosen.name}", which is not among those it declared.`);
    return chosen;
  };
}

/**
 * A collection: a model served as an API resource at `/<prefix>/<name>/`, with the six built-in actions
 * (list, retrieve, create, update, partial update, destroy) unless `builtInActions` says otherwise
 * (docs/guides/collections-and-actions.md).
 */
export function collection(name: string, options: CollectionOptions): Collection {
  const { serializer } = options;
  const modelFields = serializer.model.fields;
  if (!RESOURCE_NAME.test(name)) throw new Error(`Collection name "${name}" must match ${RESOURCE_NAME}.`);

  const filters = new Map<string, readonly Lookup[]>();
  const filterFields = options.filterFields ?? [];
  const relatedFields: Record<string, Field> = {};
  const across: Record<string, Across> = {};
  for (const field of Array.isArray(filterFields) ? (filterFields as readonly string[]) : Object.keys(filterFields)) {
    const related = modelFields[field] ? undefined : relatedFilter(serializer, field);
    if (!related) continue;
    relatedFields[field] = { ...related.field, lookups: related.lookups };
    across[field] = related.across;
  }
  const internal = [...(Array.isArray(filterFields) ? (filterFields as readonly string[]) : Object.keys(filterFields)), ...(options.orderingFields ?? [])].filter((field) =>
    serializer.model.rules?.internal?.includes(field),
  );
  if (internal.length > 0) throw new Error(`${name}: cannot filter or order by ${internal.join(', ')}: only the framework reads them.`);
  const filterable = { ...modelFields, ...relatedFields };
  const entries = Array.isArray(filterFields)
    ? (filterFields as readonly string[]).map((field) => [field, filterable[field]?.lookups ?? []] as const)
    : Object.entries(filterFields as Readonly<Record<string, readonly Lookup[]>>);
  for (const [field, lookups] of entries) {
    const declared = filterable[field];
    if (!declared || declared.writeOnly) throw new Error(`${name}: cannot filter on "${field}".`);
    const unfit = lookups.filter((lookup) => !declared.lookups.includes(lookup));
    if (unfit.length > 0) throw new Error(`${name}: lookups ${unfit.join(', ')} do not fit "${field}".`);
    filters.set(field, lookups);
  }

  // `id` breaks every tie and is always indexed, so it is always allowed (as clients such as react-admin's ask).
  const ordering = [...new Set(['id', ...(options.orderingFields ?? [])])];
  // A SQL-backed computed field is a column of the page's own statement, so it may be ordered by (not by keyset).
  const aggregated = (field: string): boolean => serializer.fields.includes(field) && serializer.computed[field]?.aggregate !== undefined;
  for (const field of ordering) {
    // A keyset compares the boundary with an indexed column; an aggregate would be computed for every row before it.
    if (aggregated(field) && options.pagination === 'cursor') {
      throw new Error(`${name}: cursor pagination cannot order by "${field}", a SQL-backed computed field (no index serves it); page by number to order by it.`);
    }
    if (aggregated(field)) continue;
    // A JSON document has no order the two databases share (jsonb's, or its text's).
    if (!modelFields[field] || modelFields[field].writeOnly || modelFields[field].valueType === 'json') throw new Error(`${name}: cannot order by "${field}".`);
  }
  const defaultOrdering: Ordering[] = (options.defaultOrdering ?? []).map((term) => {
    const descending = term.startsWith('-');
    const field = descending ? term.slice(1) : term;
    if (!modelFields[field]) throw new Error(`${name}: cannot order by "${field}".`);
    return { field, descending };
  });

  if (options.pagination === 'cursor') {
    const nullable = [...ordering, ...defaultOrdering.map(({ field }) => field)].filter((field) => modelFields[field]!.nullable);
    if (nullable.length > 0) throw new Error(`${name}: cursor pagination cannot order by nullable fields (${nullable.join(', ')}).`);
  }

  const pageSize = options.pageSize ?? 20;
  const maxPageSize = options.maxPageSize ?? 100;
  if (pageSize < 1 || maxPageSize < pageSize) throw new Error(`${name}: need 1 <= pageSize <= maxPageSize.`);
  const { maxFilterLength } = options;
  if (maxFilterLength !== undefined && (!Number.isInteger(maxFilterLength) || maxFilterLength < 1)) throw new Error(`${name}: maxFilterLength must be a whole number of characters, at least 1.`);

  const permissions = options.permissions;
  if (options.singleton) assertSingleton(name, options);
  assertScope(name, options.scope);
  const served = new Set(options.builtInActions ?? (options.singleton ? singletonActions : allActions));
  const unknown = [...served].filter((action) => !allActions.includes(action));
  if (unknown.length > 0) throw new Error(`${name}: unknown built-in actions ${unknown.join(', ')} (of ${allActions.join(', ')}).`);
  // A check declared for an action left out would never run: a sign the declaration says something else than meant.
  const leftOut = permissions && !Array.isArray(permissions) ? Object.keys(permissions).filter((action) => !served.has(action as Action)) : [];
  if (leftOut.length > 0) throw new Error(`${name}: permissions for ${leftOut.join(', ')}, which the collection does not serve (builtInActions).`);
  if (options.put !== undefined && options.put !== 'replace' && options.put !== 'partial') throw new Error(`${name}: put must be 'replace' or 'partial'.`);
  if (options.createStatus !== undefined && options.createStatus !== 200 && options.createStatus !== 201) throw new Error(`${name}: createStatus must be 200 or 201.`);
  // Declarations of how an action answers, for an action left out.
  if (options.bulkCreate && !served.has('create')) throw new Error(`${name}: bulkCreate needs the create action.`);
  if (options.live && !served.has('list')) throw new Error(`${name}: live changes are streamed with the list's rules: they need the list action.`);
  if (options.createStatus !== undefined && !served.has('create')) throw new Error(`${name}: createStatus needs the create action.`);
  if (options.bulkDelete !== undefined) assertBulkDelete(name, options.bulkDelete, served, options.hooks ?? {});
  if (options.put !== undefined && !served.has('update')) throw new Error(`${name}: put needs the update action.`);
  const ownSerializers = options.serializers ?? {};
  for (const [action, own] of Object.entries(ownSerializers)) {
    if (!allActions.includes(action as Action)) throw new Error(`${name}: serializers names "${action}", no built-in action (of ${allActions.join(', ')}).`);
    if (!served.has(action as Action)) throw new Error(`${name}: a serializer for ${action}, which builtInActions leaves out.`);
    if (own.model !== serializer.model) throw new Error(`${name}: the serializer for ${action} is over "${own.model.table}", not "${serializer.model.table}".`);
  }
  const serializerFor = chosenSerializers(name, serializer, ownSerializers, options.chooseSerializer);
  const among = options.chooseSerializer?.among ?? [];
  const automatic = options.automaticIndexes ?? {};
  const unknownIndexes = Object.keys(automatic).filter((kind) => !AUTOMATIC_INDEXES.includes(kind as AutomaticIndexes));
  if (unknownIndexes.length > 0) throw new Error(`${name}: automaticIndexes names ${unknownIndexes.join(', ')} (of ${AUTOMATIC_INDEXES.join(', ')}).`);
  // A key or a unique column is indexed already; a computed field is no column.
  const indexed = [...new Set([...filters.keys(), ...ordering])].filter((field) => field !== 'id' && modelFields[field] && !modelFields[field].unique);
  const indexes: IndexFacts[] = [
    ...(automatic.fields === false ? [] : indexed.flatMap((field) => automaticIndex(field, modelFields[field]!.column) ?? [])),
    ...(automatic.search === false ? [] : serializer.search.map((field) => ({ columns: [field], trigram: true }))),
    ...(options.indexes ?? []),
  ];
  const renderers = options.renderers ?? [];
  assertRenderers(name, renderers);
  const actions = options.actions ?? {};
  assertCustomActions(name, actions, filterable);
  if (options.parent) assertParent(name, serializer, options.parent);
  // `/<name>/bulk/` and the list actions' paths take these segments from records' key values.
  const live = liveOptions(name, options);
  const taken = [...(options.bulkCreate ? ['bulk'] : []), ...(live ? [live.path] : []), ...Object.entries(actions).flatMap(([name, action]) => (action.detail ? [] : [action.path ?? name]))];
  return {
    name,
    serializer,
    serializerFor,
    serializersFor: (action) => [...new Set([ownSerializers[action] ?? serializer, ...among])],
    serializers: [...new Set([serializer, ...Object.values(ownSerializers), ...among])],
    builtInActions: served,
    putMode: options.put === 'partial' ? 'partial_update' : 'update',
    createStatus: options.createStatus ?? 201,
    queryRules: { fields: filterable, filters, ordering, defaultOrdering, pageSize, maxPageSize, maxFilterLength },
    listSource: { selection: serializer.selection, fields: filterable, searchFields: serializer.search, across },
    pagination: options.pagination,
    envelope: options.envelope,
    countModes: ['exact', ...(options.countModes ?? [])],
    estimateThreshold: options.estimateThreshold ?? 10_000,
    bulkCreateMax: options.bulkCreate?.max,
    bulkDelete: options.bulkDelete,
    indexes,
    scope: options.scope,
    where: options.where && whereConditions(name, filterable, options.where),
    hooks: options.hooks ?? {},
    validate: options.validate,
    customActions: actions,
    parent: options.parent,
    namedFilters: options.filters ?? {},
    recordKey: recordKey(name, serializer.model, options.recordKey ?? 'id', taken),
    singleton: options.singleton,
    live,
    renderers,
    representations: [...API_REPRESENTATIONS, ...renderers.map(({ mediaType, format }) => ({ mediaType, format }))],
    permissionsFor: (action) =>
      permissions === undefined ? undefined : Array.isArray(permissions) ? permissions : (permissions as Partial<Record<Action, readonly Permission[]>>)[action],
  };
}

const versionViews = new WeakMap<Collection, Map<string, Collection>>();

/**
 * The collection as a request of `version` sees it: each action's serializer that version's
 * (Serializer.forVersion), made once per version. Its `serializer` stays the declared one, which
 * says what may be filtered and ordered by and reads a custom action's record.
 */
export function atVersion(collection: Collection, version: string | undefined): Collection {
  if (version === undefined || !collection.serializers.some(({ versions }) => versions.includes(version))) return collection;
  let views = versionViews.get(collection);
  if (!views) versionViews.set(collection, (views = new Map()));
  let view = views.get(version);
  if (!view) {
    view = {
      ...collection,
      serializerFor: (context) => collection.serializerFor(context).forVersion(version),
      serializersFor: (action) => collection.serializersFor(action).map((serializer) => serializer.forVersion(version)),
    };
    views.set(version, view);
  }
  return view;
}
