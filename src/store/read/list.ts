/**
 * A list query (filters, search, ordering, page) → SQL: a count and a page
 * (one statement or two), with nested records joined into the page query.
 * `readList` is the one way in: the caller says what it wants (the count, a page by number or by
 * keyset), the store chooses the statements.
 */
import { setImmediate } from 'node:timers/promises';
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Lookup } from '../../core/fields.js';
import { firstRow, type CountMode, type Keyset, type ListQuery, type ListSource, type Ordering, type RecordScope } from '../../core/list-query.js';
import type { Row, Selection } from '../../core/rows.js';
import { compileConditions, containing } from '../conditions/filters.js';
import { storeDatabase, type Database, type Tables } from '../connection/database.js';
import { listShapeOf } from '../statements/list-shape.js';
import { lift } from '../statements/placeholder.js';
import { compiledStatement, identityOf } from '../statements/compiled.js';
import { assembleRecord, assembleRow, attachBatches, fromSelection, selectColumns, selectRecord, withBatches, type RecordId, type RowQuery } from './records.js';

type Where = ExpressionBuilder<Tables, string>;

const countQuery = (database: Database, source: ListSource, query: ListQuery) =>
  fromSelection(database, { ...source.selection, joins: [] })
    .where((eb) => matching(database, source, query, eb))
    .select((eb) => eb.fn.countAll().as('count'));

/** A list's statements may read many rows: on SQLite, off the event loop (sqlite-readers.ts). */
const SCANS = { scans: true };

/**
 * The rows of the statement `build` makes of the query and `extra` values (a page's limit and
 * offset, a keyset's boundary), compiled once for the query's shape and `kind`, which must name
 * everything else `build` makes its SQL of. A query of no shape is built as it comes.
 */
function shapedRows(
  database: Database,
  source: ListSource,
  kind: string,
  query: ListQuery,
  extra: readonly unknown[],
  build: (database: Database, query: ListQuery, extra: readonly unknown[]) => RowQuery,
): Promise<Row[]> {
  const shape = listShapeOf(query);
  if (!shape) return build(database, query, extra).execute();
  // The rest of the source: its filters by identity (named ones make a source of their own), the fields searched where there are terms.
  const searched = query.search.length > 0 ? source.searchFields.join(',') : '';
  const key = `${kind}|${identityOf(source.fields)}.${identityOf(source.across)}|${searched}|${shape.key}`;
  const values = [...shape.values, ...extra];
  const bound = shape.values.length;
  const statement = compiledStatement(source.selection, key, (database, ...standIns) => build(database, shape.query(standIns), standIns.slice(bound)), values.length, SCANS);
  return statement(database, values);
}

async function countRecords(database: Database, source: ListSource, query: ListQuery): Promise<number> {
  const [row] = await shapedRows(database, source, 'count', query, [], (database, query) => countQuery(database, source, query) as unknown as RowQuery);
  return Number(row!.count);
}

/**
 * The planner's estimate of how many records match (PostgreSQL), read from
 * EXPLAIN without running the query; undefined where there is no planner estimate.
 */
async function estimateRecords(database: Database, source: ListSource, query: ListQuery): Promise<number | undefined> {
  if (!storeDatabase(database).capabilities.estimatesRowCounts) return undefined;
  const [plan] = await fromSelection(database, { ...source.selection, joins: [] })
    .where((eb) => matching(database, source, query, eb))
    .select(sql.lit(1).as('one'))
    .explain<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>('json');
  return plan?.['QUERY PLAN'][0].Plan['Plan Rows'];
}

/** The lookups that match a pattern (LIKE / ILIKE), as search does. */
const PATTERN_LOOKUPS: ReadonlySet<Lookup> = new Set(['iexact', 'contains', 'icontains', 'startswith', 'endswith']);

/** Up to this many matches, a page with a pattern condition is sorted from its matches (see gatherMatches). */
const GATHERED_MATCHES = 10_000;

/** Whether the query has a pattern condition: `search`, or a LIKE lookup. */
const hasPattern = (query: ListQuery): boolean =>
  query.search.length > 0 || query.filters.some((filter) => PATTERN_LOOKUPS.has(filter.lookup));

/**
 * Whether to read the page from its matches, gathered first (through the trigram indexes), then
 * sorted: rather than let PostgreSQL walk an ordering index testing each row against the pattern.
 * PostgreSQL guesses a pattern's matches from a sample (wildly, from one ANALYZE to the next) and
 * costs testing it like comparing two integers, so for a late page of a rare search term it walked
 * the primary key through most of the table instead of sorting the few matches (measured in
 * docs/performance.md, Indexes). The count, read first, knows the matches: up to GATHERED_MATCHES,
 * gathering costs about what the count did; past it, the planner's walk is the better bet for the
 * first pages. SQLite has no pattern index: gathering would scan the whole table, a walk stops early.
 */
