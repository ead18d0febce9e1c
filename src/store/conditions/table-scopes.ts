/**
 * Row-level scopes in the store (PostgreSQL's row-level security, its USING condition): a
 * request's database carries the rows it may see (core's TableScopes), and every statement built
 * over a scoped table asks `scopesOf` for that table's scopes, whatever path built it: a
 * nested record's join, an aggregate's or a batch's subquery, a filter across a relation, the check
 * of a written key. A statement compiled once and kept (../statements/compiled.ts) is kept only where its
 * build asked for no scoped table's scopes, which are the request's own.
 */
import type { RecordScope, TableScopes } from '../../core/list-query.js';
import { relatedReads, type Selection } from '../../core/rows.js';
import type { Database } from '../connection/database.js';

/** The request's scopes of `table`: undefined where the database carries no scopes or the table is seen whole. */
export function scopesOf(database: Database, table: string): readonly RecordScope[] | undefined {
  const { scopes } = database;
  return scopes?.scopedTables.has(table) ? scopes.scopesOf(table) : undefined;
}

/** The database as one request sees it: the same handle, carrying the request's scopes. */
export const withScopes = (database: Database, scopes: TableScopes): Database => ({ ...database, scopes });

/** The database as the app's own code sees it (hooks, custom actions): every row, as `recordStore` reads them. */
export const unscoped = (database: Database): Database => (database.scopes ? { ...database, scopes: undefined } : database);

const readsByScoped = new WeakMap<ReadonlySet<string>, WeakMap<Selection, boolean>>();

/** Whether reading `selection` (its joins, aggregates and batches, through their join tables) reaches a scoped table. */
export function readsScoped(selection: Selection, scopedTables: ReadonlySet<string>): boolean {
  if (scopedTables.size === 0) return false;
  let known = readsByScoped.get(scopedTables);
  if (!known) readsByScoped.set(scopedTables, (known = new WeakMap()));
  let reads = known.get(selection);
  if (reads === undefined) {
    reads =
      relatedReads(selection).some(({ table }) => scopedTables.has(table)) ||
      (selection.batches ?? []).some(
        (batch) => scopedTables.has(batch.table) || (batch.through !== undefined && scopedTables.has(batch.through.table)) || readsScoped(batch.selection, scopedTables),
      );
    known.set(selection, reads);
  }
  return reads;
}
