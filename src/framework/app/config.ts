/**
 * Settings from environment variables (and a `.env` file, if present),
 * validated once at start-up: a bad value stops the process with a clear
 * message rather than surfacing later as a 500.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import type { AuthKind } from '../stages/authentication/index.js';
import { parseAllowedHosts } from '../base/hosts.js';
import { booleanSetting, choiceSetting, trueOrFalse } from '../../core/settings.js';
import type { HistoryKept } from '../write/change-log.js';
import { parseTrustProxy, type TrustProxy } from '../base/proxy.js';
import { parseRate, type Rate } from '../stages/throttling.js';
import type { LiveLimits } from '../actions/live/hub.js';
import { DEFAULT_READER_THREADS } from '../../store/dialects/sqlite/readers.js';
import { DEFAULT_CACHE_KIB } from '../../store/dialects/sqlite/page-cache.js';

/** The server's configuration, read by `loadConfig` from the environment. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly maxConnections: number;
  readonly maxIdleConnections: number;
  readonly connectionWaitMs: number;
  /** Named statements prepared once per connection (DB_PREPARED_STATEMENTS); false behind a transaction pooler. */
  readonly preparedStatements: boolean;
  /** PostgreSQL read replicas of DATABASE_URL (DATABASE_REPLICA_URLS, comma-separated); none when empty (docs/deploying.md). */
  readonly replicaUrls: readonly string[];
  /** A replica further behind than this is skipped (DATABASE_REPLICA_MAX_LAG_MS), and how often that is measured (DATABASE_REPLICA_POLL_MS). */
  readonly replicaMaxLagMs: number;
  readonly replicaPollMs: number;
  /** SQLite: reader threads at most (SQLITE_READER_THREADS) and each one's page cache in KiB (SQLITE_READER_CACHE_KIB); docs/databases.md. */
  readonly sqliteReaderThreads: number;
  readonly sqliteReaderCacheKib: number;
  /** SQLite: the server's own connection's page cache in KiB (SQLITE_CACHE_KIB); docs/databases.md. */
  readonly sqliteCacheKib: number;
  /** undefined: generate one and keep it in the data folder (see secrets.ts). */
  readonly secretKey: string | undefined;
  readonly auth: readonly AuthKind[];
  readonly requireAuth: boolean;
  /** Lifetimes in seconds. */
  readonly jwtAccessLifetime: number;
  readonly jwtRefreshLifetime: number;
  readonly sessionLifetime: number;
  readonly redisUrl: string | undefined;
  readonly workers: number;
  readonly logLevel: string;
  readonly throttleAnonymous: Rate | null;
  readonly throttleUser: Rate | null;
  /** Credential checks (logins, token and JWT obtain, a current password), per client IP and per account. */
  readonly throttleLogin: Rate | null;
  /** Passwords set by anonymous writes (a sign-up), per client IP. */
  readonly throttleSignup: Rate | null;
  /** Prepended to every Redis key, so several services (or test runs) can share one Redis. */
  readonly redisKeyPrefix: string;
  /** Slow-client limits (see docs/deploying.md): whole request, headers alone, idle keep-alive. */
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxBodyBytes: number;
  /** Uploaded files (docs/files.md). */
  readonly files: FilesConfig;
  /** Open client connections held at once (MAX_CONNECTIONS); more are closed as they arrive. */
  readonly maxClientConnections: number;
  /** A body slower than this over the last BODY_TIMEOUT_MS is cut off with 408 (see body-rate.ts). */
  readonly bodyMinBytesPerSecond: number;
  readonly bodyTimeoutMs: number;
  readonly trustProxy: TrustProxy;
  /** Host names the service answers for (ALLOWED_HOSTS); empty: any valid host. */
  readonly allowedHosts: readonly string[];
  /** Origins allowed cross-origin requests (CORS_ORIGINS, comma-separated); none when empty. */
  readonly corsOrigins: readonly string[];
  /** The admin's path (ADMIN_PREFIX, default /admin), or undefined when it is off (ADMIN=false): docs/admin.md. */
  readonly adminPrefix: string | undefined;
  /**
   * Whose writes are logged, in their transaction, for the admin's history pages (HISTORY): `admin`
   * (the default) the admin's, `all` (HISTORY=true) every request's, which costs every API write a
   * transaction and an INSERT, `off` (HISTORY=false) none (docs/admin.md).
   */
  readonly history: HistoryKept;
  /** Serve Prometheus metrics (METRICS=true); on METRICS_PORT alone when that is set. */
  readonly metrics: boolean;
  readonly metricsPort: number | undefined;
  /** Live changes' streams (LIVE_*, docs/guides/live-changes.md). */
  readonly live: LiveLimits;
  /**
   * PostgreSQL without Redis: the direct (or session-pooled) connection live changes are heard on
   * (LIVE_DATABASE_URL); by default the database's own URL, which must then not go through a transaction pooler.
   */
  readonly liveDatabaseUrl: string | undefined;
  /** After SIGTERM, how long /readyz answers 503 while requests are still served, before the server stops accepting (SHUTDOWN_DRAIN_MS; 0: at once). */
  readonly shutdownDrainMs: number;
}

