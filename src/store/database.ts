/**
 * DATABASE_URL → a Kysely instance, and the few places where SQLite and
 * PostgreSQL differ (case-insensitive matching, constraint errors, outages).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type Expression, type RawBuilder, type SqlBool, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import { CurrentSchemaPostgresDialect } from './introspection.js';

/** Tables are declared at run time, so the schema type is open. */
export type Tables = Record<string, Record<string, unknown>>;
export type Dialect = 'sqlite' | 'postgres';

export interface DatabaseOptions {
  /** PostgreSQL: the most connections open at once (DB_MAX_CONNECTIONS). */
  maxConnections?: number;
  /** PostgreSQL: connections kept open when idle (DB_MAX_IDLE_CONNECTIONS); more are closed after `idleTimeoutMillis`. */
  maxIdleConnections?: number;
  idleTimeoutMillis?: number;
}

export interface Database {
  readonly db: Kysely<Tables>;
  readonly dialect: Dialect;
  /** `column LIKE pattern`, where pattern uses `%` and `_` and escapes with `\`; `insensitive` folds case. */
  like(column: Expression<unknown>, pattern: string, insensitive: boolean): RawBuilder<SqlBool>;
  /** The columns of a unique constraint this error reports, if it is one. */
  uniqueViolation(error: unknown): string[] | undefined;
  /** Pool connections by state (PostgreSQL); undefined where there is no pool. */
  poolStats(): { total: number; idle: number; waiting: number } | undefined;
  /** The columns of a foreign key whose target row is missing (deleted meanwhile), if this error says so; [] if unknown. */
  missingReference(error: unknown): string[] | undefined;
  /** Whether an error means the database cannot be reached right now. */
  isUnavailable(error: unknown): boolean;
  close(): Promise<void>;
}

/** Escape `\`, `%` and `_` so a value matches only itself inside a LIKE pattern. */
export const escapeLike = (value: string): string => value.replace(/[\\%_]/g, '\\$&');

export function openDatabase(url: string, options: DatabaseOptions = {}): Database {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length));
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url, options);
  throw new Error('DATABASE_URL must start with sqlite: or postgres://');
}

function openSqlite(path: string): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const connection = new SQLite(path);
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  // SQLite's own lower() and LIKE fold ASCII only; these fold all of Unicode, as PostgreSQL does.
  connection.function('casefold', { deterministic: true }, (text: unknown) =>
    typeof text === 'string' ? text.toLowerCase() : text,
  );
  connection.function('like_cs', { deterministic: true }, (pattern: unknown, text: unknown) =>
    typeof pattern === 'string' && typeof text === 'string' ? (likeToRegExp(pattern).test(text) ? 1 : 0) : null,
  );
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: withStatementCache(connection) }) });
  return {
    db,
    dialect: 'sqlite',
    like: (column, pattern, insensitive) =>
      insensitive
        ? sql<SqlBool>`like_cs(casefold(${pattern}), casefold(${column}))`
        : sql<SqlBool>`like_cs(${pattern}, ${column})`,
    uniqueViolation(error) {
      const match = /UNIQUE constraint failed: (.+)$/.exec(error instanceof Error ? error.message : '');
      return match?.[1]?.split(', ').map((column) => column.split('.').pop()!);
    },
    poolStats: () => undefined,
    // SQLite does not say which foreign key failed.
    missingReference: (error) =>
      error instanceof SQLite.SqliteError && error.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' ? [] : undefined,
    isUnavailable: (error) => error instanceof SQLite.SqliteError && /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN)/.test(error.code),
    close: () => db.destroy(),
  };
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew; a list runs the same few SQL texts over
 * and over, so prepared statements are kept by their text. (better-sqlite3
 * runs each synchronously, so one statement is never in use twice at once.)
 */
function withStatementCache(connection: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare(text) {
      let statement = statements.get(text);
      if (!statement) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear();
        statement = connection.prepare(text);
        statements.set(text, statement);
      }
      return statement;
    },
    close: () => connection.close(),
  };
}

const likeCache = new Map<string, RegExp>();

/** A LIKE pattern (`%`, `_`, `\` escapes) → an anchored, case-sensitive RegExp. */
function likeToRegExp(pattern: string): RegExp {
  let regexp = likeCache.get(pattern);
  if (regexp) return regexp;
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i]!);
    else if (char === '%') source += '[\\s\\S]*';
    else if (char === '_') source += '[\\s\\S]';
    else source += escapeRegExp(char);
  }
  regexp = new RegExp(`^${source}$`, 'u');
  if (likeCache.size > 1000) likeCache.clear();
  likeCache.set(pattern, regexp);
  return regexp;
}

// Only syntax characters: under the `u` flag escaping anything else (`-`, say) is a SyntaxError.
const escapeRegExp = (char: string): string => char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** SQLSTATE classes that mean "no connection", not "bad query". */
const UNAVAILABLE_CODES = /^(08|57P0[1-3]|53300)/;
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

function openPostgres(url: string, options: DatabaseOptions): Database {
  const max = options.maxConnections ?? 25;
  const pool = new pg.Pool({
    connectionString: url,
    // The URL's own application_name, if any, wins (it is parsed over these settings).
    application_name: 'restfold',
    max,
    // pg-pool closes a connection idle for idleTimeoutMillis only while more than `min` are open,
    // so at rest `min` stay open: that is the idle allowance. It never opens connections ahead.
    min: Math.min(options.maxIdleConnections ?? 5, max),
    idleTimeoutMillis: options.idleTimeoutMillis ?? 10_000,
    connectionTimeoutMillis: 5_000,
    types: { getTypeParser: postgresTypeParser },
  });
  // A connection lost while idle (pool 'error') or while checked out (the client's own 'error',
  // which pg emits besides failing the query) must not crash the process: the query in flight
  // fails on its own, and pg-pool drops the broken client when it is released.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Tables>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    like: (column, pattern, insensitive) =>
      insensitive ? sql<SqlBool>`${column} ILIKE ${pattern}` : sql<SqlBool>`${column} LIKE ${pattern}`,
    uniqueViolation(error) {
      const { code, detail } = (error ?? {}) as { code?: string; detail?: string };
      if (code !== '23505') return undefined;
      const match = /^Key \((.+?)\)=/.exec(detail ?? '');
      return match?.[1]?.split(', ') ?? [];
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    missingReference(error) {
      const { code, detail } = (error ?? {}) as { code?: string; detail?: string };
      const match = /^Key \((.+?)\)=.* is not present in table/.exec(detail ?? '');
      if (code !== '23503' || !match) return undefined;
      return match[1]!.split(', ');
    },
    isUnavailable(error) {
      const { code, message } = (error ?? {}) as { code?: string; message?: string };
      if (code && (UNAVAILABLE_CODES.test(code) || UNAVAILABLE_ERRNOS.has(code))) return true;
      return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(message ?? '');
    },
    close: () => db.destroy(),
  };
}

const INT8 = 20;

/** bigint columns and counts come back as numbers (ids stay far below 2^53). */
function postgresTypeParser(oid: number, format?: string): (value: string) => unknown {
  if (oid === INT8) return (value: string) => Number(value);
  return pg.types.getTypeParser(oid, format as 'text');
}
