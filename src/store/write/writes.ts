/**
 * Writing records, each in as few statements as the database allows. A create is one
 * `INSERT … RETURNING`, its nested fields read in the same statement where a WITH clause may hold
 * the write; an update is one `UPDATE … RETURNING`, conditional on the row being as the caller saw
 * it where rows have versions, else after a locked read in the same transaction when the caller
 * must see the record first; a delete is one `DELETE`, after a locked read likewise. Foreign keys are checked by their
 * constraints, not by reads beforehand: a refusal comes back as a RecordRefused naming the field. A
 * key naming a row of a restricted table is read first, in one statement, for a request that may
 * not see every row of it (store/conditions/visibility.ts): a row it may not see is refused as a missing one is.
 */
import { sql, type AliasedRawBuilder, type RawBuilder, type Compilable, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { isPending, type MaybePromise } from '../../core/maybe-promise.js';
import type { Filter, ListSource, RecordScope } from '../../core/list-query.js';
import { asExpression, FieldExpression, isComputed, type Operand } from '../../core/expressions.js';
import type { Model } from '../../core/model.js';
import { constraintRefusal } from '../../core/constraints.js';
import { clashDetails, RecordProtected, RecordRefused } from '../../core/refused.js';
import { keyOf, relatedReads, type Row, type Selection } from '../../core/rows.js';
import { storeDatabase, transaction, type Database, type Tables } from '../connection/database.js';
import { committedChanges, noteChange } from '../changes/changes.js';
import { findScopedRecord, matching, type Matching } from '../read/list.js';
import type { Placeholder } from '../statements/placeholder.js';
import { compiledStatement, type Compiled } from '../statements/compiled.js';
import { compileConditions, visibleRow } from '../conditions/filters.js';
import { assembleRow, findRecord, fromSelection, recordExists, returnedColumns, selectColumns, toDriverValues, versionOf, withBatches, type RecordId, type RowQuery } from '../read/records.js';

type Where = ExpressionBuilder<Tables, string>;

/** The caller's look at a record about to be written (permissions, preconditions): it throws to refuse the write. */
/** A check of the row about to be written; `database`: the one the write runs in (its transaction, once it has one). */
export type WriteCheck = (row: Row, database: Database) => MaybePromise<void>;

/** Writes of the caller's own, through `transaction`, in the transaction of the write of `row`. */
export type BeforeWrite = (row: Row, transaction: Database) => Promise<void>;

/**
 * `work` in a transaction: the one already open on `database`, else a new one, committed when `work`
 * resolves, and its writes' changes told then (store/changes/changes.ts).
 */
export function inTransaction<T>(database: Database, work: (transaction: Database) => Promise<T>): Promise<T> {
  if (storeDatabase(database).db.isTransaction) return work(database);
  return committedChanges(database, (within) => transaction(database, (opened) => work(within(opened))));
}

/** An INSERT or UPDATE, ready for its RETURNING clause. */
interface Returnable {
  returning(columns: readonly (string | AliasedRawBuilder<unknown, string>)[]): Compilable<Row>;
}

const WRITTEN = 'written';

/** Whether the selection reads more than the written row's own columns: nested fields or aggregates. */
const readsRelated = (selection: Selection): boolean => selection.joins.length > 0 || (selection.aggregates?.length ?? 0) > 0;

/** Whether the written row's nested fields and aggregates are read in the write's own statement (see writtenRow). */
const readInOneStatement = (database: Database, selection: Selection): boolean =>
  storeDatabase(database).capabilities.supportsModifyingCte &&
  !relatedReads(selection).some((read) => read.table === selection.table);

/** The write, returning the row: as the selection reads it where readInOneStatement, else its own columns. */
function returningRow(database: Database, selection: Selection, write: Returnable): Compilable<Row> {
  if (!readsRelated(selection) || !readInOneStatement(database, selection)) return write.returning(returnedColumns(database, selection));
  // Read as they are here: selectColumns reads them from the WITH clause exactly.
  const from = storeDatabase(database).db.with(WRITTEN, () => write.returning(selection.columns) as never).selectFrom(`${WRITTEN} as ${selection.table}`);
  return selectColumns(database, fromSelection(database, selection, from as unknown as RowQuery), selection);
}

/**
 * A write of `columns` returning the row (returningRow), built and compiled once per shape: every
 * create of a collection sets the same columns, every PATCH of a field the same one. `build` gets
 * one placeholder per column's value, then `extra` more.
 */
function writeQuery(
  selection: Selection,
  shape: string,
  count: number,
  build: (database: Database, placeholders: readonly Placeholder[]) => Returnable,
): Compiled<Row> {
  return compiledStatement(selection, shape, (database, ...placeholders) => returningRow(database, selection, build(database, placeholders)), count);
}

/** The columns' values bound to their placeholders. */
const bound = (columns: readonly string[], placeholders: readonly Placeholder[]): Row =>
  Object.fromEntries(columns.map((column, index) => [column, placeholders[index]]));

/**
 * The written row as the selection reads it. One statement where the database runs a write inside a
 * WITH clause (the nested fields and aggregates joined to what it returns); else the write returns
 * the row's own columns, and the rest is read after it. A record nesting or aggregating its own table
 * is read after it too: within one statement, that table is seen as it was before the write.
 */
function writtenRow(database: Database, selection: Selection, query: Compiled<Row>, values: readonly unknown[]): Promise<Row | undefined> {
  // Chained rather than awaited: no async frame per write.
  return query(database, values).then(([row]) => {
    if (!row) return row;
    if (!readsRelated(selection)) return withBatches(database, selection, row);
    if (readInOneStatement(database, selection)) return withBatches(database, selection, assembleRow(row, selection));
    // Read apart, the record may be gone already (deleted by another request): then it is shown as written.
    return findRecord(database, selection, row[keyOf(selection)] as RecordId).then((found) => found ?? withBatches(database, selection, assembleRow(row, selection)));
  });
}

const detailsFor = (columns: readonly string[], message: (column: string) => string): Record<string, string[]> =>
  Object.fromEntries(columns.length ? columns.map((column) => [column, [message(column)]]) : [['non_field_errors', [message('')]]]);

/** The record's foreign keys whose target is missing, read in the failed write's own transaction. */
async function missingReferences(database: Database, model: Model, values: Row): Promise<string[]> {
  const missing: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    const table = model.fields[name]?.references;
    if (table && value !== null && !(await recordExists(database, table, value))) missing.push(name);
  }
  return missing;
}

