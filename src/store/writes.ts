/**
 * Writing records, each in as few statements as the database allows. A create is one
 * `INSERT … RETURNING`, its nested fields read in the same statement where a WITH clause may hold
 * the write; an update is one `UPDATE … RETURNING`, after a locked read in the same transaction when
 * the caller must see the record first; a delete is one `DELETE`, likewise. Foreign keys are checked by their
 * constraints, not by reads beforehand: a refusal comes back as a RecordRefused naming the field.
 */
import type { Compilable } from 'kysely';
import type { RecordScope } from '../core/list-query.js';
import type { Model } from '../core/model.js';
import { RecordRefused } from '../core/refused.js';
import type { Row, Selection } from '../core/rows.js';
import type { Database } from './database.js';
import { findScopedRecord } from './list.js';
import { assembleRow, findRecord, fromSelection, recordExists, selectColumns, toDriverValues, type RecordId, type RowQuery } from './records.js';

/**
 * The caller's look at the locked record before it is written (permissions, preconditions, writes of
 * its own through `transaction`): it throws to refuse the write.
 */
export type BeforeWrite = (row: Row, transaction: Database) => Promise<void>;

/** `work` in a transaction: the one already open on `database`, else a new one, committed when `work` resolves. */
export function inTransaction<T>(database: Database, work: (transaction: Database) => Promise<T>): Promise<T> {
  if (database.db.isTransaction) return work(database);
  return database.db.transaction().execute((transaction) => work({ ...database, db: transaction }));
}

/** An INSERT or UPDATE, ready for its RETURNING clause. */
interface Returnable {
  returning(columns: readonly string[]): Compilable<Row> & { executeTakeFirst(): Promise<Row | undefined> };
}

const WRITTEN = 'written';

/**
 * The written row as the selection reads it. One statement where the database runs a write inside a
 * WITH clause (the nested fields and aggregates joined to what it returns); else the write returns
 * the row's own columns, and the rest is read after it. A record nesting or aggregating its own table
 * is read after it too: within one statement, that table is seen as it was before the write.
 */
async function writtenRow(database: Database, selection: Selection, write: Returnable): Promise<Row | undefined> {
  const aggregates = selection.aggregates ?? [];
  const nested = selection.joins.length > 0 || aggregates.length > 0;
  const related = [...selection.joins, ...aggregates];
  const oneStatement = database.capabilities.supportsModifyingCte && !related.some((read) => read.table === selection.table);
  if (nested && oneStatement) {
    const from = database.db.with(WRITTEN, () => write.returning(selection.columns) as never).selectFrom(`${WRITTEN} as ${selection.table}`);
    const row = await selectColumns(fromSelection(database, selection, from as unknown as RowQuery), selection).executeTakeFirst();
    return row && assembleRow(row, selection);
  }
  const row = await write.returning(selection.columns).executeTakeFirst();
  if (!row || !nested) return row;
  // Read apart, the record may be gone already (deleted by another request): then it is shown as written.
  return (await findRecord(database, selection, row.id as RecordId)) ?? assembleRow(row, selection);
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

/** A constraint failure of a write of `values` → the RecordRefused it means; undefined for any other error. */
async function refusal(database: Database, model: Model, values: Row, error: unknown): Promise<RecordRefused | undefined> {
  const clashing = database.uniqueViolation(error);
  if (clashing) return new RecordRefused(detailsFor(clashing, () => `A record with this ${clashing.join(', ') || 'value'} already exists.`));
  const reported = database.missingReference(error);
  if (!reported) return undefined;
  // SQLite does not say which foreign key failed; its transaction survives the failed statement, so the record's own references tell.
  const missing = reported.length ? reported : await missingReferences(database, model, values);
  return new RecordRefused(
    detailsFor(missing, (column) =>
      column in values ? `Invalid id "${String(values[column])}": object does not exist.` : 'The object this refers to does not exist.',
    ),
  );
}

/** `write`, with a constraint failure thrown as the RecordRefused it means. */
async function refusing<T>(database: Database, model: Model, values: Row, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    throw (await refusal(database, model, values, error)) ?? error;
  }
}

/** A new record, as `selection` reads it. */
export function createRecord(database: Database, model: Model, selection: Selection, values: Row): Promise<Row> {
  return refusing(database, model, values, async () => {
    const write = database.db.insertInto(model.table).values(toDriverValues(model, values));
    return (await writtenRow(database, selection, write as unknown as Returnable))!;
  });
}

/** New records, in order, all or none (a refusal carries the refused record's index). */
export function createRecords(database: Database, model: Model, selection: Selection, records: readonly Row[]): Promise<Row[]> {
  return inTransaction(database, async (scoped) => {
    const rows: Row[] = [];
    for (const [index, values] of records.entries()) {
      try {
        rows.push(await createRecord(scoped, model, selection, values));
      } catch (error) {
        throw error instanceof RecordRefused ? new RecordRefused(error.details, index) : error;
      }
    }
    return rows;
  });
}

/** The locked record (undefined when there is none, or it is outside the scope), once `beforeWrite` has seen it. */
async function lockedRecord(database: Database, selection: Selection, id: RecordId, beforeWrite?: BeforeWrite, scope?: RecordScope): Promise<Row | undefined> {
  const row = scope
    ? await findScopedRecord(database, { selection, fields: scope.fields, searchFields: [] }, id, scope.conditions, { lock: true })
    : await findRecord(database, selection, id, { lock: true });
  if (row) await beforeWrite?.(row, database);
  return row;
}

/**
 * The record changed to `values`, as `selection` reads it; undefined when there is none (or it is
 * outside `scope`). With `beforeWrite` or `scope`, in one transaction: the record is read and
 * locked, `beforeWrite` sees it, then it is written, so two writers that checked the same version
 * of it cannot both succeed. Without them, one statement. An empty change stores nothing.
 */
export function updateRecord(
  database: Database,
  model: Model,
  selection: Selection,
  id: RecordId,
  values: Row,
  beforeWrite?: BeforeWrite,
  scope?: RecordScope,
): Promise<Row | undefined> {
  const changed = (database: Database) =>
    refusing(database, model, values, () => {
      const write = database.db.updateTable(model.table).set(toDriverValues(model, values)).where('id', '=', id);
      return writtenRow(database, selection, write as unknown as Returnable);
    });
  const empty = Object.keys(values).length === 0;
  if (!beforeWrite && !scope) return empty ? findRecord(database, selection, id) : changed(database);
  return inTransaction(database, async (transaction) => {
    const row = await lockedRecord(transaction, selection, id, beforeWrite, scope);
    return !row || empty ? row : changed(transaction);
  });
}

/**
 * Whether the record existed (and is now gone). One statement; with `beforeWrite` or `scope`, the
 * record is read and locked first, in a transaction, so that it sees the record that is deleted.
 */
export async function deleteRecord(
  database: Database,
  selection: Selection,
  id: RecordId,
  beforeWrite?: BeforeWrite,
  scope?: RecordScope,
): Promise<boolean> {
  const remove = async (database: Database) =>
    (await database.db.deleteFrom(selection.table).where('id', '=', id).executeTakeFirst()).numDeletedRows > 0n;
  if (!beforeWrite && !scope) return remove(database);
  return inTransaction(database, async (transaction) => (await lockedRecord(transaction, selection, id, beforeWrite, scope)) !== undefined && remove(transaction));
}
