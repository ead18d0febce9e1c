/**
 * The rows of a join table (a many-to-many): which records of a table exist among some ids, and one
 * record's links replaced by others. Every identifier comes from a declaration; every value is bound.
 */
import { storeDatabase, type Database } from './database.js';
import type { RecordId } from './records.js';

/** A join table's name and its two columns: `from` names the record, `to` the record it is linked to. */
export interface JoinColumns {
  readonly table: string;
  readonly from: string;
  readonly to: string;
}

/** The ids, in their order, that name no row of `table`: one statement. */
export async function missingIds(database: Database, table: string, ids: readonly RecordId[]): Promise<RecordId[]> {
  if (ids.length === 0) return [];
  const rows = await storeDatabase(database).db.selectFrom(table).select('id').where('id', 'in', ids).execute();
  const found = new Set(rows.map((row) => String(row.id)));
  return ids.filter((id) => !found.has(String(id)));
}

/** The id of the row of `table` whose (unique) `column` is `value`, if there is one. */
export async function idWhere(database: Database, table: string, column: string, value: unknown): Promise<RecordId | undefined> {
  const row = await storeDatabase(database).db.selectFrom(table).select('id').where(column, '=', value).executeTakeFirst();
  return row?.id as RecordId | undefined;
}

/** The ids of the rows of `table` whose (unique) `column` is one of `values`, by that column's value as text: one statement. */
export async function idsWhere(database: Database, table: string, column: string, values: readonly unknown[]): Promise<Map<string, RecordId>> {
  if (values.length === 0) return new Map();
  const rows = await storeDatabase(database).db.selectFrom(table).select(['id', column]).where(column, 'in', values).execute();
  return new Map(rows.map((row) => [String(row[column]), row.id as RecordId]));
}

/** The record `id`'s links, now exactly `ids`: a delete and an insert (none when `ids` is empty), in the caller's transaction. */
export async function replaceJoinRows(database: Database, join: JoinColumns, id: RecordId, ids: readonly RecordId[]): Promise<void> {
  const { db } = storeDatabase(database);
  await db.deleteFrom(join.table).where(join.from, '=', id).execute();
  if (ids.length === 0) return;
  await db
    .insertInto(join.table)
    .values(ids.map((linked) => ({ [join.from]: id, [join.to]: linked })))
    .execute();
}