/** A write of `values` naming rows that do not exist (by the foreign keys `missing`), refused. */
const missingRefusal = (missing: readonly string[], values: Row): RecordRefused =>
  new RecordRefused(
    detailsFor(missing, (column) =>
      column in values ? `Invalid id "${String(values[column])}": object does not exist.` : 'The object this refers to does not exist.',
    ),
  );

/** A constraint failure of a write of `values` → the RecordRefused it means; undefined for any other error. */
async function refusal(database: Database, model: Model, values: Row, error: unknown): Promise<RecordRefused | undefined> {
  const clashing = database.uniqueViolation(error);
  const declared = constraintRefusal(model.facts.constraints ?? [], database.violatedConstraint(error), clashing);
  if (declared) return declared;
  if (clashing) return new RecordRefused(clashDetails(clashing), undefined, clashing);
  const reported = database.missingReference(error);
  if (!reported) return undefined;
  // SQLite does not say which foreign key failed; its transaction survives the failed statement, so the record's own references tell.
  return missingRefusal(reported.length ? reported : await missingReferences(database, model, values), values);
}

/**
 * The foreign keys among `driverValues` naming a row of a restricted table (store/conditions/visibility.ts):
 * those naming none the request may see, in one statement; undefined, with no statement, when none
 * names a restricted table. `kept`: the record as stored, whose keys an update leaves as they are.
 */
function hiddenReferences(database: Database, model: Model, driverValues: Row, kept?: Row): Promise<string[]> | undefined {
  // Nothing to look at (no allocation per write) where the request sees every row.
  if (!database.visibility) return undefined;
  const { db } = storeDatabase(database);
  const checked = Object.entries(driverValues).flatMap(([name, value]) => {
    const table = model.fields[name]?.references;
    if (!table || value === null || (kept && name in kept && String(kept[name]) === String(value))) return [];
    const alias = `named_${name}`;
    const visible = visibleRow(database, table, alias);
    return visible ? [{ name, found: db.selectFrom(`${table} as ${alias}`).select(sql.lit(1).as('one')).where(`${alias}.id`, '=', value).where(visible) }] : [];
  });
  if (checked.length === 0) return undefined;
  return db
    .selectNoFrom((eb) => checked.map(({ name, found }) => eb.exists(found).as(name)))
    .executeTakeFirstOrThrow()
    .then((row: Row) => checked.filter(({ name }) => !row[name]).map(({ name }) => name));
}

