/**
 * DATABASE_URL → a Kysely instance, and the few places where SQLite and
 * PostgreSQL differ (case-insensitive matching, constraint errors, outages).
 */
import { hash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type SQLite from 'better-sqlite3';
import { CompiledQuery, DummyDriver, Kysely, PostgresDialect, SqliteAdapter, SqliteDialect, SqliteIntrospector, SqliteQueryCompiler, sql, type DatabaseConnection, type SqliteDialectConfig, type Driver, type QueryResult, type Expression, type RawBuilder, type SqlBool, type SqliteDatabase, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { cached } from '../../core/cache.js';
import type { TableScopes } from '../../core/list-query.js';
import type { Row } from '../../core/rows.js';
import type { Dialect, DialectCapabilities } from '../dialects/capabilities.js';
import { postgresCapabilities } from '../dialects/postgres/capabilities.js';
import { sqliteCapabilities } from '../dialects/sqlite/capabilities.js';
import { sqliteDriver } from '../dialects/sqlite/driver.js';
import { begunOn, withDeferredBegin } from './deferred-begin.js';
import { isStalePlan, NamedStatement, runOn, UnnamedStatement, type StatementResult } from '../dialects/postgres/named-statement.js';
import { registerSqlFunctions } from '../dialects/sqlite/functions.js';
import { DEFAULT_CACHE_KIB, limitPageCache } from '../dialects/sqlite/page-cache.js';
import { sqliteReaders, type ReaderStats, type SqliteReaders } from '../dialects/sqlite/readers.js';

/** Tables are declared at run time, so the schema type is open. */
export type Tables = Record<string, Record<string, unknown>>;
export type { Dialect } from '../dialects/capabilities.js';

export interface DatabaseOptions {
  /** PostgreSQL: the most connections open at once (DB_MAX_CONNECTIONS). */
  maxConnections?: number;
  /** PostgreSQL: connections kept open when idle (DB_MAX_IDLE_CONNECTIONS); more are closed after `idleTimeoutMillis`. */
  maxIdleConnections?: number;
  idleTimeoutMillis?: number;
  /** PostgreSQL: how long a query waits for a connection of a full pool before it fails (DB_CONNECTION_WAIT_MS). */
  connectionWaitMillis?: number;
  /**
   * PostgreSQL: whether queries run as named statements, prepared once per connection
   * (DB_PREPARED_STATEMENTS, default true). False: every statement is sent unnamed, as a
   * transaction pooler (PgBouncer's `pool_mode = transaction`) needs, since it hands each
   * transaction whichever server connection is free.
   */
  preparedStatements?: boolean;
  /** SQLite: reader threads at most (SQLITE_READER_THREADS; see readers.ts for the default). */
  sqliteReaderThreads?: number;
  /** SQLite: each reader thread's page cache, in KiB (SQLITE_READER_CACHE_KIB). */
  sqliteReaderCacheKib?: number;
  /** SQLite: the server's own connection's page cache, in KiB (SQLITE_CACHE_KIB). */
  sqliteCacheKib?: number;
}

/**
 * A database as the layers above the store hold it: opened (openDatabase), handed to the store's
 * functions, asked about errors and its pool, closed. How the store reaches it (Kysely, the
 * dialect's SQL) stays inside the store: see StoreDatabase.
 */
export interface Database {
  readonly dialect: Dialect;
  /** The rows one request may see, on the copy its reader holds (see store/conditions/table-scopes.ts); none: every row, as the app's own code sees them. */
  readonly scopes?: TableScopes;
  /** The columns of a unique constraint this error reports, if it is one. */
  uniqueViolation(error: unknown): string[] | undefined;
  /** The name of the check or unique constraint this error reports, where the database says it (SQLite names only a check). */
  violatedConstraint(error: unknown): string | undefined;
  /** Pool connections by state (PostgreSQL); undefined where there is no pool. */
  poolStats(): { total: number; idle: number; waiting: number } | undefined;
  /** SQLite's reader threads running and their JavaScript heaps (store/dialects/sqlite/readers.ts); undefined where reads stay on the event loop. */
  readerStats(): ReaderStats | undefined;
  /** The columns of a foreign key whose target row is missing (deleted meanwhile), if this error says so; [] if unknown. */
  missingReference(error: unknown): string[] | undefined;
  /** The tables whose rows still refer to a row a delete would remove (a `restrict` key), if this error says so; [] if unknown. */
  stillReferenced(error: unknown): string[] | undefined;
  /** Whether an error means the database cannot be reached right now. */
  isUnavailable(error: unknown): boolean;
  /** The read replicas beside this primary (DATABASE_REPLICA_URLS: store/connection/replicas.ts); none without them. */
  readonly replicas?: ReplicaSet;
  /**
   * Compiled SQL run straight on the driver (a cached SQLite statement, a pooled connection's
   * named or unnamed statement), without Kysely's executor: for the hot fixed-shape queries. Outside any
   * transaction (on SQLite it waits for one that is open, as Kysely does).
   */
  run(sql: string, parameters: readonly unknown[], options?: RunOptions): Promise<Row[]>;
  close(): Promise<void>;
}

export interface RunOptions {
  /**
   * A read that may scan many rows (a list page, a count): on SQLite it runs on a reader thread,
   * as Kysely's reads do (sqlite-readers.ts), where a point read stays on the server's connection.
   */
  readonly scans?: boolean;
}

/** A replica as /readyz and the metrics report it: whether reads go to it, and why not. */
export interface ReplicaStatus {
  /** host:port/database, without the credentials. */
  readonly name: string;
  readonly state: 'in use' | 'lagging' | 'unreachable' | 'not a standby';
  /** How far behind the primary it was seen to be, in milliseconds (null: not known). */
  readonly lagMillis: number | null;
}

/**
 * Read replicas (store/connection/replicas.ts). A WAL position is the primary's, as a bigint; a user's last
 * write's position travels with the query that finds their credential (store/connection/write-positions.ts).
 */
export interface ReplicaSet {
  /** A replica in use that has replayed past `position` (null: any in use); undefined: none, read the primary. */
  pick(position: bigint | null): Database | undefined;
  /** A replica that failed to answer: skipped until it answers a poll again. */
  failed(replica: Database): void;
  /** Keeps, on the primary, the position every write of this user so far has committed before. */
  noteWrite(userId: number): Promise<void>;
  status(): readonly ReplicaStatus[];
}

/** A Database as the store uses it: the Kysely handle its queries are built on, and the dialect's answers and SQL pieces. */
export interface StoreDatabase extends Database {
  readonly db: Kysely<Tables>;
  /** What the store asks of the dialect, rather than its name. */
  readonly capabilities: DialectCapabilities;
  /** `column LIKE pattern`, where pattern uses `%` and `_` and escapes with `\`; `insensitive` folds case. */
  /** `pattern`: a string, or what stands in for one (a placeholder). */
  like(column: Expression<unknown>, pattern: unknown, insensitive: boolean): RawBuilder<SqlBool>;
  /** A timestamp column's UTC calendar day, comparable with `YYYY-MM-DD` text. */
  utcDay(column: Expression<unknown>): RawBuilder<unknown>;
  /** PostgreSQL: the URL it was opened with, for a connection of its own beside the pool (notifications.ts). */
  readonly url?: string;
  /** Whether a JSON column holds an object with the (bound) key `key`; arrays' elements are no keys. */
  jsonHasKey(column: Expression<unknown>, key: string): RawBuilder<SqlBool>;
  /** Whether the JSON document is an array with this string among its elements. */
  jsonHasElement(column: Expression<unknown>, element: string): RawBuilder<SqlBool>;
}

/** The store's view of a database opened by openDatabase (or a copy of one bound to a transaction). */
export function storeDatabase(database: Database): StoreDatabase {
  if (!('db' in database)) throw new Error('Not a database opened by openDatabase().');
  return database as StoreDatabase;
}

/** Escape `\`, `%` and `_` so a value matches only itself inside a LIKE pattern. */
export const escapeLike = (value: string): string => value.replace(/[\\%_]/g, '\\$&');

/** A database by its URL (`sqlite:<path>`, `sqlite::memory:`, `postgres://…`), for `buildApp` and `migrateApp`. */
export function openDatabase(url: string, options: DatabaseOptions = {}): Database {
  return openStoreDatabase(url, options);
}

/** openDatabase, as the store (and a test that reaches under it) sees what it opens. */
export function openStoreDatabase(url: string, options: DatabaseOptions = {}): StoreDatabase {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length), options);
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url, options);
  throw new Error('DATABASE_URL must start with sqlite: or postgres://');
}