function gatherMatches(database: Database, query: ListQuery, matches: number | undefined): boolean {
  return (
    storeDatabase(database).capabilities.types.supportsTrigramIndexes &&
    matches !== undefined &&
    matches <= GATHERED_MATCHES &&
    hasPattern(query)
  );
}

const MATCHES = 'matches';

/** What a page reads: the source's selection, and where its matches are gathered first (gatherMatches), the ordering's columns, which it is sorted by outside them. */
const pageSelection = (source: ListSource, query: ListQuery, gather: boolean): Selection =>
  gather ? withColumns(source.selection, query.ordering.map(({ field }) => field)) : source.selection;

/** The query's matching rows, unordered, and where their columns are named: the table, or its matches gathered first. */
function matchingRows(database: Database, source: ListSource, query: ListQuery, gather: boolean): { rows: RowQuery; from: string } {
  const where = (eb: Where) => matching(database, source, query, eb);
  const selection = pageSelection(source, query, gather);
  const rows = selectColumns(database, fromSelection(database, selection), selection).where(where);
  if (!gather) return { rows, from: selection.table };
  const gathered = storeDatabase(database).db.with((cte) => cte(MATCHES).materialized(), () => rows).selectFrom(MATCHES).selectAll();
  return { rows: gathered as unknown as RowQuery, from: MATCHES };
}

/** Rows in the query's ordering, ties by id ascending, their columns named under `from`. */
function inOrder(rows: RowQuery, source: ListSource, ordering: readonly Ordering[], from: string): RowQuery {
  let ordered = rows;
  const { table } = source.selection;
  for (const { field, descending } of ordering) {
    const aggregate = source.selection.aggregates?.find(({ name }) => name === field);
    // A sum, average, least or greatest of no rows is null, unless it has a default.
    const nullable = aggregate ? aggregate.of !== undefined && aggregate.default === undefined : source.fields[field]!.nullable;
    // An aggregate is a column of the select list, named by its alias alone in its own statement.
    const ref = aggregate !== undefined && from === table ? sql.ref(field) : sql.ref(`${from}.${field}`);
    // NULL sorts as the largest value on both databases (PostgreSQL's own rule).
    ordered = ordered.orderBy(ref, (order) => {
      const direction = descending ? order.desc() : order.asc();
      if (!nullable) return direction;
      return descending ? direction.nullsFirst() : direction.nullsLast();
    });
  }
  return ordered.orderBy(sql.ref(`${from}.id`), 'asc');
}

/** The query's matching rows in its ordering, `limit` of them from `offset` on (values, or what stands in for them), unread. */
function pageQuery(database: Database, source: ListSource, query: ListQuery, [limit, offset]: readonly unknown[], gather: boolean): RowQuery {
  const { rows, from } = matchingRows(database, source, query, gather);
  return inOrder(rows, source, query.ordering, from)
    .limit(limit as number)
    .offset(offset as number);
}

/** The query's page; `extra` more rows past it. `matches`: how many records match, when known. */
async function readPage(database: Database, source: ListSource, query: ListQuery, extra: number, matches: number | undefined): Promise<Row[]> {
  const gather = gatherMatches(database, query, matches);
  const window = [query.pageSize + extra, firstRow(query)];
  const rows = await shapedRows(database, source, gather ? 'gathered page' : 'page', query, window, (database, query, window) => pageQuery(database, source, query, window, gather));
  const selection = pageSelection(source, query, gather);
  return rows.map((row) => assembleRow(row, selection));
}

/**
 * The exact count and the page. On PostgreSQL one statement (countedPage), unless the query has a
 * pattern, whose page is read knowing its count (gatherMatches). SQLite answers in-process, so
 * there is no round trip to save: the count, then the page, none read past the last.
 */
async function countAndPage(database: Database, source: ListSource, query: ListQuery): Promise<{ count: number; rows: Row[] }> {
  if (storeDatabase(database).capabilities.mergesRoundTrips && !hasPattern(query)) return countedPage(database, source, query);
  const count = await countRecords(database, source, query);
  const beyond = firstRow(query) >= count;
  return { count, rows: beyond ? [] : await readPage(database, source, query, 0, count) };
}

const COUNT = '_count';
const COUNT_ONLY: ReadonlySet<string> = new Set([COUNT]);
const PAGE = '_page';

/**
 * The count and the page in one statement, one round trip where a database is a round trip away:
 * the page, each row with the count beside it (an uncorrelated subquery, counted once). An empty
 * page brings no row to carry the count; read in the same snapshot, it is page 1 of nothing (a
 * count of 0) or a page past the last, refused whatever the count (counted again at an offset). For queries without a
 * pattern: a pattern's page is read knowing its count.
 */
