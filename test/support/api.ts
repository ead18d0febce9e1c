/**
 * A running example service for HTTP tests (Fastify inject), on a fresh
 * database, with helpers to make users and tokens.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { buildApp, loadConfig, migrateApp, type AppDefinition } from '../../src/framework/index.js';
import { openStoreDatabase, type StoreDatabase } from '../../src/store/connection/database.js';
import { createToken } from '../../src/framework/stages/authentication/token.js';
import { grantPermissions } from '../../src/framework/app/admin.js';
import { hashPassword } from '../../src/framework/base/passwords.js';
import service from '../../src/service/app.js';
import { createTestDatabase } from './database.js';

export const PASSWORD = 'correct-horse-battery';
let passwordHash: Promise<string> | undefined;

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  /** The body parsed as JSON (undefined when it is empty). */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary shapes
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestUser {
  id: number;
  username: string;
  token: string;
}

export interface TestApi {
  readonly app: FastifyInstance;
  /** The store's view of the app's database: tests reach under the API through its Kysely handle. */
  readonly database: StoreDatabase;
  /** The app's DATABASE_URL (another app may be started on it: `startApi`'s `databaseUrl`). */
  readonly databaseUrl: string;
  request(method: string, url: string, options?: RequestOptions): Promise<Reply>;
  /** A user with a token; the password is PASSWORD. */
  user(username: string, options?: { permissions?: string[]; superuser?: boolean; active?: boolean }): Promise<TestUser>;
  /** Listens on a free loopback port (for tests below what inject reaches: sockets, Host); returns it. */
  listen(): Promise<number>;
  close(): Promise<void>;
}

/** `definition` served for a test file's tests (started before them, closed after), with one user: read `api` and `user` inside tests. */
export function servedWithUser(definition: AppDefinition, username: string, options?: Parameters<typeof startApi>[2]): { readonly api: TestApi; readonly user: TestUser } {
  const served = {} as { api: TestApi; user: TestUser };
  beforeAll(async () => {
    served.api = await startApi({}, definition, options);
    served.user = await served.api.user(username);
  });
  afterAll(() => served.api.close());
  return served;
}

export async function startApi(
  env: Record<string, string> = {},
  definition: AppDefinition = service,
  options: {
    logStream?: NodeJS.WritableStream;
    /** The database as the app sees it (wrapped to watch the statements it sends, say). */
    appDatabase?: (database: StoreDatabase) => StoreDatabase;
    /** A database of the caller's (another app's, say: two processes of one service), in place of a fresh one; left to the caller to drop. */
    databaseUrl?: string;
  } = {},
): Promise<TestApi> {
  const testDatabase = options.databaseUrl ? { url: options.databaseUrl, drop: async () => {} } : await createTestDatabase();
  const config = loadConfig({
    THROTTLE_ANON: 'off',
    THROTTLE_USER: 'off',
    // Each app its own Redis keys, so counters and sessions never leak between tests.
    REDIS_KEY_PREFIX: `test:${randomBytes(6).toString('hex')}:`,
    LOG_LEVEL: 'silent',
    ...env, DATABASE_URL: testDatabase.url });
  const database = openStoreDatabase(config.databaseUrl);
  await migrateApp(database, definition);
  const app = await buildApp(definition, { database: options.appDatabase?.(database) ?? database, config, logStream: options.logStream });
  await app.ready();

  return {
    app,
    database,
    databaseUrl: testDatabase.url,
    async request(method, url, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let payload: string | undefined;
      if (options.body !== undefined) {
        payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await app.inject({ method: method as 'GET', url, headers, payload });
      const body = response.body;
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      return { status: response.statusCode, headers: response.headers, body, json };
    },
    async user(username, options = {}) {
      passwordHash ??= hashPassword(PASSWORD);
      const row = await database.db
        .insertInto('users')
        .values({
          username,
          email: `${username}@example.com`,
          password: await passwordHash,
          is_active: options.active === false ? 0 : 1,
          is_superuser: options.superuser ? 1 : 0,
          date_joined: new Date().toISOString(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const id = Number(row.id);
      await grantPermissions(database, id, options.permissions ?? []);
      return { id, username, token: await createToken(database, id) };
    },
    async listen() {
      await app.listen({ port: 0, host: '127.0.0.1' });
      return (app.server.address() as { port: number }).port;
    },
    async close() {
      await app.close();
      await database.close();
      await testDatabase.drop();
    },
  };
}

/**
 * For tests below what inject reaches (sockets, Host): `listening(env)` starts the service on a free
 * loopback port and returns the port; `served()` is that service. It is closed after each test (after
 * the test file's own afterEach hooks, which vitest runs last-registered first).
 */
export function listeningApis(): { listening(env?: Record<string, string>): Promise<number>; served(): TestApi } {
  let api: TestApi | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });
  return {
    async listening(env = {}) {
      api = await startApi(env);
      return api.listen();
    },
    served() {
      if (!api) throw new Error('No service is listening: call listening() first.');
      return api;
    },
  };
}