/**
 * Creates the database file owner-only (0600) before SQLite opens it: SQLite
 * gives its -wal and -shm files the database file's mode, so the records never
 * sit in a file other local users can read. An existing file keeps its mode.
 */
function createOwnerOnly(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, 'a', 0o600));
}

/**
 * SQLite does not say which foreign key failed, nor whether it was a missing target or a referring
 * row: [] for either. An ON DELETE RESTRICT key fails as a trigger does, with the same message.
 */
const foreignKeyFailed = (error: unknown): [] | undefined =>
  error instanceof sqliteDriver().SqliteError && /^SQLITE_CONSTRAINT_(FOREIGNKEY|TRIGGER)$/.test(error.code) && error.message === 'FOREIGN KEY constraint failed'
    ? []
    : undefined;

/** SQLite's SQL pieces and readings of errors, which need no connection: openSqlite's and openUnconnectedDatabase's. */
const sqliteAnswers = {
  dialect: 'sqlite',
  capabilities: sqliteCapabilities,
  like: (column, pattern, insensitive) =>
    insensitive ? sql<SqlBool>`like_ci(${pattern}, ${column})` : sql<SqlBool>`like_cs(${pattern}, ${column})`,
  // Timestamps are stored as Date#toISOString text, which starts with the UTC day.
  utcDay: (column) => sql`substr(${column}, 1, 10)`,
  // json_each gives an array's members integer keys and a scalar a NULL one: neither equals text.
  jsonHasKey: (column, key) => sql<SqlBool>`exists (select 1 from json_each(${column}) as member where member.key = ${key})`,
  jsonHasElement: (column, element) =>
    sql<SqlBool>`(json_type(${column}) = 'array' and exists (select 1 from json_each(${column}) as member where member.type = 'text' and member.value = ${element}))`,
  uniqueViolation(error) {
    const match = /UNIQUE constraint failed: (.+)$/.exec(error instanceof Error ? error.message : '');
    return match?.[1]?.split(', ').map((column) => column.split('.').pop()!);
  },
  violatedConstraint: (error) => /^CHECK constraint failed: (\w+)$/.exec(error instanceof Error ? error.message : '')?.[1],
  poolStats: () => undefined,
  readerStats: () => undefined,
} satisfies Partial<StoreDatabase>;

