/** PostgreSQL's rows moved to another table while the former still serves (see `SqlTypes.movedRows`). */
import { sql } from 'kysely';
import type { RowsMove } from '../capabilities.js';

const quoted = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/**
 * The former table becomes a view of the new one's rows: one table holds them, so the two releases
 * never wait for each other's rows (a copy kept by triggers both ways makes a grant and a revocation
 * of one name, one by each release at once, deadlock: each holds its own table's row and waits for
 * the other's). A view of one table is updatable, ON CONFLICT included, so the previous release's
 * reads and writes run on it unchanged; their prepared statements are planned again against it.
 */
export function postgresMovedRows(from: string, to: string, key: readonly string[]): RowsMove {
  const columns = key.map(quoted).join(', ');
  return {
    expand: [
      // Before the copy: a write of the former table waits for the commit, then reaches the view.
      `LOCK TABLE ${quoted(from)} IN ACCESS EXCLUSIVE MODE`,
      `INSERT INTO ${quoted(to)} (${columns}) SELECT ${columns} FROM ${quoted(from)} ORDER BY ${columns} ON CONFLICT (${columns}) DO NOTHING`,
      `DROP TABLE ${quoted(from)}`,
      `CREATE VIEW ${quoted(from)} AS SELECT ${columns} FROM ${quoted(to)}`,
    ].map((text) => sql.raw(text)),
    contract: [sql.raw(`DROP VIEW IF EXISTS ${quoted(from)}`)],
  };
}
