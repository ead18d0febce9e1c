/**
 * Computed fields (DRF's `SerializerMethodField`, and annotations): read-only values a serializer
 * shows beside the model's fields. `computed.from` computes one from the row and the request's
 * user; `count`, `exists`, `ids`, `sum`, `avg`, `min` and `max` are SQL-backed: the store computes
 * them over related rows in the page's own statement, so a list stays a fixed number of queries, and
 * they may be ordered by.
 */
import type { FastifyRequest } from 'fastify';
import type { JsonSchema } from '../../core/fields.js';
import type { Aggregate, AggregateValue, NumericAggregate, Row } from '../../core/rows.js';
import type { Table } from '../../core/model.js';
import type { JoinColumns } from '../../store/read/join-rows.js';
import type { AuthUser } from '../base/auth-user.js';
import type { Credentials } from './credentials.js';
import type { FileLinks, FilePlace } from '../base/file-links.js';
import { whereConditions, type ScopeConditions } from './scope.js';
import { User } from './users/user-model.js';

/** What a computed value may look at beside the row. */
export interface RenderContext {
  readonly user: AuthUser | null;
  /** The request's credentials (what `computed.credential()` shows); none in a list, so a list never shows one. */
  readonly credentials?: Credentials;
  /** The request answered: with `links`, what `computed.url()` builds a record's URL from (its origin and router). */
  readonly request?: FastifyRequest;
  /** The URLs of the records of the router that serves the request; none outside a collection's routes. */
  readonly links?: RecordLinks;
  /** The API version the request asked for (the app's `versions`, DRF's `request.version`); undefined when it declares none. */
  readonly version?: string;
  /** How file fields render their signed links; none outside a collection's routes (they render without a url). */
  readonly fileLinks?: FileLinks;
}

/** Records' own URLs, as the router serving a request spells them. */
export interface RecordLinks {
  /** The absolute URL of a record of `table`, from a collection of the router that serves `request`; null when none serves it. */
  recordUrl(request: FastifyRequest, table: string, row: Row): string | null;
  /** Where a record of `table` has its files downloaded (the request's own collection's path, else the first of the router's that serves the table); null when none. */
  filePlace(request: FastifyRequest, table: string, row: Row): FilePlace | null;
}

/** A computed field, as `computed.*` declares it. */
export interface ComputedField {
  /** The value's JSON schema (for the OpenAPI document). */
  readonly schema: JsonSchema;
  /** A value from the row (and the requesting user). */
  readonly compute?: (row: Row, context: RenderContext) => unknown;
  /** The model columns `compute` reads (all but write-only ones when absent), whatever `fields` and `omit` leave shown. */
  readonly reads?: readonly string[];
  /** The only table whose serializers may show it (a credential: the users table's). */
  readonly onlyOn?: string;
  /** SQL-backed: what the store computes (`requestingUser`: only related rows whose column names the requesting user). */
  readonly aggregate?: Omit<Aggregate, 'name' | 'where'> & { readonly requestingUser?: string };
  /** The record's own URL (`computed.url()`), which the serializer builds knowing its table. */
  readonly recordUrl?: true;
}

/**
 * Which related rows: those naming the requesting user in `requestingUser`; those naming the
 * record's `on` column (default its id) in `via`; of those, the ones the request may see
 * (`visibility: 'visible'`, the default) or every one (`'all'`, see docs/guides/serializers-and-fields.md,
 * Row-level security: a hole the app opens knowingly).
 */
export interface RelatedOptions {
  readonly requestingUser?: string;
  readonly on?: string;
  readonly visibility?: AggregateVisibility;
}

/** Which related rows an aggregate counts: those the request may see, or all of them. */
export type AggregateVisibility = 'visible' | 'all';

/** Related rows: those of `table` whose column `via` names the record (or its `on` column). */
function over(kind: Aggregate['kind'], table: string, via: string, { requestingUser, on, visibility = 'visible' }: RelatedOptions = {}): NonNullable<ComputedField['aggregate']> {
  if (visibility !== 'visible' && visibility !== 'all') throw new Error(`computed.${kind} over ${table}: visibility is 'visible' or 'all'.`);
  return {
    kind,
    table,
    via,
    ...(requestingUser && { requestingUser }),
    ...(on && { on }),
    ...(visibility === 'all' && { visibility }),
  };
}