/**
 * A database that needs no driver and runs no statement (`run` refuses; Kysely's DummyDriver
 * answers with no rows): what `restfold schema` builds an app on, its OpenAPI document depending
 * on the declarations alone, so an install without the optional SQLite driver prints it too.
 */
export function openUnconnectedDatabase(): StoreDatabase {
  const db = new Kysely<Tables>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new SqliteIntrospector(kysely),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
  return {
    ...sqliteAnswers,
    db,
    run: () => Promise.reject(new Error('This database runs no statement: it stands in while an app is built for its document.')),
    missingReference: () => undefined,
    stillReferenced: () => undefined,
    isUnavailable: () => false,
    close: () => db.destroy(),
  };
}

function openSqlite(path: string, options: DatabaseOptions): StoreDatabase {
  if (path !== ':memory:') createOwnerOnly(path);
  const Sqlite = sqliteDriver();
  const connection = new Sqlite(path);
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  limitPageCache(connection, options.sqliteCacheKib ?? DEFAULT_CACHE_KIB);
  registerSqlFunctions(connection);
  const statements = withStatementCache(connection);
  const readers = sqliteReaders(path, { threads: options.sqliteReaderThreads, cacheKib: options.sqliteReaderCacheKib });
  const config = { database: statements };
  const db = new Kysely<Tables>({ dialect: withDeferredBegin(readers ? new SqliteDialectWithReaders(config, readers, connection, statements) : new ImmediateSqliteDialect(config)) });
  return {
    ...sqliteAnswers,
    db,
    async run(text, parameters, options) {
      // One connection: while a transaction holds it, Kysely's queue is the way in (which sends reads to the readers).
      if (connection.inTransaction) return (await db.executeQuery<Row>(CompiledQuery.raw(text, [...parameters]))).rows;
      if (options?.scans && readers) return (await readers.read(text, parameters)) as Row[];
      const statement = statements.prepare(text);
      if (statement.reader) return statement.all(parameters) as Row[];
      statement.run(parameters);
      return [];
    },
    missingReference: (error) => foreignKeyFailed(error),
    stillReferenced: (error) => foreignKeyFailed(error),
    isUnavailable: (error) => error instanceof Sqlite.SqliteError && /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN)/.test(error.code),
    readerStats: () => readers?.stats(),
    close: async () => {
      await readers?.close();
      await db.destroy();
    },
  };
}

