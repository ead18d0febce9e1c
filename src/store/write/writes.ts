/**
 * Writing records: plain operations, each taking values and answering what it wrote, in as few
 * statements as the database allows. A create is one `INSERT … RETURNING`, its nested fields read in
 * the same statement where a WITH clause may hold the write; an update one `UPDATE … RETURNING`,
 * or, conditional on the row's version as the caller saw it, one that answers nothing when the row
 * moved on; a delete one `DELETE`; a locked read holds a record for the transaction it runs in.
 * Which of them a write runs, in which transaction, and what it checks between them, is the
 * framework's write unit (framework/write/unit.ts). Foreign keys are checked by their
 * constraints, not by reads beforehand: a refusal comes back as a RecordRefused naming the field. A
 * key naming a row of a scoped table is read first, in one statement, for a request that may
 * not see every row of it (store/conditions/table-scopes.ts): a row it may not see is refused as a missing one is.
 */
import { sql, type AliasedRawBuilder, type RawBuilder, type Compilable, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Filter, ListSource, RecordScope } from '../../core/list-query.js';
import { asExpression, FieldExpression, isComputed, type Operand } from '../../core/expressions.js';
import type { Model } from '../../core/model.js';
import { constraintRefusal } from '../../core/constraints.js';
import { clashDetails, RecordProtected, RecordRefused } from '../../core/refused.js';
import { recordKeyOf, relatedReads, type Row, type Selection } from '../../core/rows.js';
import { storeDatabase, type Database, type Tables } from '../connection/database.js';
import { noteChange } from '../changes/changes.js';
import { findScopedRecord, matching, type Matching } from '../read/list.js';
import type { Placeholder } from '../statements/placeholder.js';
import { compiledStatement, type Compiled } from '../statements/compiled.js';
import { compileConditions, visibleRow } from '../conditions/filters.js';
import { assembleRow, attachBatches, findRecord, fromSelection, recordExists, returnedColumns, selectColumns, withBatches, type RecordId, type RowQuery } from '../read/records.js';
import { driverShape, toDriverValues, type DriverShape } from './driver-values.js';

type Where = ExpressionBuilder<Tables, string>;

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

type WriteKind = 'insert' | 'insert-if-absent' | 'update' | 'update-versioned';
const statementShapes = new WeakMap<DriverShape, Partial<Record<WriteKind, string>>>();

/** What a write of `kind` of the shape's columns is compiled under, made once per shape rather than per write. */
function statementShape(shape: DriverShape, kind: WriteKind): string {
  let named = statementShapes.get(shape);
  if (!named) statementShapes.set(shape, (named = {}));
  return (named[kind] ??= `${kind} ${shape.key}`);
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
    const shown = asSelected(database, selection, row);
    return shown instanceof Promise ? shown : withBatches(database, selection, shown);
  });
}

/** Whether a written row's nested fields are read again after the write (readInOneStatement's other side). */
const readApart = (database: Database, selection: Selection): boolean => readsRelated(selection) && !readInOneStatement(database, selection);

/**
 * A written row as `selection` reads it: itself, or assembled where its nested fields came in the
 * write's statement (its batched relations still to attach); else read again, with them, or, gone
 * meanwhile (deleted by another request), shown as written, with them too.
 */
