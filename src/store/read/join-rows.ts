/**
 * The rows of a join table (a many-to-many): which records of a table exist among some ids, and one
 * record's links replaced by others. Every identifier comes from a declaration; every value is bound.
 * A record the request may not see is, here too, one that does not exist (store/conditions/table-scopes.ts).
 */
import type { SelectQueryBuilder } from 'kysely';
import { storeDatabase, type Database, type Tables } from '../connection/database.js';
import { visibleRow } from '../conditions/filters.js';
import type { RecordId } from './records.js';

/** A join table's name and its two columns: `from` names the record, `to` the record it is linked to. */
export interface JoinColumns {
  readonly table: string;
  readonly from: string;
  readonly to: string;
}

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- a select over run-time tables has no static row type
type Select = SelectQueryBuilder<Tables, string, {}>;

/** The rows of `table` the request may see. */
function visibleRows(database: Database, table: string): Select {
  const query = storeDatabase(database).db.selectFrom(table) as Select;
  const visible = visibleRow(database, table, table);
  return visible ? query.where(visible) : query;
}

/** The ids, in their order, that name no row of `table` the request may see: one statement. */
export async function missingIds(database: Database, table: string, ids: readonly RecordId[]): Promise<RecordId[]> {
  if (ids.length === 0) return [];
  const rows = await visibleRows(database, table).select('id').where('id', 'in', ids).execute();
  const found = new Set(rows.map((row) => String(row.id)));
  return ids.filter((id) => !found.has(String(id)));
}

/** The id of the row of `table` (one the request may see) whose (unique) `column` is `value`, if there is one. */
export async function idWhere(database: Database, table: string, column: string, value: unknown): Promise<RecordId | undefined> {
  const row = await visibleRows(database, table).select('id').where(column, '=', value).executeTakeFirst();
  return row?.id as RecordId | undefined;
}

/** The ids of the rows of `table` (those the request may see) whose (unique) `column` is one of `values`, by that column's value as text: one statement. */
export async function idsWhere(database: Database, table: string, column: string, values: readonly unknown[]): Promise<Map<string, RecordId>> {
  if (values.length === 0) return new Map();
  const rows = await visibleRows(database, table).select(['id', column]).where(column, 'in', values).execute();
  return new Map(rows.map((row) => [String(row[column]), row.id as RecordId]));
}

/**
 * The record `id`'s links, now exactly `ids`: a delete and an insert (none when `ids` is empty), in
 * the caller's transaction. Links the request may not see (to a record it may not see) are not its
 * to remove: they stay, as row-level security leaves the rows a DELETE cannot see.
 */
export async function replaceJoinRows(database: Database, join: JoinColumns, id: RecordId, ids: readonly RecordId[]): Promise<void> {
  const { db } = storeDatabase(database);
  const visible = visibleRow(database, join.table, join.table);
  await db
    .deleteFrom(join.table)
    .where(join.from, '=', id)
    .$if(visible !== undefined, (query) => query.where(visible!))
    .execute();
  if (ids.length === 0) return;
  await db
    .insertInto(join.table)
    .values(ids.map((linked) => ({ [join.from]: id, [join.to]: linked })))
    .execute();
}