/**
 * The write, with a constraint failure thrown as the RecordRefused it means; first, where a foreign
 * key names a row of a restricted table, refused as naming none when it names one the request may
 * not see (row-level security's WITH CHECK): the answer is the one for a row that does not exist.
 */
function refusing<T>(database: Database, model: Model, values: Row, driverValues: Row, write: () => Promise<T>, kept?: Row): Promise<T> {
  const hidden = hiddenReferences(database, model, driverValues, kept);
  const checked = hidden
    ? hidden.then((names) => {
        if (names.length > 0) throw missingRefusal(names, values);
        return write();
      })
    : write();
  return checked.catch(async (error: unknown) => {
    throw (await refusal(database, model, values, error)) ?? error;
  });
}

/** A new record, as `selection` reads it; `ifAbsent`: none (undefined) where a unique constraint finds its values taken. */
function inserted(database: Database, model: Model, selection: Selection, values: Row, ifAbsent: boolean): Promise<Row | undefined> {
  const driverValues = toDriverValues(model, values);
  const columns = Object.keys(driverValues);
  const query = writeQuery(selection, `${ifAbsent ? 'insert-if-absent' : 'insert'} ${columns.join(',')}`, columns.length, (database, placeholders) => {
    const insert = storeDatabase(database).db.insertInto(model.table).values(bound(columns, placeholders));
    return (ifAbsent ? insert.onConflict((conflict) => conflict.doNothing()) : insert) as unknown as Returnable;
  });
  return refusing(database, model, values, driverValues, () => writtenRow(database, selection, query, Object.values(driverValues))).then((row) => {
    if (row) noteChange(database, model.table, 'created', [row.id as RecordId]);
    return row;
  });
}

/** A new record, as `selection` reads it. */
export const createRecord = (database: Database, model: Model, selection: Selection, values: Row): Promise<Row> =>
  inserted(database, model, selection, values, false) as Promise<Row>;

/**
 * A new record, unless a unique constraint finds its values taken (by a record stored or being
 * stored by a transaction not yet ended, which it waits for): then undefined, by one
 * `INSERT … ON CONFLICT DO NOTHING`, which fails no transaction it runs in. Other refusals (a check,
 * a missing reference) are thrown as createRecord's.
 */
export const createIfAbsent = (database: Database, model: Model, selection: Selection, values: Row): Promise<Row | undefined> =>
  inserted(database, model, selection, values, true);

/**
 * `work`, inside a transaction behind a savepoint, so that a statement of it that fails is undone
 * alone: a PostgreSQL transaction refuses every later statement once one has failed.
 */
export async function savepointed<T>(database: Database, work: () => Promise<T>): Promise<T> {
  const { db } = storeDatabase(database);
  if (!db.isTransaction) return work();
  await sql`savepoint restfold_write`.execute(db);
  try {
    const result = await work();
    await sql`release savepoint restfold_write`.execute(db);
    return result;
  } catch (error) {
    await sql`rollback to savepoint restfold_write`.execute(db);
    throw error;
  }
}

/** New records, each made by `create` (createRecord, and what the caller writes with it), in order, all or none (a refusal carries the refused record's index). */
export function createRecords(database: Database, records: readonly Row[], create: (database: Database, values: Row) => Promise<Row>): Promise<Row[]> {
  return inTransaction(database, async (transaction) => {
    const rows: Row[] = [];
    for (const [index, values] of records.entries()) {
      try {
        rows.push(await create(transaction, values));
      } catch (error) {
        throw error instanceof RecordRefused ? new RecordRefused(error.details, index, error.clashing) : error;
      }
    }
    return rows;
  });
}

/** The locked record (undefined when there is none, or it is outside the scope), once `check` has seen it. */
async function lockedRecord(database: Database, selection: Selection, id: RecordId, check: WriteCheck, scope?: RecordScope): Promise<Row | undefined> {
  const row = scope
    ? await findScopedRecord(database, selection, id, scope, { lock: true })
    : await findRecord(database, selection, id, { lock: true });
  if (row) await check(row, database);
  return row;
}

/** What an update asks before it writes: the caller's checks, and what it read first. */
export interface UpdateGuard {
  readonly check: WriteCheck;
  /** The record as the caller read it before (findRecord, or the request's reader, within `scope`), if it did. */
  readonly seen?: Row;
  /** What is left to check of `seen`, which the caller has looked at already (by default, `check`). */
  readonly checkSeen?: WriteCheck;
  /** The records the caller may reach: one outside it is not found (undefined). */
  readonly scope?: RecordScope;
  /** Writes of the caller's own, through `transaction`, in the update's transaction, after `check`. */
  readonly alongside?: BeforeWrite;
}