function asSelected(database: Database, selection: Selection, row: Row): Row | Promise<Row> {
  if (!readsRelated(selection)) return row;
  if (!readApart(database, selection)) return assembleRow(row, selection);
  return findRecord(database, selection, row[recordKeyOf(selection)] as RecordId).then((found) => found ?? withBatches(database, selection, assembleRow(row, selection)));
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
 * The foreign keys among the `columns` set to `parameters` naming a row of a scoped table
 * (store/conditions/table-scopes.ts): those naming none the request may see, in one statement;
 * undefined, with no statement, when none names a scoped table. `kept`: the record as stored, whose
 * keys an update leaves as they are.
 */
function hiddenReferences(database: Database, model: Model, columns: readonly string[], parameters: readonly unknown[], kept?: Row): Promise<string[]> | undefined {
  // Nothing to look at (no allocation per write) where the request sees every row.
  if (!database.scopes) return undefined;
  const { db } = storeDatabase(database);
  const checked = columns.flatMap((name, index) => {
    const value = parameters[index];
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
 * key names a row of a scoped table, refused as naming none when it names one the request may
 * not see (row-level security's WITH CHECK): the answer is the one for a row that does not exist.
 */
function refusing<T>(database: Database, model: Model, values: Row, columns: readonly string[], parameters: readonly unknown[], write: () => Promise<T>, kept?: Row): Promise<T> {
  const hidden = hiddenReferences(database, model, columns, parameters, kept);
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
  const shape = driverShape(model, values);
  const parameters = shape.parameters(values);
  const { columns } = shape;
  const query = writeQuery(selection, statementShape(shape, ifAbsent ? 'insert-if-absent' : 'insert'), columns.length, (database, placeholders) => {
    const into = storeDatabase(database).db.insertInto(model.table);
    // A record of no values (a model of its key alone): `VALUES ()` is no SQL on either database.
    const insert = columns.length === 0 ? into.defaultValues() : into.values(bound(columns, placeholders));
    return (ifAbsent ? insert.onConflict((conflict) => conflict.doNothing()) : insert) as unknown as Returnable;
  });
  return refusing(database, model, values, shape.columns, parameters, () => writtenRow(database, selection, query, parameters)).then((row) => {
    if (row) noteChange(database, model.table, 'created', [row.id as RecordId]);
    return row;
  });
}

/** A new record, as `selection` reads it. */
export const insertRow = (database: Database, model: Model, selection: Selection, values: Row): Promise<Row> =>
  inserted(database, model, selection, values, false) as Promise<Row>;

/** Most parameters one INSERT of many rows binds: under SQLite's and PostgreSQL's own limits (32 766, 65 535). */
const PARAMETERS_PER_INSERT = 30_000;
/** Most rows one INSERT of many holds. */
const ROWS_PER_INSERT = 256;

/** The INSERT of `size` rows of the shape's columns, compiled once per selection, shape and size (sizes are bounded by a collection's bulk create). */
const manyRowsQuery = (model: Model, selection: Selection, shape: DriverShape, size: number): Compiled<Row> =>
  writeQuery(selection, `${statementShape(shape, 'insert')} x${size}`, shape.columns.length * size, (database, placeholders) => {
    const { columns } = shape;
    const into = storeDatabase(database).db.insertInto(model.table);
    if (columns.length === 0) return into.defaultValues() as unknown as Returnable;
    const rows = Array.from({ length: size }, (_, row) => bound(columns, placeholders.slice(row * columns.length, (row + 1) * columns.length)));
    return into.values(rows) as unknown as Returnable;
  });

/**
 * The rows an INSERT of many returned, in the order of the records it was given: by their ids where
 * the records carry them (made on create: a UUID), else by ascending id, the order a table's own
 * counter numbers the rows of one statement in.
 */
function inGivenOrder(rows: Row[], records: readonly Row[]): Row[] {
  if (records[0] && 'id' in records[0]) {
    const byId = new Map(rows.map((row) => [String(row.id), row]));
    return records.map((record) => byId.get(String(record.id))!);
  }
  // A bigint key may come back as its digits (PostgreSQL's int8): compared as a number, it would lose precision.
  return rows.sort(({ id: one }, { id: other }) => (typeof one === 'number' && typeof other === 'number' ? one - other : BigInt(one as string) < BigInt(other as string) ? -1 : 1));
}

/** `records` (of one shape, at most one INSERT's worth) in one INSERT, as `selection` reads them. */
async function insertedMany(database: Database, model: Model, selection: Selection, shape: DriverShape, records: readonly Row[]): Promise<Row[]> {
  const parameters = records.flatMap((values) => shape.parameters(values));
  const returned = inGivenOrder(await manyRowsQuery(model, selection, shape, records.length)(database, parameters), records);
  const rows = await Promise.all(returned.map((row) => asSelected(database, selection, row)));
  // Read apart, each came with its batched relations; else they are read for all rows at once.
  if (selection.batches && !readApart(database, selection)) await attachBatches(database, selection, rows);
  noteChange(database, model.table, 'created', rows.map((row) => row.id as RecordId));
  return rows;
}

/**
 * New records, as `selection` reads them, in the order given: each run of records that set the
 * same columns in one INSERT of many rows (at most ROWS_PER_INSERT, and PARAMETERS_PER_INSERT
 * values). Several INSERTs run through `atomically` (a transaction), one alone. A refusal names no
 * record: the caller tells which by inserting them one at a time (insertRow). Where a foreign key
 * may name a row of a scoped table, each record's is checked first, as insertRow does.
 */
export async function insertRows(
  database: Database,
  model: Model,
  selection: Selection,
  records: readonly Row[],
  atomically: (work: (database: Database) => Promise<Row[]>) => Promise<Row[]>,
): Promise<Row[]> {
  const runs: { shape: DriverShape; records: readonly Row[] }[] = [];
  for (let start = 0; start < records.length; ) {
    const shape = driverShape(model, records[start]!);
    let end = start + 1;
    while (end < records.length && driverShape(model, records[end]!) === shape) end++;
    // A record of no values is inserted with its defaults alone, one per INSERT (`VALUES ()` is no SQL).
    const most = shape.columns.length === 0 ? 1 : Math.min(ROWS_PER_INSERT, Math.floor(PARAMETERS_PER_INSERT / shape.columns.length));
    for (let at = start; at < end; at += most) runs.push({ shape, records: records.slice(at, Math.min(end, at + most)) });
    start = end;
  }
  // Where the request sees every row (no scopes), nothing to check: no values converted twice.
  if (database.scopes) {
    for (const [index, values] of records.entries()) {
      const shape = driverShape(model, values);
      const missing = await hiddenReferences(database, model, shape.columns, shape.parameters(values));
      if (missing && missing.length > 0) throw new RecordRefused(missingRefusal(missing, values).details, index);
    }
  }
  const insert = async (database: Database) => {
    const rows: Row[] = [];
    for (const { shape, records } of runs) rows.push(...(await insertedMany(database, model, selection, shape, records)));
    return rows;
  };
  return runs.length === 1 ? insert(database) : atomically(insert);
}

/**
 * A new record, unless a unique constraint finds its values taken (by a record stored or being
 * stored by a transaction not yet ended, which it waits for): then undefined, by one
 * `INSERT … ON CONFLICT DO NOTHING`, which fails no transaction it runs in. Other refusals (a check,
 * a missing reference) are thrown as insertRow's.
 */
export const insertRowIfAbsent = (database: Database, model: Model, selection: Selection, values: Row): Promise<Row | undefined> =>
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

/**
 * The record locked until the transaction `database` is in ends (`SELECT … FOR UPDATE` on
 * PostgreSQL; SQLite's write transactions already run one at a time); undefined when there is none,
 * or it is outside `scope`.
 */
export const lockRecord = (database: Database, selection: Selection, id: RecordId, scope?: RecordScope): Promise<Row | undefined> =>
  scope ? findScopedRecord(database, selection, id, scope, { lock: true }) : findRecord(database, selection, id, { lock: true });

/** The UPDATE by key of the shape's columns; `versioned`: only of the row as it was at a version, bound after the key. */
const updateQuery = (model: Model, selection: Selection, shape: DriverShape, versioned: boolean): Compiled<Row> =>
  writeQuery(selection, statementShape(shape, versioned ? 'update-versioned' : 'update'), shape.columns.length + (versioned ? 2 : 1), (database, placeholders) => {
    const { columns } = shape;
    const [id, version] = placeholders.slice(columns.length);
    const write = storeDatabase(database).db.updateTable(model.table).set(bound(columns, placeholders)).where(recordKeyOf(selection), '=', id);
    return (versioned ? write.where(storeDatabase(database).capabilities.rowVersion!(model.table), '=', version as unknown as string) : write) as unknown as Returnable;
  });

/** The UPDATE (conditional on `version` when given); `kept`: the record as stored, whose foreign keys an update may keep. */
function updated(database: Database, model: Model, selection: Selection, id: RecordId, values: Row, kept: Row | undefined, version: string | undefined): Promise<Row | undefined> {
  const shape = driverShape(model, values);
  const query = updateQuery(model, selection, shape, version !== undefined);
  // The key, then the version, bound after the columns' values (a new array per write: extended, not copied).
  const bindings = shape.parameters(values);
  bindings.push(id);
  if (version !== undefined) bindings.push(version);
  return refusing(database, model, values, shape.columns, bindings, () => writtenRow(database, selection, query, bindings), kept).then((row) => {
    if (row) noteChange(database, model.table, 'updated', [row.id as RecordId], shape.columns);
    return row;
  });
}

/**
 * The record changed to `values` by one `UPDATE … RETURNING`, as `selection` reads it; undefined
 * when there is none. `kept`: the record as stored (locked), whose foreign keys the update may keep
 * unchecked. An empty change stores nothing: the record as it is (`kept`, else read).
 */
export function updateRow(database: Database, model: Model, selection: Selection, id: RecordId, values: Row, kept?: Row): Promise<Row | undefined> {
  if (Object.keys(values).length > 0) return updated(database, model, selection, id, values, kept, undefined);
  return kept ? Promise.resolve(kept) : findRecord(database, selection, id);
}

/**
 * The record changed to `values` only if it is still at `version` (its row version when `seen` was
 * read: store/read/records.ts's versionOf), by one `UPDATE … WHERE id = … AND <version> = …
 * RETURNING`, no transaction; undefined when it is not (written or deleted since, or never there).
 * `values` must set something.
 */
export const updateRowIfVersion = (database: Database, model: Model, selection: Selection, id: RecordId, values: Row, seen: Row, version: string): Promise<Row | undefined> =>
  updated(database, model, selection, id, values, seen, version);

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
 * A DELETE's statement (built from `deleted`, or `run` where the caller keeps it compiled), refused
 * by a restricting foreign key as RecordProtected naming the tables that still refer to its
 * records; the deleted records' `key` values (their ids returned too, for the change it makes).
 */
async function deleting(
  database: Database,
  table: string,
  deleted: (eb: Where) => Expression<SqlBool>,
  key = 'id',
  run = (): Promise<Row[]> => storeDatabase(database).db.deleteFrom(table).where(deleted).returning(key === 'id' ? ['id'] : ['id', key]).execute(),
): Promise<RecordId[]> {
  try {
    const rows = await run();
    noteChange(database, table, 'deleted', rows.map((row: Row) => row.id as RecordId));
    return rows.map((row: Row) => row[key] as RecordId);
  } catch (error) {
    const named = database.stillReferenced(error);
    if (named === undefined) throw error;
    throw new RecordProtected(await blockingTables(database, table, deleted, named));
  }
}

/**
 * Every record the list query's filters, search and scope select, deleted by one `DELETE … WHERE`
 * (a restricting foreign key refuses them all); the record keys of those that were.
 */
export async function deleteMatching(database: Database, source: ListSource, query: Matching): Promise<RecordId[]> {
  const { selection } = source;
  return deleting(database, selection.table, (eb) => matching(database, source, query, eb), recordKeyOf(selection));
}

/** The DELETE of one record by its key, compiled once per selection. */
const deleteByKey = (selection: Selection): Compiled<Row> =>
  compiledStatement(selection, 'delete', (database, id) => storeDatabase(database).db.deleteFrom(selection.table).where(recordKeyOf(selection), '=', id).returning(['id']));

/**
 * Whether the record existed (and met `within`'s conditions: a request's scope, the checks said as
 * conditions) and is now gone: one `DELETE`. A foreign key that restricts it throws RecordProtected
 * naming the tables that still refer to it.
 */
export async function deleteRow(database: Database, selection: Selection, id: RecordId, within?: RecordScope): Promise<boolean> {
  const { table } = selection;
  const byKey = (eb: Where) => eb(recordKeyOf(selection), '=', id);
  if (!within) return (await deleting(database, table, byKey, 'id', () => deleteByKey(selection)(database, [id]))).length > 0;
  const meeting = (eb: Where) => eb.and([byKey(eb), ...compileConditions(database, within.fields, table, within.conditions, eb, within.across)]);
  return (await deleting(database, table, meeting)).length > 0;
}

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
 * Made before it runs: a change or condition that could never apply (an expression over text)
 * throws at once, before any statement, as the programming error it is. One whose ranges it checks
 * runs in a transaction (`checksRanges`), which its caller opens.
 */
export interface MatchingUpdate {
  readonly checksRanges: boolean;
  run(database: Database): Promise<number>;
}

export function matchingUpdate(database: Database, model: Model, conditions: readonly Filter[], changes: Row): MatchingUpdate {
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
    noteChange(database, model.table, 'updated', rows.map((row: Row) => row.id as RecordId), Object.keys(set));
    return rows.length;
  };
  if (bounds.length === 0) return { checksRanges: false, run: (database) => refusing(database, model, changes, Object.keys(plain), Object.values(plain), () => update(database)) };
  const run = (transaction: Database): Promise<number> => {
    if (!storeDatabase(transaction).db.isTransaction) throw new Error(`${model.table}: an update kept within its fields' ranges runs in a transaction`);
    return refusing(transaction, model, changes, Object.keys(plain), Object.values(plain), async () => {
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
    });
  };
  return { checksRanges: true, run };
}