/**
 * SQLite whose transactions take the write lock as they begin (`BEGIN IMMEDIATE`): a transaction
 * that reads a row to check it (a locked read) and then writes cannot find, at its first write,
 * that another process's connection wrote meanwhile, which SQLite answers with an immediate
 * SQLITE_BUSY that no busy timeout waits out; this way the second waits (busy_timeout) at its BEGIN.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}

/**
 * SQLite with every read outside a transaction sent to a reader thread (see sqlite-readers.ts); the
 * hot point reads that skip Kysely (store/statements/compiled.ts: a record by id, a credential) stay on the
 * server's connection, where they cost less than a message to a thread; a list's, which may scan,
 * go to a thread too (RunOptions). A read inside a transaction
 * stays on the server's connection too, to see the transaction's own writes. A read sent away does
 * not take Kysely's one connection: it waits for no other statement and holds none up. Each read
 * sees every write committed before it starts, so a client that reads after its write was
 * answered sees it.
 */
class SqliteDialectWithReaders extends ImmediateSqliteDialect {
  constructor(
    config: SqliteDialectConfig,
    private readonly readers: SqliteReaders,
    private readonly connection: SQLite.Database,
    private readonly statements: { prepare(text: string): SQLite.Statement },
  ) {
    super(config);
  }

  override createDriver(): Driver {
    const driver: Driver = super.createDriver();
    const acquire = driver.acquireConnection.bind(driver);
    const release = driver.releaseConnection.bind(driver);
    driver.acquireConnection = () => Promise.resolve(new LazyConnection(acquire, (query, holding) => this.offloads(query, holding), this.readers));
    driver.releaseConnection = async (connection) => {
      const { held } = connection as LazyConnection;
      if (held) await release(await held);
    };
    return driver;
  }

  /** A read (rows back, nothing written) not inside the transaction of the connection holding Kysely's. */
  private offloads(query: CompiledQuery, holding: boolean): boolean {
    if (holding && this.connection.inTransaction) return false;
    const statement = this.statements.prepare(query.sql);
    return statement.reader && statement.readonly;
  }
}

/** Kysely's one SQLite connection, taken only when a statement needs it, and kept until Kysely releases this one. */
class LazyConnection implements DatabaseConnection {
  held: Promise<DatabaseConnection> | undefined;

  constructor(
    private readonly acquire: () => Promise<DatabaseConnection>,
    private readonly offloads: (query: CompiledQuery, holding: boolean) => boolean,
    private readonly readers: SqliteReaders,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.offloads(query, this.held !== undefined)) return { rows: (await this.readers.read(query.sql, query.parameters)) as R[] };
    return (await this.connectionHeld()).executeQuery<R>(query);
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    yield* (await this.connectionHeld()).streamQuery<R>(query, chunkSize);
  }

  private connectionHeld(): Promise<DatabaseConnection> {
    // The promise, not its answer: two statements at once on this one (a transaction's Promise.all) take the connection once.
    return (this.held ??= this.acquire());
  }
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew; a list runs the same few SQL texts over
 * and over, so prepared statements are kept by their text. (better-sqlite3
 * runs each synchronously, so one statement is never in use twice at once.)
 */
function withStatementCache(connection: SQLite.Database): SqliteDatabase & { prepare(text: string): SQLite.Statement } {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare: (text: string) => cached(statements, text, STATEMENT_CACHE_SIZE, () => connection.prepare(text)),
    close: () => connection.close(),
  };
}

/** SQLSTATE classes that mean "no connection", not "bad query". */
const UNAVAILABLE_CODES = /^(08|57P0[1-3]|53300)/;
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

