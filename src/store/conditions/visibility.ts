/**
 * Row-level visibility in the store (PostgreSQL's row-level security, its USING condition): a
 * request's database carries the rows it may see (core's Visibility), and every statement built
 * over a restricted table asks `withinOf` for that table's scopes, whatever path built it: a
 * nested record's join, an aggregate's or a batch's subquery, a filter across a relation, the check
 * of a written key. A statement compiled once and kept (../statements/compiled.ts) is kept only where its
 * build asked for no restricted table's scopes, which are the request's own.
 */
import type { RecordScope, Visibility } from '../../core/list-query.js';
import { relatedReads, type Selection } from '../../core/rows.js';
import type { Database } from '../connection/database.js';

/** The request's scopes of `table`: undefined where the database carries no visibility or the table is seen whole. */
export function withinOf(database: Database, table: string): readonly RecordScope[] | undefined {
  const { visibility } = database;
  return visibility?.restricted.has(table) ? visibility.within(table) : undefined;
}

/** The database as one request sees it: the same handle, carrying the request's visibility. */
export const restrictedTo = (database: Database, visibility: Visibility): Database => ({ ...database, visibility });

/** The database as the app's own code sees it (hooks, custom actions): every row, as `recordStore` reads them. */
export const unrestricted = (database: Database): Database => (database.visibility ? { ...database, visibility: undefined } : database);

const readsByRestricted = new WeakMap<ReadonlySet<string>, WeakMap<Selection, boolean>>();

/** Whether reading `selection` (its joins, aggregates and batches, through their join tables) reaches a restricted table. */
export function readsRestricted(selection: Selection, restricted: ReadonlySet<string>): boolean {
  if (restricted.size === 0) return false;
  let known = readsByRestricted.get(restricted);
  if (!known) readsByRestricted.set(restricted, (known = new WeakMap()));
  let reads = known.get(selection);
  if (reads === undefined) {
    reads =
      relatedReads(selection).some(({ table }) => restricted.has(table)) ||
      (selection.batches ?? []).some(
        (batch) => restricted.has(batch.table) || (batch.through !== undefined && restricted.has(batch.through.table)) || readsRestricted(batch.selection, restricted),
      );
    known.set(selection, reads);
  }
  return reads;
}