async function countedPage(database: Database, source: ListSource, query: ListQuery): Promise<{ count: number; rows: Row[] }> {
  // The page's ordering columns go with it, to keep its order outside.
  const paged = { ...source, selection: withColumns(source.selection, query.ordering.map(({ field }) => field)) };
  const rows = await shapedRows(database, source, 'counted page', query, [query.pageSize, firstRow(query)], (database, query, window) => {
    const counted = storeDatabase(database).db
      .selectFrom(pageQuery(database, paged, query, window, false).as(PAGE))
      .select(countQuery(database, source, query).as(COUNT))
      .selectAll(PAGE) as unknown as RowQuery;
    return inOrder(counted, source, query.ordering, PAGE);
  });
  const { selection } = paged;
  // Past the end at an offset (not a page number, which is refused) the count is still the answer's.
  if (rows.length === 0) return { count: query.offset ? await countRecords(database, source, query) : 0, rows };
  const count = Number(rows[0]![COUNT]);
  return { count, rows: rows.map((row) => assembleRow(row, selection, COUNT_ONLY)) };
}

const isAggregate = (selection: Selection, name: string): boolean => selection.aggregates?.some((aggregate) => aggregate.name === name) ?? false;

/** The selection with these columns of its table too (once each); its aggregates are selected already. */
function withColumns(selection: Selection, columns: readonly string[]): Selection {
  const missing = columns.filter((column) => !selection.columns.includes(column) && !isAggregate(selection, column));
  return missing.length === 0 ? selection : { ...selection, columns: [...selection.columns, ...new Set(missing)] };
}

/**
 * Up to `limit` records after (or, backwards, before) the keyset boundary in
 * the query's ordering, ties by id: stable while rows are inserted, with no
 * OFFSET to scan past. Backwards pages come out in reverse order.
 */
async function pageByKeyset(database: Database, source: ListSource, query: ListQuery, keyset: Keyset | undefined, limit: number): Promise<Row[]> {
  const backwards = keyset?.backwards === true;
  const order = [...query.ordering, { field: 'id', descending: false }].map(({ field, descending }) => ({
    ref: sql.ref(`${source.selection.table}.${field}`),
    field,
    descending: backwards ? !descending : descending,
  }));
  // The boundary of the next page needs the ordering values, whether or not the serializer shows them.
  const selection = withColumns(source.selection, order.map(({ field }) => field));
  const kind = keyset ? (backwards ? 'keyset page back' : 'keyset page') : 'first keyset page';
  const rows = await shapedRows(database, source, kind, query, [limit, ...(keyset?.boundary ?? [])], (database, query, [limit, ...boundary]) => {
    const page = selectColumns(database, fromSelection(database, selection), selection).where((eb) => {
      const conditions = [matching(database, source, query, eb)];
      if (keyset) {
        const [first] = order;
        // Implied by what follows, but an index can seek to it: without it both databases scan the
        // index from its start and filter, so reading a whole list by keyset would be quadratic.
        conditions.push(eb(first!.ref, first!.descending ? '<=' : '>=', boundary[0]));
        // (a, b, id) after (x, y, z): a > x, or a = x and b > y, or a = x and b = y and id > z (per direction).
        conditions.push(
          eb.or(
            order.map(({ ref, descending }, index) =>
              eb.and([...order.slice(0, index).map((earlier, position) => eb(earlier.ref, '=', boundary[position])), eb(ref, descending ? '<' : '>', boundary[index])]),
            ),
          ),
        );
      }
      return eb.and(conditions);
    });
    return order.reduce((ordered, { ref, descending }) => ordered.orderBy(ref, descending ? 'desc' : 'asc'), page).limit(limit as number);
  });
  return rows.map((row) => assembleRow(row, selection));
}

/** How a list is paged: by number (the query's `page`), or by keyset from a boundary (none: the first page). */
export type Paging = { readonly by: 'number' } | { readonly by: 'keyset'; readonly from?: Keyset };

/** What a list read is asked: which records and page (`query`), read how, counted how. */
export interface ListPlan {
  readonly source: ListSource;
  readonly query: ListQuery;
  readonly paging: Paging;
  /** Pages by keyset are not counted. */
  readonly count: CountMode;
  /** `estimated` counts exactly where the estimate is below this, or where there is no planner estimate. */
  readonly estimateThreshold: number;
}

export interface ListRead {
  /** The page, in the query's ordering. */
  readonly rows: Row[];
  /** null when not counted (`none`, keyset pages). */
  readonly count: number | null;
  /** Whether records follow the page, in the direction it was read. */
  readonly hasMore: boolean;
  /** Keyset pages: the rows the next and the previous page start from (undefined: there is none). */
  readonly boundary?: { readonly next: Row | undefined; readonly previous: Row | undefined };
}

/**
 * A list read: the page and what the plan asks of its count. The store chooses the statements: an
 * exact count and the page in one where reads merge (countAndPage); the page one row past its end,
 * to tell whether more follow, beside an estimate; a keyset page likewise.
 */
