/**
 * better-sqlite3, loaded when a `sqlite:` database is first opened rather than when the store is
 * imported: it is an optional dependency (a native module compiled or downloaded at install), so
 * an app on PostgreSQL alone can install without it (`npm install --omit=optional`). Loaded with
 * require, as the CommonJS package it is, so opening a database stays synchronous.
 */
import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';

export type SqliteDriver = typeof SQLite;

let driver: SqliteDriver | undefined;

export function sqliteDriver(): SqliteDriver {
  if (driver) return driver;
  try {
    driver = createRequire(import.meta.url)('better-sqlite3') as SqliteDriver;
  } catch (error) {
    if ((error as { code?: string }).code !== 'MODULE_NOT_FOUND' || !String((error as Error).message).includes("'better-sqlite3'")) throw error;
    throw new Error(
      'A sqlite: database (DATABASE_URL\'s default) needs the driver better-sqlite3, an optional dependency of restfold ' +
        'that is not installed (an install with --omit=optional leaves it out): run "npm install better-sqlite3", ' +
        'or set DATABASE_URL to a postgres:// URL.',
      { cause: error },
    );
  }
  return driver;
}