function openPostgres(url: string, options: DatabaseOptions): StoreDatabase {
  const { writable, hosts } = checkPostgresUrl(url);
  const max = options.maxConnections ?? 25;
  // libpq's failover list: the host new connections go to, moved on by failOver.
  const current = { index: 0 };
  const pool = new pg.Pool({
    connectionString: hosts[0],
    ...(hosts.length > 1 && { Client: hostsClient(hosts, current) }),
    // The URL's own application_name, if any, wins (it is parsed over these settings).
    application_name: 'restfold',
    // Run before the pool hands a new connection out: timestamps then arrive in UTC, which
    // timestampText rewrites without a Date. A pooler that shares server connections between
    // clients (PgBouncer) keeps the time zone per client, as it does the other reported settings.
    onConnect: async (client) => {
      await client.query("SET TIME ZONE 'UTC'");
      if (writable) await refuseReadOnly(client);
    },
    max,
    // pg-pool closes a connection idle for idleTimeoutMillis only while more than `min` are open,
    // so at rest `min` stay open: that is the idle allowance. It never opens connections ahead.
    min: Math.min(options.maxIdleConnections ?? 5, max),
    idleTimeoutMillis: options.idleTimeoutMillis ?? 10_000,
    connectionTimeoutMillis: options.connectionWaitMillis ?? 5_000,
    types: { getTypeParser: postgresTypeParser },
  });
  // A connection lost while idle (pool 'error') or while checked out (the client's own 'error',
  // which pg emits besides failing the query) must not crash the process: the query in flight
  // fails on its own, and pg-pool drops the broken client when it is released.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  if (hosts.length > 1) failOver(pool, hosts.length, current);
  const prepared = options.preparedStatements ?? true;
  const db = new Kysely<Tables>({ dialect: withDeferredBegin(new PostgresDialect({ pool: prepared ? withNamedStatements(pool) : withUnnamedStatements(pool) })) });
  return {
    db,
    url,
    dialect: 'postgres',
    capabilities: postgresCapabilities,
    // The pool's own checkout and release, without Kysely's connection wrapper. Outside any
    // transaction, so a statement gone stale runs again. Not async: one promise layer fewer per query.
    run(text, parameters) {
      // pg-pool answers a Submittable with the promise of what it calls back with (its typings say the query itself).
      const execute = (statement: NamedStatement | UnnamedStatement) => pool.query(statement) as unknown as Promise<StatementResult>;
      if (!prepared) {
        if (PREPARABLE.test(text)) return execute(new UnnamedStatement(text, parameters, postgresTypeParser)).then(rowsOf);
        return pool.query(text, parameters as unknown[]).then(rowsOf);
      }
      const name = statementNames.of(text);
      if (!name) return pool.query(text, parameters as unknown[]).then(rowsOf);
      return runNamed(text, parameters, name, true, execute, rowsOf);
    },
    like: (column, pattern, insensitive) =>
      insensitive ? sql<SqlBool>`${column} ILIKE ${pattern}` : sql<SqlBool>`${column} LIKE ${pattern}`,
    utcDay: (column) => sql`(${column} AT TIME ZONE 'UTC')::date`,
    // jsonb_exists is the `?` operator, spelled so no driver mistakes it for a placeholder; on an array it matches strings, hence the type.
    jsonHasKey: (column, key) => sql<SqlBool>`(jsonb_typeof(${column}) = 'object' and jsonb_exists(${column}, ${key}))`,
    // On an array, jsonb's `?` (jsonb_exists) finds a string element.
    jsonHasElement: (column, element) => sql<SqlBool>`(jsonb_typeof(${column}) = 'array' and jsonb_exists(${column}, ${element}))`,
    uniqueViolation(error) {
      const { code, detail } = (error ?? {}) as { code?: string; detail?: string };
      if (code !== '23505') return undefined;
      const match = /^Key \((.+?)\)=/.exec(detail ?? '');
      return match?.[1]?.split(', ').map(columnOfKey) ?? [];
    },
    violatedConstraint(error) {
      const { code, constraint } = (error ?? {}) as { code?: string; constraint?: string };
      return code === '23505' || code === '23514' ? constraint : undefined;
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    readerStats: () => undefined,
    missingReference(error) {
      const { code, detail } = (error ?? {}) as { code?: string; detail?: string };
      const match = /^Key \((.+?)\)=.* is not present in table/.exec(detail ?? '');
      if (code !== '23503' || !match) return undefined;
      return match[1]!.split(', ');
    },
    stillReferenced(error) {
      const { code, detail } = (error ?? {}) as { code?: string; detail?: string };
      const match = /is still referenced from table "(.+)"\.?$/.exec(detail ?? '');
      return code === '23503' && match ? [match[1]!] : undefined;
    },
    isUnavailable(error) {
      const { code, message } = (error ?? {}) as { code?: string; message?: string };
      if (code && (UNAVAILABLE_CODES.test(code) || UNAVAILABLE_ERRNOS.has(code))) return true;
      if (error instanceof ReadOnlyServer) return true;
      return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(message ?? '');
    },
    close: () => db.destroy(),
  };
}

/** A part of a unique key → the column it is over: `lower(username::text)` (an expression index) → `username`. */
const columnOfKey = (part: string): string => /^(?:\w+\()*"?(\w+)"?(?:::[\w ]+)?\)*$/.exec(part)?.[1] ?? part;

/**
 * Statements worth preparing: the queries requests repeat (DDL and transaction control are not).
 * Without names, the same ones are sent as UnnamedStatement, sent the same way and read by a shape.
 */
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;
/**
 * Pattern matches are planned with their pattern every time: after five runs of a named statement
 * PostgreSQL may settle on a generic plan, which cannot know that `%kowalski%` is rare and walks the
 * primary key filtering every row instead of using the trigram indexes (docs/performance.md).
 */
const PATTERN_MATCH = /\bI?LIKE\b/i;

/**
 * SQL text → its statement name, or '' for a statement sent unnamed. A name carries the generation
 * of this process's statements: once PostgreSQL refuses one because a migration changed what it
 * returns (isStalePlan), the generation moves on, so every statement is prepared afresh under a new
 * name on every connection, before it too could be refused. The old ones are closed in time as the
 * connection's least recently run (NamedStatement). The first generation's names are every
 * process's; a later one is random, this process's own: behind a pooler that shares statements
 * between processes by text (which carries the name), a process that goes stale after another has
 * moved on (and another migration since) must not be handed that one's statement, stale in turn.
 */
const statementNames = new (class {
  private generation = '0';
  private readonly names = new Map<string, string>();

  of(text: string): string {
    return cached(this.names, text, 10_000, () =>
      PREPARABLE.test(text) && !PATTERN_MATCH.test(text) ? `rf_${this.generation}_${hash('sha1', text, 'hex').slice(0, 20)}` : '',
    );
  }

  /** `name` went stale: a new generation, unless one has begun since it was named. */
  stale(name: string): void {
    if (!name.startsWith(`rf_${this.generation}_`)) return;
    this.generation = randomBytes(4).toString('hex');
    this.names.clear();
  }
})();

/**
 * `text` with `values` run as the named statement `name` by `execute`. If PostgreSQL refuses it as stale, it has
 * run nothing: where `retry` (outside a transaction) it runs once more, prepared afresh; inside a
 * transaction, which the refusal ended, the error goes on to `transaction`, which runs it again.
 */
function runNamed<T>(
  text: string,
  values: readonly unknown[],
  name: string,
  retry: boolean,
  execute: (statement: NamedStatement) => Promise<StatementResult>,
  read: (result: StatementResult) => T,
): Promise<T> {
  // One promise layer, reading the result and catching the refusal at once.
  return execute(new NamedStatement(name, text, values, postgresTypeParser)).then(read, (error: unknown) => {
    if (!isStalePlan(error)) throw pooledStatementError(error);
    statementNames.stale(name);
    if (!retry) throw error;
    return execute(new NamedStatement(statementNames.of(text), text, values, postgresTypeParser)).then(read);
  });
}

const rowsOf = ({ rows }: { rows: unknown[] }): Row[] => rows as Row[];
const itself = <T>(result: T): T => result;

/**
 * A statement this connection prepared missing, or one it did not prepare in the way (`26000`,
 * `42P05`): the connection is shared behind a transaction pooler. Said so, with the setting that
 * makes the service run there, rather than as a riddle.
 */
function pooledStatementError(error: unknown): unknown {
  const { code } = (error ?? {}) as { code?: string };
  if ((code === '26000' || code === '42P05') && error instanceof Error) {
    error.message += ': the server connection is shared with other clients (a transaction pooler such as PgBouncer); set DB_PREPARED_STATEMENTS=false (docs/databases.md)';
  }
  return error;
}

/** What Kysely sends to open and to end a transaction. */
const TRANSACTION_START = /^(begin|start transaction)\b/i;
const TRANSACTION_END = /^(commit|rollback)$/i;

/**
 * Kysely sends every query unnamed, so PostgreSQL parses and plans it each
 * time; naming each query shape makes pg prepare it once per connection and
 * then only bind and execute — most of a small query's cost.
 */
function withNamedStatements(pool: pg.Pool): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect();
      let inTransaction = false;
      const query = (text: string, values: ReadonlyArray<unknown>) => {
        const name = statementNames.of(text);
        if (name) return runNamed(text, values, name, !inTransaction, (statement) => runOn(client, statement), itself);
        if (TRANSACTION_START.test(text)) inTransaction = true;
        else if (TRANSACTION_END.test(text)) inTransaction = false;
        return client.query(text, [...values]);
      };
      return { query, release: () => client.release() } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}

