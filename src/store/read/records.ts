/**
 * Reading and writing records. Every identifier comes from a model
 * declaration (checked in model()); every value is bound.
 */
import { expressionBuilder, sql, type AliasedRawBuilder, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { parseInteger64 } from '../../core/fields.js';
import type { Ordering } from '../../core/list-query.js';
import { compilable, generated, literal } from '../../core/generated-code.js';
import { isPending } from '../../core/maybe-promise.js';
import type { Model } from '../../core/model.js';
import { recordKeyOf, type Aggregate, type Batch, type NumericAggregate, type Row, type Selection } from '../../core/rows.js';
import { storeDatabase, type Database, type Tables } from '../connection/database.js';
import { compileConditions, visibleRow } from '../conditions/filters.js';
import type { Placeholder } from '../statements/placeholder.js';
import { compiledStatement, identityOf, type Compiled } from '../statements/compiled.js';
import { toDriverValues } from '../write/driver-values.js';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- a select over run-time tables has no static row type
export type RowQuery = SelectQueryBuilder<Tables, string, {}>;

const nestedAlias = (name: string): string => `nested_${name}`;
const nestedColumn = (name: string, column: string): string => `${name}__${column}`;

/** FROM the selection's table (or `from`, named as it), LEFT JOIN each nested table (a row the request may not see joins as none); no columns yet. */
export function fromSelection(database: Database, selection: Selection, from = storeDatabase(database).db.selectFrom(selection.table) as unknown as RowQuery): RowQuery {
  let query = from;
  for (const join of selection.joins) {
    const alias = nestedAlias(join.name);
    const visible = visibleRow(database, join.table, alias);
    query = query.leftJoin(`${join.table} as ${alias}`, (on) => {
      const joined = on.onRef(`${alias}.id`, '=', `${selection.table}.${join.via}`);
      return visible ? joined.on(visible) : joined;
    }) as RowQuery;
  }
  return query;
}

/** `from.column`, read exactly where it is one of the `int64` columns (see Selection). */
function columnOf(database: Database, from: string, column: string, int64: readonly string[] | undefined): RawBuilder<unknown> {
  const ref = sql.ref(from ? `${from}.${column}` : column);
  return int64?.includes(column) ? storeDatabase(database).capabilities.exactInteger(ref) : sql`${ref}`;
}

/** The selection's own columns as a write returns them (unqualified: the written table's). */
export const returnedColumns = (database: Database, selection: Selection): (string | AliasedRawBuilder<unknown, string>)[] =>
  selection.columns.map((column) => (selection.int64?.includes(column) ? columnOf(database, '', column, selection.int64).as(column) : column));

/** The selection's columns, nested ones flattened as `<name>__<column>`, then its aggregates. */
export function selectColumns(database: Database, query: RowQuery, selection: Selection): RowQuery {
  return query.select([
    ...selection.columns.map((column) => columnOf(database, selection.table, column, selection.int64).as(column)),
    ...selection.joins.flatMap((join) => [
      ...join.columns.map((column) => columnOf(database, nestedAlias(join.name), column, join.int64).as(nestedColumn(join.name, column))),
      // Correlated to the joined row: the nested record's own computed fields, in the page's statement.
      ...(join.aggregates ?? []).map((aggregate) => aggregateOf(database, nestedAlias(join.name), aggregate).as(nestedColumn(join.name, aggregate.name))),
    ]),
    ...(selection.aggregates ?? []).map((aggregate) => aggregateOf(database, selection.table, aggregate).as(aggregate.name)),
  ]) as RowQuery;
}

/**
 * A correlated subquery over the related rows the request may see, or every one where the app
 * declared so (`visibility: 'all'`) (served by an index on `via`).
 * Written in SQL both databases take alike: `string_agg` with ORDER BY is SQLite's since 3.44, as
 * PostgreSQL's.
 */
function aggregateOf(database: Database, table: string, aggregate: Aggregate): RawBuilder<unknown> {
  const { kind, table: related, via, on = 'id', column = 'id', where, through, filter, visibility } = aggregate;
  const seen = visibility === 'all' ? () => undefined : visibleRow;
  const alias = `related_${related}`;
  const id = sql.ref(`${alias}.${column}`);
  // A many-to-many's related rows are those its join table's rows naming the record link to; the link must be visible too.
  const link = through && `link_${through.table}`;
  const naming = sql.ref(`${link ?? alias}.${via}`);
  const conditions = [
    sql`${naming} = ${sql.ref(`${table}.${on}`)}`,
    ...(where ? [sql`${sql.ref(`${alias}.${where.column}`)} = ${where.value}`] : []),
    ...(filter ? compileConditions(database, filter.fields, alias, filter.conditions, expressionBuilder<Tables, string>()) : []),
    ...(through ? [seen(database, through.table, link!)] : []),
    seen(database, related, alias),
  ].filter((condition) => condition !== undefined);
  const joined = through ? sql` join ${sql.table(through.table)} as ${sql.ref(link!)} on ${sql.ref(`${link!}.${through.to}`)} = ${sql.ref(`${alias}.id`)}` : sql``;
  const rows = sql`from ${sql.table(related)} as ${sql.ref(alias)}${joined} where ${sql.join(conditions, sql` and `)}`;
  switch (kind) {
    case 'count':
      return sql<number>`(select count(*) ${rows})`;
    case 'exists':
      return sql<boolean>`exists (select 1 ${rows})`;
    case 'ids':
      return sql<string | null>`(select string_agg(cast(${id} as text), ',' order by ${id}) ${rows})`;
    default:
      return sql`(select ${numericAggregate(database, alias, aggregate)} ${rows})`;
  }
}

/**
 * sum, avg, min or max of the product of the `of` columns, or `default` where no row is. A product
 * of integers is taken as bigint (PostgreSQL's integer product would overflow at 2^31); an average
 * of decimals is rounded to their places on both databases, and a sum of them is exact on both.
 */
function numericAggregate(database: Database, alias: string, { kind, of = [], value, default: otherwise }: Aggregate): RawBuilder<unknown> {
  const factors = of.map((column, index) => (index === 0 && of.length > 1 && value?.type === 'integer' ? sql`cast(${sql.ref(`${alias}.${column}`)} as bigint)` : sql.ref(`${alias}.${column}`)));
  const product = sql.join(factors, sql` * `);
  const aggregated =
    kind === 'avg' && value?.type === 'decimal'
      ? sql`round(avg(${product}), ${sql.lit(value.places)})`
      : kind === 'sum' && value?.type === 'decimal'
        ? storeDatabase(database).capabilities.decimalSum(factors)
        : sql`${sql.raw(AGGREGATE_FUNCTIONS[kind as NumericAggregate])}(${product})`;
  return otherwise === undefined ? aggregated : sql`coalesce(${aggregated}, ${otherwise})`;
}

const AGGREGATE_FUNCTIONS: Readonly<Record<NumericAggregate, string>> = { sum: 'sum', avg: 'avg', min: 'min', max: 'max' };

/** A nested field's columns as the row carries them: `[column, "<name>__<column>"]`. */
type NestedColumns = readonly (readonly [column: string, key: string])[];

const nestedColumns = (name: string, columns: readonly string[]): NestedColumns => columns.map((column) => [column, nestedColumn(name, column)] as const);

/** The nested object's columns, picked from the row. */
function pickNested(row: Row, columns: NestedColumns): Row {
  const nested: Row = {};
  for (const [column, key] of columns) nested[column] = row[key];
  return nested;
}

/** A row as the statement read it → the record (assembleRow). */
type Assemble = (row: Row) => Row;

/** How a selection's rows are assembled, worked out once per selection rather than per row. */
interface Assembly {
  readonly joins: readonly { readonly name: string; readonly columns: NestedColumns; readonly aggregates: readonly (readonly [name: string, key: string, value: (stored: unknown) => unknown])[] }[];
  /** The flattened nested columns, which the assembled row does not keep as they are. */
  readonly flattened: ReadonlySet<string>;
  /** The selection's own aggregates, and how each is read. */
  readonly aggregates: readonly (readonly [name: string, value: (stored: unknown) => unknown])[];
  /** The assembly compiled, by the columns dropped beside it; made on the selection's second use (see assembleRow). */
  readonly compiled: Map<ReadonlySet<string>, Assemble>;
  uses: number;
}

const assemblies = new WeakMap<Selection, Assembly>();

function assemblyOf(selection: Selection): Assembly {
  let assembly = assemblies.get(selection);
  if (!assembly) {
    const joins = selection.joins.map((join) => ({
      name: join.name,
      columns: nestedColumns(join.name, join.columns),
      aggregates: (join.aggregates ?? []).map((aggregate) => [aggregate.name, nestedColumn(join.name, aggregate.name), aggregateValue(aggregate)] as const),
    }));
    const aggregates = (selection.aggregates ?? []).map((aggregate) => [aggregate.name, aggregateValue(aggregate)] as const);
    const flattened = new Set(joins.flatMap((join) => [...join.columns, ...join.aggregates].map(([, key]) => key)));
    assembly = { joins, flattened, aggregates, compiled: new Map(), uses: 0 };
    assemblies.set(selection, assembly);
  }
  return assembly;
}

const NOTHING: ReadonlySet<string> = new Set();

/** An aggregate as the drivers return it (a count as text, say) → its value: a number, a boolean, a list of ids, a decimal's text. */
function aggregateValue({ kind, value, text }: Aggregate): (stored: unknown) => unknown {
  switch (kind) {
    case 'count':
      return Number;
    case 'exists':
      return Boolean;
    case 'ids':
      return (stored) => (typeof stored !== 'string' || stored === '' ? [] : text ? stored.split(',') : stored.split(',').map(parseInteger64));
    default:
      if (value?.type === 'decimal') return (stored) => (stored === null || stored === undefined ? null : decimalText(stored, value.places));
      return (stored) => (stored === null || stored === undefined ? null : Number(stored));
  }
}

/**
 * A decimal aggregate at `places`: PostgreSQL's numeric text has the scale of its operands (a
 * coalesced default none), SQLite's double the stored digits to those places (as fields.decimal reads).
 */
function decimalText(stored: unknown, places: number): string {
  if (typeof stored === 'number') return stored.toFixed(places).replace(/^-(0\.?0*)$/, '$1');
  const [whole = '0', fraction = ''] = String(stored).split('.');
  return places === 0 ? whole : `${whole}.${fraction.padEnd(places, '0')}`;
}

/**
 * The assembly interpreted: the row's own columns copied but the flattened and dropped ones, then
 * each nested object picked from its columns (null when the join found nothing), the aggregates
 * read in place.
 */
export function interpretAssembly(selection: Selection, dropped: ReadonlySet<string>): Assemble {
  const { joins, flattened, aggregates } = assemblyOf(selection);
  return (row) => {
    const assembled: Row = {};
    for (const key in row) if (!flattened.has(key) && !dropped.has(key)) assembled[key] = row[key];
    for (const { name, columns, aggregates: nestedAggregates } of joins) {
      const nested = pickNested(row, columns);
      for (const [aggregate, key, value] of nestedAggregates) nested[aggregate] = value(row[key]);
      assembled[name] = nested.id === null || nested.id === undefined ? null : nested;
    }
    for (const [name, value] of aggregates) assembled[name] = value(row[name]);
    return assembled;
  };
}

/**
 * The assembly compiled into straight-line code: each nested object one literal, the record one
 * literal of the selection's columns, its aggregates and its nested objects, in the order the
 * interpreted one gives them (the statement selects the columns, the nested ones, then the
 * aggregates); undefined where a name cannot be compiled. The rows it takes are the selection's
 * statements' (selectColumns, selectRecord), which carry these columns and the dropped ones only.
 */
export function compileAssembly(selection: Selection, dropped: ReadonlySet<string>): Assemble | undefined {
  const { joins, flattened, aggregates } = assemblyOf(selection);
  const own = selection.columns.filter((column) => !flattened.has(column) && !dropped.has(column));
  const names = [...own, ...aggregates.map(([name]) => name), ...joins.flatMap((join) => [join.name, ...join.columns.map(([column]) => column), ...join.aggregates.map(([name]) => name)])];
  if (!names.every(compilable)) return undefined;
  const read = (key: string): string => `row[${literal(key)}]`;
  const nested = joins.map(
    (join, index) =>
      `const n${index} = { ${[
        ...join.columns.map(([column, key]) => `${literal(column)}: ${read(key)}`),
        ...join.aggregates.map(([name, key], at) => `${literal(name)}: joins[${index}].aggregates[${at}][2](${read(key)})`),
      ].join(', ')} };`,
  );
  const entries = [
    ...own.map((column) => `${literal(column)}: ${read(column)}`),
    ...aggregates.map(([name], index) => `${literal(name)}: aggregates[${index}][1](${read(name)})`),
    ...joins.map((join, index) => `${literal(join.name)}: n${index}.id === null || n${index}.id === undefined ? null : n${index}`),
  ];
  const source = `return function assemble(row) {
  ${nested.join('\n  ')}
  return { ${entries.join(', ')} };
};`;
  return generated(['joins', 'aggregates'], source, [joins, aggregates]) as Assemble | undefined;
}

/**
 * Flattened nested columns → one object per nested field (null when the join found nothing);
 * aggregates as values; the `dropped` columns (what a statement carried beside the record) left
 * out. A new object rather than the driver's row with properties deleted, which would make every
 * later read of the row (rendering, hooks) slower. Interpreted on a selection's first use, compiled
 * from its second on: a selection made for one request (a list ordered by a column it does not
 * show, one bound to the requesting user) is used once, and compiling it would cost more than it saves.
 */
export function assembleRow(row: Row, selection: Selection, dropped = NOTHING): Row {
  const assembly = assemblyOf(selection);
  if (assembly.joins.length === 0 && assembly.aggregates.length === 0 && dropped.size === 0) return row;
  let assemble = assembly.compiled.get(dropped);
  if (!assemble) {
    if (assembly.uses++ === 0) return interpretAssembly(selection, dropped)(row);
    assemble = compileAssembly(selection, dropped) ?? interpretAssembly(selection, dropped);
    assembly.compiled.set(dropped, assemble);
  }
  return assemble(row);
}

/**
 * The most ids one batch statement binds, well within both databases' limits on a statement's
 * parameters (SQLite's 32766, PostgreSQL's 65535): a page's records are far fewer, and so are a
 * page's nested records, short of thousands per record.
 */
const BOUND_IDS = 10_000;
const OWNER = '_owner';
const OWNER_ONLY: ReadonlySet<string> = new Set([OWNER]);

/** A batch's related rows of the records `ids` that the request may see (and their links, through a join table), each with the id of its record as OWNER, in id order. */
function batchQuery(database: Database, { selection, via, through }: Batch, ids: readonly RecordId[]): RowQuery {
  const { db } = storeDatabase(database);
  const { table } = selection;
  const from = (
    through ? db.selectFrom(through.table).innerJoin(table, (join) => join.onRef(`${table}.id`, '=', `${through.table}.${through.to}`)) : db.selectFrom(table)
  ) as unknown as RowQuery;
  const owner = sql.ref(through ? `${through.table}.${through.from}` : `${table}.${via!}`);
  let query = selectColumns(database, fromSelection(database, selection, from), selection).select(owner.as(OWNER)).where(owner, 'in', ids) as RowQuery;
  for (const visible of [visibleRow(database, table, table), through && visibleRow(database, through.table, through.table)]) if (visible) query = query.where(visible);
  return query.orderBy(sql.ref(`${table}.id`));
}

/**
 * Each row's batched relations (the selection's batches), as lists under their names: one
 * statement per batch for all the rows, whatever their number (up to BOUND_IDS), and per batch of
 * theirs, in turn.
 */
export async function attachBatches(database: Database, selection: Selection, rows: readonly Row[]): Promise<void> {
  if (!selection.batches || rows.length === 0) return;
  const ids = [...new Set(rows.map((row) => row.id as RecordId))];
  for (const batch of selection.batches) {
    const read: Row[] = [];
    // An owner's related rows all come in the statement that names it, so each list stays in id order.
    for (let start = 0; start < ids.length; start += BOUND_IDS) read.push(...(await batchQuery(database, batch, ids.slice(start, start + BOUND_IDS)).execute()));
    const related = read.map((row) => [String(row[OWNER]), assembleRow(row, batch.selection, OWNER_ONLY)] as const);
    await attachBatches(database, batch.selection, related.map(([, row]) => row));
    const byOwner = new Map<string, Row[]>();
    for (const [owner, row] of related) {
      const list = byOwner.get(owner);
      if (list) list.push(row);
      else byOwner.set(owner, [row]);
    }
    for (const row of rows) row[batch.name] = byOwner.get(String(row.id)) ?? [];
  }
}

/** A record's key: an integer or UUID id, or the value of the selection's record key (its `recordKey`). */
export type RecordId = number | bigint | string;

const VERSION = '_version';
/** Each record's row version (capabilities.rowVersion) as it was read, kept beside the row, not in it. */
const versions = new WeakMap<Row, string>();

/** The version of the record `row` was read as, where the dialect has row versions. */
export const versionOf = (row: Row): string | undefined => versions.get(row);

/** One record by its key (the selection's: `id` unless a record key), with its row version where the dialect has one. */
export function selectRecord(database: Database, selection: Selection, id: unknown): RowQuery {
  const query = selectColumns(database, fromSelection(database, selection), selection).where(sql.ref(`${selection.table}.${recordKeyOf(selection)}`), '=', id);
  const version = storeDatabase(database).capabilities.rowVersion;
  return version ? (query.select(version(selection.table).as(VERSION)) as RowQuery) : query;
}

const VERSION_ONLY: ReadonlySet<string> = new Set([VERSION]);

/**
 * A record read by selectRecord, its version moved out of its columns (`dropped`: the columns
 * besides the record's that the statement carried, the version among them).
 */
export function assembleRecord(row: Row, selection: Selection, dropped = VERSION_ONLY): Row {
  const version = row[VERSION];
  const record = assembleRow(row, selection, version === undefined && dropped === VERSION_ONLY ? NOTHING : dropped);
  if (version !== undefined) versions.set(record, version as string);
  return record;
}

/** A selection's query of one record by id (locked: FOR UPDATE of its own table, on PostgreSQL). */
const recordQuery = (selection: Selection, lock: boolean): Compiled<Row> =>
  compiledStatement(selection, lock ? 'record locked' : 'record', (database, id) => {
    const query = selectRecord(database, selection, id);
    return lock && storeDatabase(database).capabilities.supportsRowLocks ? query.forUpdate(selection.table) : query;
  });

/** `lock` holds the row until the transaction ends (PostgreSQL; SQLite transactions already exclude other writers). */
export async function findRecord(
  database: Database,
  selection: Selection,
  id: RecordId,
  { lock = false }: { lock?: boolean } = {},
): Promise<Row | undefined> {
  const [row] = await recordQuery(selection, lock)(database, [id]);
  return row && withBatches(database, selection, assembleRecord(row, selection));
}

/** One record with its batched relations attached (attachBatches); at once where there are none. */
export function withBatches(database: Database, selection: Selection, row: Row): Row | Promise<Row> {
  return selection.batches ? attachBatches(database, selection, [row]).then(() => row) : row;
}

/**
 * A query of at most one row that another read can carry along (the request's user, found by
 * its credential): built from placeholders for `values`, once per `query` function.
 */
export interface Companion {
  readonly query: (database: Database, ...placeholders: Placeholder[]) => RowQuery;
  /** The columns `query` selects. */
  readonly columns: readonly string[];
  readonly values: readonly unknown[];
}

/** The companion's row alone (undefined: none); the driver's promise chained, not wrapped. */
export const readCompanion = (database: Database, companion: Companion): Promise<Row | undefined> =>
  compiledStatement(companion.query, 'companion', companion.query, companion.values.length)(database, companion.values).then(([row]) => row);

const COMPANION = '_companion';
const RECORD = '_record';
/** The companion's columns in the paired row, and all that is not the record's (they and its version). */
const companionColumns = new WeakMap<Companion['query'], { readonly columns: NestedColumns; readonly dropped: ReadonlySet<string> }>();

function companionColumnsOf(companion: Companion): { readonly columns: NestedColumns; readonly dropped: ReadonlySet<string> } {
  let found = companionColumns.get(companion.query);
  if (!found) {
    const columns = nestedColumns(COMPANION, companion.columns);
    found = { columns, dropped: new Set([VERSION, ...columns.map(([, key]) => key)]) };
    companionColumns.set(companion.query, found);
  }
  return found;
}

/** `companion LEFT JOIN record ON true`: no row when the companion finds none; the record's columns null when it is missing. */
const pairedQuery = (selection: Selection, companion: Companion): Compiled<Row> =>
  compiledStatement(
    selection,
    `paired ${identityOf(companion.query)}`,
    (database, id, ...values) =>
      storeDatabase(database).db
        .selectFrom(companion.query(database, ...values).as(COMPANION))
        .leftJoin(selectRecord(database, selection, id).as(RECORD), (join) => join.onTrue())
        .select(companionColumnsOf(companion).columns.map(([column, key]) => sql.ref(`${COMPANION}.${column}`).as(key)))
        .selectAll(RECORD) as unknown as RowQuery,
    1 + companion.values.length,
  );

/**
 * One record by id and the companion's row, in one round trip: undefined when the companion finds
 * no row; else its row, and the record (undefined when there is none).
 */
export function findRecordAlongside(
  database: Database,
  selection: Selection,
  id: RecordId,
  companion: Companion,
): Promise<{ companion: Row; record: Row | undefined } | undefined> {
  // The driver's promise chained, and batches waited for only where the selection has some: every token-authenticated detail read passes here.
  return pairedQuery(selection, companion)(database, [id, ...companion.values]).then(([row]) => {
    if (!row) return undefined;
    const { columns, dropped } = companionColumnsOf(companion);
    const found = (record: Row | undefined) => ({ companion: pickNested(row, columns), record });
    // The record's id is its primary key: null only where the join found no record.
    if (row.id === null) return found(undefined);
    const record = withBatches(database, selection, assembleRecord(row, selection, dropped));
    return isPending(record) ? record.then(found) : found(record);
  });
}

/** Rows as read → records (assembleRow), their batched relations attached. */
async function assembledRows(database: Database, selection: Selection, rows: readonly Row[]): Promise<Row[]> {
  const records = rows.map((row) => assembleRow(row, selection));
  if (selection.batches) await attachBatches(database, selection, records);
  return records;
}

/** Whether a row of `table` has this id (and the request may see it). */
export async function recordExists(database: Database, table: string, id: unknown): Promise<boolean> {
  const visible = visibleRow(database, table, table);
  let query = storeDatabase(database).db.selectFrom(table).select(sql.lit(1).as('found')).where('id', '=', id);
  if (visible) query = query.where(visible);
  return (await query.executeTakeFirst()) !== undefined;
}

export async function insertRecord(database: Database, model: Model, values: Row): Promise<RecordId> {
  const row = await storeDatabase(database).db
    .insertInto(model.table)
    .values(toDriverValues(model, values))
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id as RecordId;
}

/**
 * Every record whose fields equal `where`, in `ordering` order, unpaged (for small fixed lists).
 * Each shape (which fields, which of them null, the ordering) is compiled once, as the routes that
 * list records ask the same question every time.
 */
export async function listRecords(
  database: Database,
  model: Model,
  selection: Selection,
  where: Row,
  ordering: readonly Ordering[],
): Promise<Row[]> {
  // By name, so that { a, b } and { b, a } are one shape, and the values follow the same order.
  const conditions = Object.entries(toDriverValues(model, where)).sort(([a], [b]) => (a < b ? -1 : 1));
  const values = conditions.map(([, value]) => value).filter((value) => value !== null);
  const shape = `records ${JSON.stringify([conditions.map(([name, value]) => [name, value === null]), ordering])}`;
  const query = compiledStatement(
    selection,
    shape,
    (database, ...placeholders) => {
      let built = selectColumns(database, fromSelection(database, selection), selection);
      let next = 0;
      for (const [name, value] of conditions) {
        const column = sql.ref(`${selection.table}.${name}`);
        built = value === null ? built.where(column, 'is', null) : built.where(column, '=', placeholders[next++]);
      }
      for (const { field, descending } of ordering) {
        built = built.orderBy(sql.ref(`${selection.table}.${field}`), descending ? 'desc' : 'asc');
      }
      return built;
    },
    values.length,
  );
  return assembledRows(database, selection, await query(database, values));
}