/**
 * What `sum`, `avg`, `min` and `max` aggregate: the related rows' field `of`, or the product of
 * several (`['quantity', 'unit_price']`); only rows meeting `where` (conditions as a collection's
 * `where`: `{ status: 'active' }`, or filters `{ field, lookup, value }`); `default`: the value where
 * no related row is (Django's `Sum(…, default=0)`), else null; `on` and `visibility` as RelatedOptions'.
 */
export interface AggregateOptions {
  readonly of: string | readonly string[];
  readonly where?: ScopeConditions;
  readonly default?: number;
  readonly on?: string;
  readonly visibility?: AggregateVisibility;
}

/** A many-to-many's join table (relations.joinTable's): its `from` names the record, its `to` a related row. */
export type Through = JoinColumns & { readonly target?: string };

/** The numeric column types an aggregate takes, and the value each is. */
const NUMERIC_COLUMNS: Readonly<Record<string, AggregateValue['type']>> = { id: 'integer', integer: 'integer', bigint: 'integer', float: 'float', decimal: 'decimal' };

/** A product's value: a float if any factor is, else a decimal at the sum of its factors' places if any is one, else an integer. */
function productValue(related: Table, of: readonly string[]): AggregateValue {
  const columns = of.map((name) => related.fields[name]!.column);
  const types = columns.map(({ type }) => NUMERIC_COLUMNS[type]);
  if (types.includes('float')) return { type: 'float' };
  if (types.includes('decimal')) return { type: 'decimal', places: columns.reduce((places, column) => places + (column.places ?? 0), 0) };
  return { type: 'integer' };
}

const VALUE_SCHEMAS: Readonly<Record<AggregateValue['type'], JsonSchema>> = {
  integer: { type: 'integer' },
  float: { type: 'number' },
  decimal: { type: 'string', format: 'decimal' },
};

/** sum, avg, min or max over the rows of `related` whose `via` names the record (or those a join table links it to), checked at declaration. */
function numeric(kind: NumericAggregate, related: Table, via: string | Through, options: AggregateOptions): ComputedField {
  const where = `computed.${kind} over ${related.table}`;
  const of = typeof options.of === 'string' ? [options.of] : options.of;
  if (of.length === 0) throw new Error(`${where}: \`of\` names a field, or several to multiply.`);
  for (const name of of) {
    const field = related.fields[name];
    if (!field || field.writeOnly || NUMERIC_COLUMNS[field.column.type] === undefined) throw new Error(`${where}: "${name}" is no numeric field of ${related.table}.`);
  }
  if (typeof via === 'string' && !related.fields[via]) throw new Error(`${where}: "${via}" is no field of ${related.table}.`);
  if (typeof via !== 'string' && via.target !== undefined && via.target !== related.table) throw new Error(`${where}: the join table ${via.table} links to ${via.target}.`);
  if (options.default !== undefined && !Number.isFinite(options.default)) throw new Error(`${where}: \`default\` is a number.`);
  const value = productValue(related, of);
  const conditions = options.where && whereConditions(where, related.fields, options.where);
  const nullable = options.default === undefined;
  // An average of integers is a fraction.
  const schema = VALUE_SCHEMAS[kind === 'avg' && value.type === 'integer' ? 'float' : value.type];
  return {
    schema: nullable ? { ...schema, type: [schema.type as string, 'null'] } : schema,
    aggregate: {
      ...over(kind, related.table, typeof via === 'string' ? via : via.from, { on: options.on, visibility: options.visibility }),
      of,
      value,
      ...(typeof via !== 'string' && { through: { table: via.table, to: via.to } }),
      ...(conditions && conditions.length > 0 && { filter: { fields: related.fields, conditions } }),
      ...(options.default !== undefined && { default: options.default }),
    },
  };
}