export async function readList(database: Database, plan: ListPlan): Promise<ListRead> {
  const read = await readListRows(database, plan);
  if (plan.source.selection.batches) await attachBatches(database, plan.source.selection, read.rows);
  return read;
}

async function readListRows(database: Database, plan: ListPlan): Promise<ListRead> {
  const { source, query, paging } = plan;
  if (paging.by === 'keyset') return keysetPage(database, source, query, paging.from);
  if (plan.count === 'exact') {
    const { count, rows } = await countAndPage(database, source, query);
    return { count, rows, hasMore: firstRow(query) + query.pageSize < count };
  }
  const [estimate, read] = await Promise.all([
    plan.count === 'estimated' ? estimateRecords(database, source, query) : undefined,
    readPage(database, source, query, 1, undefined),
  ]);
  const rows = read.slice(0, query.pageSize);
  const hasMore = read.length > query.pageSize;
  if (plan.count === 'none' || (firstRow(query) > 0 && rows.length === 0)) return { count: null, rows, hasMore };
  const count =
    estimate !== undefined && estimate >= plan.estimateThreshold ? Math.round(estimate) : await countRecords(database, source, query);
  return { count, rows, hasMore };
}

/** A keyset page, read one row past its end (backwards pages are read in reverse, then turned round). */
async function keysetPage(database: Database, source: ListSource, query: ListQuery, from: Keyset | undefined): Promise<ListRead> {
  const backwards = from?.backwards === true;
  const read = await pageByKeyset(database, source, query, from, query.pageSize + 1);
  const hasMore = read.length > query.pageSize;
  const rows = read.slice(0, query.pageSize);
  if (backwards) rows.reverse();
  const started = from !== undefined;
  const boundary = {
    next: (backwards ? started : hasMore) ? rows.at(-1) : undefined,
    previous: (backwards ? hasMore : started) ? rows[0] : undefined,
  };
  return { count: null, rows, hasMore, boundary };
}

/**
 * Every record the query matches, in its ordering (ties by id), read `batchSize` at a time by
 * keyset as the caller asks for the next batch. Nothing is held between batches (no cursor, no
 * transaction, no connection: SQLite has only one), so a slow reader costs one batch of memory.
 * A turn of the event loop between batches keeps other requests served while SQLite reads block
 * it. Not one snapshot: a record inserted meanwhile before the point read so far is not seen.
 * Ordering fields must not be nullable.
 */
export async function* recordsInBatches(
  database: Database,
  source: ListSource,
  query: Pick<ListQuery, 'filters' | 'ordering'>,
  batchSize: number,
): AsyncGenerator<Row[]> {
  const page: ListQuery = { ...query, page: 1, pageSize: batchSize, search: [] };
  let keyset: Keyset | undefined;
  for (;;) {
    const rows = await pageByKeyset(database, source, page, keyset, batchSize);
    if (rows.length === 0) return;
    if (source.selection.batches) await attachBatches(database, source.selection, rows);
    const last = rows.at(-1)!;
    keyset = { boundary: [...query.ordering.map(({ field }) => last[field]), last.id], backwards: false };
    yield rows;
    if (rows.length < batchSize) return;
    await setImmediate();
  }
}

/**
 * The record with this id, if it meets the scope's conditions (a detail read, update or delete of
 * a scoped collection), with its row version as findRecord reads it; `lock` as findRecord's.
 */
export async function findScopedRecord(
  database: Database,
  selection: Selection,
  id: RecordId,
  scope: RecordScope,
  { lock = false }: { lock?: boolean } = {},
): Promise<Row | undefined> {
  let query = selectRecord(database, selection, id).where((eb) => eb.and(compileConditions(database, scope.fields, selection.table, scope.conditions, eb, scope.across)));
  if (lock && storeDatabase(database).capabilities.supportsRowLocks) query = query.forUpdate(selection.table);
  const row = await query.executeTakeFirst();
  return row && withBatches(database, selection, assembleRecord(row, selection));
}

/** What selects a list's records: its filters, search terms and scope (not its ordering or page). */
export type Matching = Pick<ListQuery, 'filters' | 'search' | 'scope'>;

/** The condition a record meets to be in the list (and to be deleted by a DELETE of it: see deleteMatching). */
export function matching(database: Database, source: ListSource, query: Matching, eb: Where): Expression<SqlBool> {
  const { table } = source.selection;
  const conditions = compileConditions(database, source.fields, table, [...query.filters, ...(query.scope ?? [])], eb, source.across);
  for (const term of query.search) {
    conditions.push(
      eb.or(source.searchFields.map((name) => storeDatabase(database).like(sql.ref(`${table}.${name}`), lift(term, containing), true))),
    );
  }
  return eb.and(conditions);
}