const AUTH_KINDS: readonly AuthKind[] = ['token', 'jwt', 'session'];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min) throw new Error(`${name} must be an integer >= ${min} (got "${text}").`);
  return Number(text);
}

/** HISTORY: `admin` (or unset) logs the admin's writes, a true value every request's, a false one none. */
const HISTORY_KEPT: Readonly<Record<string, HistoryKept>> = { admin: 'admin', ...trueOrFalse<HistoryKept>('all', 'off') };

/** Django's admin is on by default at /admin/; a prefix is one or more path segments, without the trailing slash. */
function adminPrefix(env: Env): string | undefined {
  if (!booleanSetting(env, 'ADMIN', true)) return undefined;
  const prefix = (env.ADMIN_PREFIX || '/admin').replace(/\/$/, '');
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(prefix)) throw new Error(`ADMIN_PREFIX must be a path such as /admin (got "${env.ADMIN_PREFIX}").`);
  return prefix;
}

function rate(env: Env, name: string, fallback: string): Rate | null {
  try {
    return parseRate(env[name] || fallback);
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}`);
  }
}

const MAX_DURATION = 3650 * 86_400;
const SECONDS_PER_UNIT: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** A duration: seconds (`300`) or a number with a unit (`300s`, `5m`, `12h`, `1d`). */
function duration(env: Env, name: string, fallback: string): number {
  const text = env[name] || fallback;
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  const seconds = match ? Number(match[1]) * SECONDS_PER_UNIT[match[2] || 's']! : 0;
  if (seconds < 1 || seconds > MAX_DURATION) {
    throw new Error(`${name} must be a duration from 1 second to 3650 days, such as 300, 5m, 12h or 1d (got "${text}").`);
  }
  return seconds;
}

/** Reads `.env` into process.env (without overriding what is set) when the file exists. */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

/**
 * The default cap on open client connections of one process. Each may be receiving a body of up to
 * MAX_BODY_BYTES, held in memory until it is whole, so the cap keeps the bodies in flight within
 * BODY_MEMORY_BYTES (bench/RESULTS.md, issue 18 item 11), between 64 and 1024 connections.
 */
const BODY_MEMORY_BYTES = 128 * 1_048_576;
const defaultConnectionCap = (maxBodyBytes: number): number => Math.min(1024, Math.max(64, Math.floor(BODY_MEMORY_BYTES / maxBodyBytes)));

/**
 * LIVE_MAX_STREAMS: each stream holds a client connection for as long as it lives, so streams may
 * take at most half of MAX_CONNECTIONS (the default), and the other half stays for ordinary
 * requests however many streams are asked for (SECURITY.md, live streams).
 */
function liveStreamCap(env: Env, maxClientConnections: number): number {
  const most = Math.floor(maxClientConnections / 2);
  const streams = integer(env, 'LIVE_MAX_STREAMS', most, 0);
  if (streams > most) {
    throw new Error(`LIVE_MAX_STREAMS must leave half of MAX_CONNECTIONS (${maxClientConnections}) to ordinary requests: at most ${most} (got ${streams}); raise MAX_CONNECTIONS for more streams.`);
  }
  return streams;
}

/** How many processes WORKERS asks for: 0 is one per CPU. */
export const workerCount = (workers: number): number => (workers === 0 ? availableParallelism() : workers);

/** `total` split among `count` workers as evenly as it goes, the first ones taking what is left over. */
export const shares = (total: number, count: number): number[] =>
  Array.from({ length: count }, (_, index) => Math.floor(total / count) + (index < total % count ? 1 : 0));

/** DATABASE_REPLICA_URLS: PostgreSQL URLs beside a PostgreSQL DATABASE_URL. */
function replicaUrls(env: Env, databaseUrl: string): string[] {
  const urls = (env.DATABASE_REPLICA_URLS ?? '').split(',').map((url) => url.trim()).filter(Boolean);
  if (urls.length === 0) return urls;
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw new Error('DATABASE_REPLICA_URLS needs a PostgreSQL DATABASE_URL (postgres://).');
  if (!urls.every((url) => /^postgres(ql)?:\/\//.test(url))) throw new Error('DATABASE_REPLICA_URLS: each URL must start with postgres://.');
  return urls;
}

export interface FilesConfig {
  /** FILES_STORAGE: `file:<folder>` or `s3://bucket/prefix`; by default a `files` folder in the data folder. */
  readonly storage: string;
  /** FILES_URL_TTL: how long a signed download link works, in seconds. */
  readonly linkSeconds: number;
  /** FILES_MAX_BYTES: the largest file any field accepts; a field that declares no maxBytes accepts this much. */
  readonly maxFileBytes: number;
  /** FILES_MAX_BODY_BYTES: a multipart body's bytes in all (each field has its own maxBytes below it). */
  readonly maxBodyBytes: number;
  /** FILES_MAX_PARTS: a multipart body's parts (fields and files). */
  readonly maxParts: number;
  /** FILES_S3_REDIRECT: with S3, downloads answer 302 to a presigned URL instead of streaming. */
  readonly s3Redirect: boolean;
  /** The S3 store's settings (FILES_S3_* and the standard AWS_* ones) from the environment the config was read from. */
  readonly s3Env: Readonly<Record<string, string | undefined>>;
}