/**
 * Read-only fields computed from the row (`from`), or in SQL in the page's own statement (`count`, `exists`,
 * `ids`, `sum`, `avg`, `min`, `max`), and a record's own URL (`url`).
 */
export const computed = {
  /** `(row, { user }) => value`; `schema` types it in the OpenAPI document; `reads` narrows the columns read for it. */
  from: (compute: (row: Row, context: RenderContext) => unknown, options: { schema?: JsonSchema; reads?: readonly string[] } = {}): ComputedField => ({
    schema: options.schema ?? {},
    compute,
    ...(options.reads && { reads: options.reads }),
  }),
  /** How many rows of `table` name the record (or, with `on`, the record's `on` column) in `via`. */
  count: (table: string, via: string, options: RelatedOptions = {}): ComputedField => ({
    schema: { type: 'integer', minimum: 0 },
    aggregate: over('count', table, via, options),
  }),
  /**
   * Whether a row of `table` names the record in `via` (and, with `requestingUser`, the requesting
   * user in that column); with `on`, the record's `on` column in place of its id (whether the
   * requesting user follows the record's `author_id`, say).
   */
  exists: (table: string, via: string, options: RelatedOptions = {}): ComputedField => ({
    schema: { type: 'boolean' },
    aggregate: over('exists', table, via, options),
  }),
  /**
   * The user record's credential, as the caller may see it: one the request issued for that user
   * (credentials.issue, at registration or login), or the one the caller presented when the record
   * is their own; else null, and always null in a list.
   */
  credential: (): ComputedField => ({
    schema: { type: ['string', 'null'], description: 'A credential the request issued for this user, or the one the caller sent when it is theirs; else null.' },
    reads: ['id'],
    onlyOn: User.table,
    compute: (row, { credentials }) => credentials?.current(row) ?? null,
  }),
  /**
   * The record's own absolute URL (DRF's HyperlinkedIdentityField, its `url` field), built from the
   * request as `Location` is: its origin, then the record's path under the router serving the
   * request (its collection's, or for a nested record of another table, the router's first
   * top-level collection of that table). Null where no collection of the router serves the record,
   * and outside a collection's routes.
   */
  url: (): ComputedField => ({
    schema: { type: 'string', format: 'uri', description: 'The record\'s own URL.' },
    reads: ['id'],
    recordUrl: true,
  }),
  /**
   * The sum of the related rows' `of` (Django's `annotate(total=Sum(…))`): those of `related` whose
   * `via` names the record, or, given a join table, those it links the record to. An integer, a
   * float, or a decimal's text at its places (a product's: its factors' places added); null where
   * no related row is, unless `default`.
   */
  sum: (related: Table, via: string | Through, options: AggregateOptions): ComputedField => numeric('sum', related, via, options),
  /** The average of the related rows' `of`, as `sum`'s: a decimal's rounded to its places, an integer's a float. */
  avg: (related: Table, via: string | Through, options: AggregateOptions): ComputedField => numeric('avg', related, via, options),
  /** The least of the related rows' `of`, as `sum`'s. */
  min: (related: Table, via: string | Through, options: AggregateOptions): ComputedField => numeric('min', related, via, options),
  /** The greatest of the related rows' `of`, as `sum`'s. */
  max: (related: Table, via: string | Through, options: AggregateOptions): ComputedField => numeric('max', related, via, options),
  /** The ids of the rows of `table` that name the record in `via`, ascending. */
  ids: (table: string, via: string): ComputedField => ({ schema: { type: 'array', items: { type: 'integer' } }, aggregate: over('ids', table, via) }),
};

/** The selection's aggregates for this request: a `requestingUser` condition bound to its user (no user: no rows match). */
export function aggregatesFor(computedFields: Readonly<Record<string, ComputedField>>, names: readonly string[], user: AuthUser | null): Aggregate[] {
  return names.flatMap((name) => {
    const declared = computedFields[name]?.aggregate;
    if (!declared) return [];
    const { requestingUser, ...aggregate } = declared;
    return [{ name, ...aggregate, ...(requestingUser && { where: { column: requestingUser, value: user?.id ?? null } }) }];
  });
}