/**
 * The record changed to `values`, as `selection` reads it; undefined when there is none (or it is
 * outside the guard's scope: the record seen was read within it, the locked one is). Two
 * writers that checked the same version of the record cannot both succeed:
 * - where rows have versions and nothing is written alongside, the record the caller saw is
 *   checked, then written by one `UPDATE … WHERE id = … AND <version as seen>`, no transaction;
 *   should it match nothing (written or deleted meanwhile), the update takes the locked way:
 * - in one transaction, the record is read and locked, checked, the writes alongside made, and
 *   the record written.
 * Without a guard, one statement. An empty change stores nothing. Not async: the conditional way,
 * every PATCH's on PostgreSQL, chains the check's and the driver's promises with no frame around them.
 */
export function updateRecord(
  database: Database,
  model: Model,
  selection: Selection,
  id: RecordId,
  values: Row,
  guard?: UpdateGuard,
): Promise<Row | undefined> {
  const driverValues = toDriverValues(model, values);
  const columns = Object.keys(driverValues);
  /** The UPDATE by key; `versioned`, only of the row as it was at that version. */
  const update = (versioned: boolean) =>
    writeQuery(selection, `update ${columns.join(',')}${versioned ? ' versioned' : ''}`, columns.length + (versioned ? 2 : 1), (database, placeholders) => {
      const [id, version] = placeholders.slice(columns.length);
      const write = storeDatabase(database).db.updateTable(model.table).set(bound(columns, placeholders)).where(keyOf(selection), '=', id);
      return (versioned ? write.where(storeDatabase(database).capabilities.rowVersion!(model.table), '=', version as unknown as string) : write) as unknown as Returnable;
    });
  /** The UPDATE (conditional on `version` when given); `kept`: the record as stored, whose foreign keys an update may keep. */
  const changed = (database: Database, kept?: Row, version?: string) =>
    refusing(
      database,
      model,
      values,
      driverValues,
      () => writtenRow(database, selection, update(version !== undefined), [...Object.values(driverValues), id, ...(version === undefined ? [] : [version])]),
      kept,
    ).then((row) => {
      if (row) noteChange(database, model.table, 'updated', [row.id as RecordId]);
      return row;
    });
  const empty = Object.keys(values).length === 0;
  if (!guard) return empty ? findRecord(database, selection, id) : changed(database);
  const locked = () =>
    inTransaction(database, async (transaction) => {
      const row = await lockedRecord(transaction, selection, id, guard.check, guard.scope);
      if (!row) return undefined;
      await guard.alongside?.(row, transaction);
      return empty ? row : changed(transaction, row);
    });
  const version = guard.seen && !guard.alongside && !empty ? versionOf(guard.seen) : undefined;
  if (version === undefined) return locked();
  const write = (): Promise<Row | undefined> => changed(database, guard.seen, version).then((row) => row ?? locked());
  // A check that answers at once (If-Match alone) costs no promise before the write.
  const checked = (guard.checkSeen ?? guard.check)(guard.seen!, database);
  return isPending(checked) ? checked.then(write) : write();
}

/**
 * The tables whose rows keep the records of `table` that `deleted` selects from being deleted: the
 * error's, where the database names it (PostgreSQL, whose failed transaction allows no further
 * read); else read in the failed delete's own transaction (SQLite's survives the statement): each
 * restricting foreign key to the table that a row still holds for one of the records.
 */
async function blockingTables(database: Database, table: string, deleted: (eb: Where) => Expression<SqlBool>, named: readonly string[]): Promise<string[]> {
  if (named.length > 0) return [...named];
  const { db, capabilities } = storeDatabase(database);
  const restricting = (await capabilities.liveColumns(db)).filter(
    ({ references }) => references?.table === table && references.onDelete !== 'cascade' && references.onDelete !== 'set null',
  );
  const blocking: string[] = [];
  for (const { table: referring, column } of restricting) {
    const records = db.selectFrom(table).select(`${table}.id`).where(deleted);
    const found = await db.selectFrom(referring).select(sql.lit(1).as('found')).where(column, 'in', records).limit(1).executeTakeFirst();
    if (found && !blocking.includes(referring)) blocking.push(referring);
  }
  return blocking;
}