const S3_SETTINGS = ['FILES_S3_ENDPOINT', 'FILES_S3_REGION', 'FILES_S3_FORCE_PATH_STYLE', 'FILES_S3_UPLOADS', 'AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'];

/** Where generated state lives: beside the SQLite file, or ./data (PostgreSQL); none for an in-memory database. */
export function dataFolder(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return './data';
  const path = databaseUrl.slice('sqlite:'.length);
  return path === ':memory:' ? undefined : dirname(path);
}

function filesConfig(env: Env, databaseUrl: string): FilesConfig {
  const storage = env.FILES_STORAGE || `file:${join(dataFolder(databaseUrl) ?? './data', 'files')}`;
  if (!/^(file:.|s3:\/\/[^/])/.test(storage)) throw new Error('FILES_STORAGE must be file:<folder> or s3://<bucket>/<prefix>.');
  return {
    storage,
    linkSeconds: duration(env, 'FILES_URL_TTL', '1h'),
    maxFileBytes: integer(env, 'FILES_MAX_BYTES', 10 * 1024 * 1024, 1),
    maxBodyBytes: integer(env, 'FILES_MAX_BODY_BYTES', 100 * 1024 * 1024, 1),
    maxParts: integer(env, 'FILES_MAX_PARTS', 100, 1),
    s3Redirect: booleanSetting(env, 'FILES_S3_REDIRECT', false),
    s3Env: Object.fromEntries(S3_SETTINGS.map((name) => [name, env[name]])),
  };
}

/**
 * The configuration from environment variables (`process.env` by default), with their defaults (the README's
 * "Configuration").
 */
