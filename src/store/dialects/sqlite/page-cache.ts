/**
 * Every SQLite connection's page cache is set, never left to the build: better-sqlite3 compiles
 * SQLite with a default of 16,000 KiB (SQLite's own is 2,000), and the server's connection filled
 * it as the database grew, so RSS rose for as long as the file did (bench/SOAK.md). A bound per
 * connection, stated and settable (docs/databases.md, SQLite's memory).
 */
import type SQLite from 'better-sqlite3';

/** Each connection's page cache by default, in KiB: SQLite's own default. */
export const DEFAULT_CACHE_KIB = 2000;

export function limitPageCache(connection: SQLite.Database, kib: number): void {
  // Negative: a size in KiB, not in pages, so the bound holds whatever the page size.
  connection.pragma(`cache_size = -${Math.trunc(kib)}`);
}