/**
 * Kysely's queries without names (DB_PREPARED_STATEMENTS=false): those named ones would be sent as
 * UnnamedStatement, their rows read by a shape the process keeps. An unnamed statement is parsed
 * afresh on every run, so it never goes stale (isStalePlan) as a named one does: nothing to retry.
 */
function withUnnamedStatements(pool: pg.Pool): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect();
      const query = (text: string, values: ReadonlyArray<unknown>) =>
        PREPARABLE.test(text) ? runOn(client, new UnnamedStatement(text, values, postgresTypeParser)) : client.query(text, [...values]);
      return { query, release: () => client.release() } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}

/**
 * `work` in a transaction, committed when it resolves. PostgreSQL ends a transaction whose
 * statement, prepared before a migration changed what it returns, went stale (isStalePlan): then
 * it is rolled back and runs once more from the start, its statements prepared afresh.
 */
export function transaction<T>(database: Database, work: (transaction: Database) => Promise<T>): Promise<T> {
  const { db } = storeDatabase(database);
  const attempt = () => db.transaction().execute((transaction) => work({ ...database, db: transaction } as Database));
  return attempt().catch((error: unknown) => (isStalePlan(error) ? attempt() : Promise.reject(error)));
}

/** Whether the transaction `database` is bound to has sent a statement yet: it begins at its first (deferred-begin.ts). */
export const transactionBegun = (database: Database): Promise<boolean> =>
  storeDatabase(database).db.getExecutor().provideConnection((connection) => Promise.resolve(begunOn(connection)));