export function loadConfig(env: Env = process.env): Config {
  const auth = (env.AUTH ?? 'token,jwt,session')
    .split(',')
    .map((kind) => kind.trim())
    .filter(Boolean);
  for (const kind of auth) {
    if (!AUTH_KINDS.includes(kind as AuthKind)) throw new Error(`AUTH: unknown kind "${kind}" (use ${AUTH_KINDS.join(', ')}).`);
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}.`);
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1);
  const headersTimeoutMs = integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 1);
  // Node refuses a headers timeout longer than the request timeout.
  if (headersTimeoutMs > requestTimeoutMs) throw new Error('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS.');
  const workers = integer(env, 'WORKERS', 1, 0);
  const maxBodyBytes = integer(env, 'MAX_BODY_BYTES', 1_048_576, 1);
  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/restfold.sqlite3';
  const maxClientConnections = integer(env, 'MAX_CONNECTIONS', defaultConnectionCap(maxBodyBytes), 1);
  return {
    port: integer(env, 'PORT', 8000, 0),
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    replicaUrls: replicaUrls(env, databaseUrl),
    replicaMaxLagMs: integer(env, 'DATABASE_REPLICA_MAX_LAG_MS', 1000, 1),
    replicaPollMs: integer(env, 'DATABASE_REPLICA_POLL_MS', 100, 10),
    sqliteReaderThreads: integer(env, 'SQLITE_READER_THREADS', DEFAULT_READER_THREADS, 1),
    sqliteReaderCacheKib: integer(env, 'SQLITE_READER_CACHE_KIB', DEFAULT_CACHE_KIB, 64),
    sqliteCacheKib: integer(env, 'SQLITE_CACHE_KIB', DEFAULT_CACHE_KIB, 64),
    // Both for the whole service, shared among its workers (cluster.ts): connections past what
    // PostgreSQL has cores for only queue there (docs/performance.md: workers share the pool).
    maxConnections: integer(env, 'DB_MAX_CONNECTIONS', 25, 1),
    maxIdleConnections: integer(env, 'DB_MAX_IDLE_CONNECTIONS', 5, 0),
    connectionWaitMs: integer(env, 'DB_CONNECTION_WAIT_MS', 5000, 1),
    preparedStatements: booleanSetting(env, 'DB_PREPARED_STATEMENTS', true),
    secretKey: env.SECRET_KEY || undefined,
    auth: [...new Set(auth)] as AuthKind[],
    requireAuth: booleanSetting(env, 'API_REQUIRE_AUTH', true),
    jwtAccessLifetime: duration(env, 'JWT_ACCESS_LIFETIME', '5m'),
    jwtRefreshLifetime: duration(env, 'JWT_REFRESH_LIFETIME', '1d'),
    sessionLifetime: duration(env, 'SESSION_LIFETIME', '14d'),
    redisUrl: env.REDIS_URL || undefined,
    workers,
    logLevel,
    throttleAnonymous: rate(env, 'THROTTLE_ANON', '100/min'),
    throttleUser: rate(env, 'THROTTLE_USER', '1000/min'),
    throttleLogin: rate(env, 'THROTTLE_LOGIN', '10/min'),
    throttleSignup: rate(env, 'THROTTLE_SIGNUP', '30/min'),
    redisKeyPrefix: env.REDIS_KEY_PREFIX ?? 'restfold:',
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 1),
    maxBodyBytes,
    files: filesConfig(env, databaseUrl),
    maxClientConnections,
    bodyMinBytesPerSecond: integer(env, 'BODY_MIN_BYTES_PER_SECOND', 1024, 1),
    bodyTimeoutMs: integer(env, 'BODY_TIMEOUT_MS', 5000, 1),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    allowedHosts: parseAllowedHosts(env.ALLOWED_HOSTS),
    corsOrigins: (env.CORS_ORIGINS ?? '').split(',').map((origin) => origin.trim()).filter(Boolean),
    adminPrefix: adminPrefix(env),
    history: choiceSetting(env, 'HISTORY', HISTORY_KEPT, 'admin', 'admin, true or false'),
    metrics: booleanSetting(env, 'METRICS', false),
    metricsPort: env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 1) : undefined,
    live: {
      heartbeatMs: integer(env, 'LIVE_HEARTBEAT_MS', 15_000, 1),
      queueBytes: integer(env, 'LIVE_QUEUE_BYTES', 1_048_576, 1),
      retryMs: integer(env, 'LIVE_RETRY_MS', 3000, 0),
      maxAgeMs: integer(env, 'LIVE_MAX_AGE_MS', 600_000, 1),
      recheckMs: integer(env, 'LIVE_RECHECK_MS', 2000, 100),
      maxStreams: liveStreamCap(env, maxClientConnections),
      maxStreamsPerUser: integer(env, 'LIVE_MAX_STREAMS_PER_USER', 5, 0),
      retained: integer(env, 'LIVE_RETAINED', 10_000, 0),
    },
    liveDatabaseUrl: env.LIVE_DATABASE_URL || undefined,
    shutdownDrainMs: integer(env, 'SHUTDOWN_DRAIN_MS', 5000, 0),
  };
}
