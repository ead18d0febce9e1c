/**
 * Records found by code with the query language's conditions (a record store's `list` with
 * lookups): one statement, unpaged, for the short lists a route or hook asks for.
 */
import { sql } from 'kysely';
import type { Filter, Ordering } from '../../core/list-query.js';
import type { Model } from '../../core/model.js';
import type { Row, Selection } from '../../core/rows.js';
import type { Database } from '../connection/database.js';
import { compileConditions } from './filters.js';
import { assembleRow, attachBatches, fromSelection, selectColumns } from '../read/records.js';

/** Every record of `selection` meeting `conditions` (over the model's fields), in `ordering` order. */
export async function recordsMatching(database: Database, model: Model, selection: Selection, conditions: readonly Filter[], ordering: readonly Ordering[]): Promise<Row[]> {
  let query = selectColumns(database, fromSelection(database, selection), selection).where((eb) =>
    eb.and(compileConditions(database, model.fields, selection.table, conditions, eb)),
  );
  for (const { field, descending } of ordering) query = query.orderBy(sql.ref(`${selection.table}.${field}`), descending ? 'desc' : 'asc');
  const rows = (await query.execute()).map((row) => assembleRow(row, selection));
  await attachBatches(database, selection, rows);
  return rows;
}