/** A server that does not accept writes, where the URL asked for one that does (target_session_attrs). */
class ReadOnlyServer extends Error {}

async function refuseReadOnly(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
  if (rows[0]?.transaction_read_only !== 'off') throw new ReadOnlyServer('The database server does not accept writes (target_session_attrs=read-write): it is a standby or read-only.');
}

/** libpq's target_session_attrs values that ask for a server accepting writes. */
const WRITABLE_ATTRS = new Set(['read-write', 'primary']);

/**
 * What a URL asks of its connections that pg does not do itself, done here or refused, naming
 * why, rather than ignored or failed as an invalid URL. Several hosts (libpq's failover list,
 * `postgres://user@db1:5432,db2:5433/app`) become one URL per host, tried in turn (failOver);
 * target_session_attrs=read-write (or primary) is done by checking each new connection.
 */
function checkPostgresUrl(url: string): { writable: boolean; hosts: string[] } {
  const [, scheme, authority = '', rest] = /^([a-z]+:\/\/)([^/?#]*)(.*)$/is.exec(url) ?? [];
  const at = authority.lastIndexOf('@') + 1;
  const hosts = authority.slice(at).includes(',') ? authority.slice(at).split(',').map((host) => `${scheme}${authority.slice(0, at)}${host}${rest}`) : [url];
  const query = url.indexOf('?');
  const attrs = query < 0 ? null : new URLSearchParams(url.slice(query + 1).replace(/#.*$/, '')).get('target_session_attrs');
  if (attrs === null || attrs === 'any') return { writable: false, hosts };
  if (WRITABLE_ATTRS.has(attrs)) return { writable: true, hosts };
  throw new Error(`DATABASE_URL: target_session_attrs=${attrs} is not supported: Restfold writes, so it connects to a server that accepts writes (read-write, primary) or to any.`);
}

/** A pg Client for the `current` one of `hosts` (one URL per host of libpq's list). */
function hostsClient(hosts: readonly string[], current: { readonly index: number }): typeof pg.Client {
  return class extends pg.Client {
    constructor(config: pg.ClientConfig) {
      super({ ...config, connectionString: hosts[current.index] });
    }
  };
}

/** Errors that say a host is not the one to use: it cannot be reached, is shutting down or starting, or does not accept writes (target_session_attrs). */
const WRONG_HOST = /^(08|57P0[1-3])|^(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|EAI_AGAIN)$/;
const wrongHost = (error: unknown): boolean => {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return error instanceof ReadOnlyServer || WRONG_HOST.test(code ?? '') || /Connection terminated|connection timeout/.test(message ?? '');
};

/**
 * libpq's failover, which pg lacks: a new connection goes to the current host; where that host is
 * wrong (wrongHost), the next one in the list becomes current and is tried, once round the list,
 * so connections move to whichever server accepts them, and stay there until it fails in turn.
 * The pool's own `query` takes connections through the same `connect`.
 */
function failOver(pool: pg.Pool, count: number, current: { index: number }): void {
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const attempt = (left: number): Promise<pg.PoolClient> => {
    const tried = current.index;
    return connect().catch((error: unknown) => {
      if (left <= 1 || !wrongHost(error)) throw error;
      // Another connection may have moved on already: only the first to fail on a host moves past it.
      if (current.index === tried) current.index = (tried + 1) % count;
      return attempt(left - 1);
    });
  };
  const withFailover = (callback?: (error: Error | undefined, client?: pg.PoolClient, done?: () => void) => void) => {
    const connected = attempt(count);
    if (!callback) return connected;
    connected.then(
      (client) => callback(undefined, client, () => client.release()),
      (error: Error) => callback(error),
    );
    return undefined;
  };
  pool.connect = withFailover as typeof pool.connect;
}

const INT8 = 20;
const TIMESTAMPTZ = 1184;
const parseDate = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (value: string) => Date;
/** PostgreSQL's ISO output in UTC (the session's TimeZone, set at connect): `2026-01-02 03:04:05.6+00`. */
const UTC_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?\+00$/;

/**
 * timestamptz → the RFC 3339 text the API sends (`…T03:04:05.600Z`), the form SQLite stores:
 * rewritten as text, not parsed into a Date and printed again (a tenth of a list's time), and
 * by position once the form is known (no match array: a list page rewrites hundreds).
 * Other forms (another time zone, years past 9999, BC) go through a Date.
 */
function timestampText(value: string): string {
  if (!UTC_TIMESTAMP.test(value)) {
    const date = parseDate(value);
    // 'infinity' and the like have no RFC 3339 form: passed on as PostgreSQL wrote them.
    return date instanceof Date && !Number.isNaN(date.getTime()) ? date.toISOString() : value;
  }
  const date = value.slice(0, 10);
  // Digits after the seconds' '.' (which sits at 19, before the closing '+00'); -1 when there is none.
  const fractionDigits = value.length - 23;
  if (fractionDigits >= 3) return `${date}T${value.slice(11, 23)}Z`;
  if (fractionDigits < 0) return `${date}T${value.slice(11, 19)}.000Z`;
  return `${date}T${value.slice(11, 20 + fractionDigits)}${fractionDigits === 1 ? '00' : '0'}Z`;
}

const DATE = 1082;
const INTERVAL = 1186;
const JSONB = 3802;
/** Types whose text the fields read themselves: pg would make a date a local-time Date, an interval and a document objects. */
const KEPT_AS_TEXT = new Set([DATE, INTERVAL, JSONB]);
const asText = (value: string): string => value;

/** A bigint column's text → a number, or the text itself beyond 2^53 (where a number would lose digits). */
function int8Value(value: string): number | string {
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

/** bigint columns and counts come back as numbers (text beyond 2^53); timestamps as RFC 3339 text. */
function postgresTypeParser(oid: number, format?: string): (value: string) => unknown {
  if (oid === INT8) return int8Value;
  if (oid === TIMESTAMPTZ) return timestampText;
  if (KEPT_AS_TEXT.has(oid)) return asText;
  return pg.types.getTypeParser(oid, format as 'text');
}