/**
 * A DELETE's statement, refused by a restricting foreign key as RecordProtected naming the tables
 * that still refer to its records; how many it deleted (their ids returned, for the change it makes).
 */
async function deleting(database: Database, table: string, deleted: (eb: Where) => Expression<SqlBool>): Promise<number> {
  try {
    const rows = await storeDatabase(database).db.deleteFrom(table).where(deleted).returning('id').execute();
    noteChange(database, table, 'deleted', rows.map((row: Row) => row.id as RecordId));
    return rows.length;
  } catch (error) {
    const named = database.stillReferenced(error);
    if (named === undefined) throw error;
    throw new RecordProtected(await blockingTables(database, table, deleted, named));
  }
}

/**
 * Every record the list query's filters, search and scope select, deleted by one `DELETE … WHERE`
 * (a restricting foreign key refuses them all); how many were.
 */
export async function deleteMatching(database: Database, source: ListSource, query: Matching): Promise<number> {
  return deleting(database, source.selection.table, (eb) => matching(database, source, query, eb));
}

/**
 * Whether the record existed (and is now gone). One statement; with `check` or `scope`, the record is
 * read and locked first, in a transaction, so that it sees the record that is deleted (and finds none outside the scope).
 * A foreign key that restricts the delete throws RecordProtected naming the tables that still refer to it.
 */
export async function deleteRecord(
  database: Database,
  selection: Selection,
  id: RecordId,
  check?: WriteCheck,
  scope?: RecordScope,
): Promise<boolean> {
  const remove = async (database: Database) => (await deleting(database, selection.table, (eb) => eb(keyOf(selection), '=', id))) > 0;
  if (!check && !scope) return remove(database);
  return inTransaction(
    database,
    async (transaction) => (await lockedRecord(transaction, selection, id, check ?? noCheck, scope)) !== undefined && remove(transaction),
  );
}

const noCheck: WriteCheck = () => undefined;

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * An operand of an atomic update's expression → SQL: another numeric field of the row, or a bound
 * number. `integral` when the expression is set on an integer field: then its operands are integers.
 */
function operandSql(model: Model, operand: Operand, integral: boolean): RawBuilder<unknown> {
  if (operand instanceof FieldExpression) return expressionSql(model, operand, integral);
  const number = typeof operand === 'string' ? /^-?\d+(\.\d+)?$/.test(operand) : typeof operand === 'bigint' || Number.isFinite(operand);
  if (!number) throw new Error(`${model.table}: an update expression's operand must be a number (or a decimal's text), not ${String(operand)}`);
  // PostgreSQL would type the parameter as the integer column and refuse 1.5; SQLite would store it.
  const whole = typeof operand === 'bigint' || (typeof operand === 'number' ? Number.isInteger(operand) : /^-?\d+$/.test(operand));
  if (integral && !whole) throw new Error(`${model.table}: an update expression set on an integer field takes integers only, not ${String(operand)}`);
  if (!integral) return sql`${operand}`;
  // Exact, and an integer to SQLite too (which binds a number as a double, and would round a cast one past 2^53).
  if (typeof operand === 'number' ? !Number.isSafeInteger(operand) : BigInt(operand) < INT64_MIN || BigInt(operand) > INT64_MAX) {
    throw new Error(`${model.table}: an update expression's integer is a safe integer, or a bigint (or its digits) of 64 bits, not ${String(operand)}`);
  }
  return sql`cast(${operand} as bigint)`;
}

/** An expression reads, and is set on, the row's own numeric fields only (integer ones for an integer field): no keys, no text. */
function assertNumeric(model: Model, field: string, integral = false): void {
  const declared = model.fields[field];
  if (!declared || (declared.valueType !== 'integer' && declared.valueType !== 'number') || declared.references || field === 'id') {
    throw new Error(`${model.table}: an update expression reads and sets numeric fields of the row only (no keys), not "${field}"`);
  }
  if (integral && declared.valueType !== 'integer') throw new Error(`${model.table}: an update expression set on an integer field reads integer fields only, not "${field}"`);
}

function expressionSql(model: Model, { field, terms }: FieldExpression, integral: boolean): RawBuilder<unknown> {
  assertNumeric(model, field, integral);
  const column = sql.ref(`${model.table}.${field}`);
  // Worked out in numeric, exact on both (PostgreSQL's integer would overflow midway, and its range is checked after); a float stays one.
  const start = model.fields[field]!.column.type === 'float' ? column : sql`cast(${column} as numeric)`;
  return terms.reduce<RawBuilder<unknown>>((left, { operator, operand }) => sql`(${left} ${sql.raw(operator)} ${operandSql(model, operand, integral)})`, start);
}

/**
 * Every record meeting `conditions` (filters of the query language, over the model's fields)
 * changed by one `UPDATE … WHERE`: each of `changes` a plain value or an expression of the row as
 * the statement finds it (`F('stock').minus(q)`, `increment(1)`), so that concurrent updates add
 * up, and a condition on the stored values (`stock__gte: q`) is decided with the row locked by
 * the write itself. How many records it changed; a declared constraint refuses as RecordRefused.
 * An expression's value must lie in its field's ranges (its kind's, declared ones: Field.ranges),
 * compared exactly in the database: the records are read locked first, in the update's transaction,
 * and a value outside refuses the whole update as RecordRefused naming the field; the UPDATE is
 * conditional on the ranges too, so a record that comes to meet `conditions` meanwhile is never
 * stored out of range. A decimal's value is rounded to its places, as PostgreSQL stores it.
 * Not async: a change or condition that could never apply (an expression over text) throws at once,
 * before any statement, as the programming error it is.
 */
export function updateMatching(database: Database, model: Model, conditions: readonly Filter[], changes: Row): Promise<number> {
  const plain = toDriverValues(model, Object.fromEntries(Object.entries(changes).filter(([, value]) => !isComputed(value))));
  const set: Record<string, unknown> = { ...plain };
  const bounds: { field: string; message: string; within: RawBuilder<SqlBool> }[] = [];
  for (const [field, value] of Object.entries(changes)) {
    if (!isComputed(value)) continue;
    assertNumeric(model, field);
    const declared = model.fields[field]!;
    const computed = expressionSql(model, asExpression(field, value), declared.valueType === 'integer');
    const places = declared.kind === 'decimal' ? declared.column.places : undefined;
    const stored = places === undefined ? computed : sql`round(${computed}, ${sql.lit(places)})`;
    set[field] = stored;
    const exact = declared.valueType === 'integer' ? storeDatabase(database).capabilities.exactArithmetic(stored) : sql`1 = 1`;
    for (const { min, max, message } of declared.ranges ?? []) {
      const low = min === undefined ? sql`1 = 1` : sql`${stored} >= cast(${min} as numeric)`;
      const high = max === undefined ? sql`1 = 1` : sql`${stored} <= cast(${max} as numeric)`;
      bounds.push({ field, message, within: sql<SqlBool>`(${exact} and ${low} and ${high})` });
    }
  }
  if (Object.keys(set).length === 0) throw new Error(`${model.table}: an update changes at least one field`);
  const selected = (eb: Where) => eb.and(compileConditions(database, model.fields, model.table, conditions, eb));
  const update = async (database: Database): Promise<number> => {
    const rows = await storeDatabase(database)
      .db.updateTable(model.table)
      .set(set)
      .where((eb) => eb.and([selected(eb), ...bounds.map(({ within }) => within)]))
      .returning('id')
      .execute();
    noteChange(database, model.table, 'updated', rows.map((row: Row) => row.id as RecordId));
    return rows.length;
  };
  if (bounds.length === 0) return refusing(database, model, changes, plain, () => update(database));
  return inTransaction(database, (transaction) =>
    refusing(transaction, model, changes, plain, async () => {
      const { db, capabilities } = storeDatabase(transaction);
      // Each range's check over every record selected, those locked until the update (SQLite's write transaction excludes other writers already).
      const checked = db
        .selectFrom(model.table)
        .select(bounds.map(({ within }, index) => sql<number>`case when ${within} then 1 else 0 end`.as(`within_${index}`)))
        .where(selected);
      const target = capabilities.supportsRowLocks ? checked.forUpdate() : checked;
      const found: Row | undefined = await db
        .selectFrom(target.as('target'))
        .select(bounds.map((_, index) => sql<number>`min(${sql.ref(`target.within_${index}`)})`.as(`within_${index}`)))
        .executeTakeFirst();
      const outside = bounds.filter((_, index) => found !== undefined && Number(found[`within_${index}`] ?? 1) === 0);
      if (outside.length > 0) {
        const details: Record<string, string[]> = {};
        for (const { field, message } of outside) (details[field] ??= []).push(message);
        throw new RecordRefused(details);
      }
      return update(transaction);
    }),
  );
}
