/**
 * testApp: an app built in-process on a database of its own, its migrations applied, for one test
 * file (or one test): DRF's APITestCase with its test database. SQLite in memory by default; on
 * PostgreSQL (`database`, or TEST_DATABASE_URL) a schema of its own, made for this test app and
 * dropped by `close`, so test files running in parallel never see each other's rows.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  assertSchemaMatches,
  buildApp,
  createIsolatedSchema,
  createGroup,
  createUser,
  emptyAppTables,
  loadConfig,
  loadMigrations,
  migrateApp,
  openDatabase,
  recordStore,
  sweepIsolatedSchemas,
  type AppDefinition,
  type Database,
  type FastifyInstance,
  type ForcedUser,
  type Migrations,
  type RecordStore,
  type RecordStoreOptions,
  type Serializer,
} from '../framework/index.js';
import { TestClient, type RequestOptions, type UserLike } from './client.js';
import type { LiveEvents } from './live-events.js';

export interface TestAppOptions {
  /**
   * Where the app's tables go: `'sqlite'`, a new database in memory; or a PostgreSQL URL, in whose
   * database a schema of its own is made (`restfold_test_…`) and dropped by `close`. Default:
   * TEST_DATABASE_URL when it is set, else `'sqlite'`.
   */
  readonly database?: string;
  /**
   * The app's migrations, when its definition passes none (an app whose migrations the CLI finds
   * beside it): their folder (`new URL('../migrations/', import.meta.url)`) or the migrations.
   */
  readonly migrations?: Migrations | string | URL;
  /**
   * Settings, as the environment names them (README's table), over the test app's: LOG_LEVEL
   * silent; every throttle off (THROTTLE_ANON, THROTTLE_USER, THROTTLE_LOGIN, THROTTLE_SIGNUP: set
   * one to test it); a random SECRET_KEY; a pool of at most 5 PostgreSQL connections; uploaded files
   * (FILES_STORAGE) in a temporary folder of its own, removed at close. The process's
   * environment is not read (but TEST_DATABASE_URL), so a test sees the same app wherever it runs.
   */
  readonly env?: Readonly<Record<string, string>>;
}

export interface NewTestUser {
  readonly username: string;
  /** Left out: none anyone can log in with (Django's unusable password: use `client.as(user)`), and nothing hashed, which keeps making users fast. */
  readonly password?: string;
  /** Default: none (''), as `restfold createuser` without --email. */
  readonly email?: string;
  /** A superuser is staff too (Django's createsuperuser). */
  readonly superuser?: boolean;
  /** Django's is_staff: the admin at /admin/ lets staff in. */
  readonly staff?: boolean;
  /** Named permissions the user holds (`shop.restock`). */
  readonly permissions?: readonly string[];
  /** Names of groups to put the user in, made before with `t.createGroup`. */
  readonly groups?: readonly string[];
}

export interface TestUser {
  readonly id: number;
  readonly username: string;
  /** The password it was made with, for `client.login`; undefined when it was made without one. */
  readonly password: string | undefined;
}

export interface TestApp {
  /** The Fastify instance built (not listening): for what the client does not do. */
  readonly server: FastifyInstance;
  /**
   * The app's database, for rows set up or checked beside the API. Writes made through it are not
   * told to live streams (only the app's own writes are).
   */
  readonly database: Database;
  /** A user, made as `restfold createuser` makes one (the app's user model checks its fields). */
  createUser(user: NewTestUser): Promise<TestUser>;
  /** A group (Django's auth Group) giving its members `permissions`; its id. */
  createGroup(name: string, permissions?: readonly string[]): Promise<number>;
  /** An anonymous client; `.as(user)`, `.withToken(token)` and `.login(username, password)` answer authenticated ones. */
  client(): TestClient;
  /** Deletes every row (users included), keeping the tables: between tests, instead of a new test app. */
  reset(): Promise<void>;
  /** The serializer's records on the app's database, as the app's own code reaches them (named after its table unless `name` is given). */
  recordStore(serializer: Serializer, options?: Partial<RecordStoreOptions>): RecordStore;
  /** A live stream's events, as `user` (anonymous without one). */
  liveEvents(path: string, options?: RequestOptions & { readonly as?: UserLike }): Promise<LiveEvents>;
  /** Closes the app, its streams and its database, and drops the database made for it. */
  close(): Promise<void>;
}

/** Schemas older than this, left by a run that crashed, are dropped when a test app starts. */
const STALE_AFTER_MS = 24 * 60 * 60 * 1000;

const TEST_SETTINGS = {
  LOG_LEVEL: 'silent',
  THROTTLE_ANON: 'off',
  THROTTLE_USER: 'off',
  THROTTLE_LOGIN: 'off',
  THROTTLE_SIGNUP: 'off',
  DB_MAX_CONNECTIONS: '5',
  DB_MAX_IDLE_CONNECTIONS: '1',
};

/** The `database` option's ways of saying SQLite in memory. */
const IN_MEMORY = new Set(['sqlite', 'sqlite::memory:']);

/** Where the tables go, and how to remove them. */
async function freshDatabase(choice: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (IN_MEMORY.has(choice)) {
    // In memory, which SQLite's reader threads cannot share: the app reads on its one connection.
    return { url: 'sqlite::memory:', drop: async () => {} };
  }
  if (!/^postgres(ql)?:\/\//.test(choice)) throw new Error(`testApp: database must be 'sqlite' or a postgres:// URL, not "${choice}".`);
  // Best effort: what a crashed run left behind goes; a failure here must not fail this run.
  await sweepIsolatedSchemas(choice, STALE_AFTER_MS).catch(() => undefined);
  return createIsolatedSchema(choice);
}

async function migrationsOf(definition: AppDefinition, given: TestAppOptions['migrations']): Promise<Migrations | undefined> {
  if (given === undefined) return definition.migrations;
  return typeof given === 'string' || given instanceof URL ? loadMigrations(given) : given;
}

export async function testApp(definition: AppDefinition, options: TestAppOptions = {}): Promise<TestApp> {
  const migrations = await migrationsOf(definition, options.migrations);
  const app = { ...definition, migrations };
  const place = await freshDatabase(options.database ?? process.env.TEST_DATABASE_URL ?? 'sqlite');
  // Uploaded files go to a folder of the test app's own, removed at close, unless its env names a storage.
  const files = options.env?.FILES_STORAGE ? undefined : await mkdtemp(join(tmpdir(), 'restfold-test-files-'));
  const dropFiles = () => (files ? rm(files, { recursive: true, force: true }) : Promise.resolve());
  const config = loadConfig({ ...TEST_SETTINGS, SECRET_KEY: randomBytes(32).toString('base64url'), ...(files && { FILES_STORAGE: `file:${files}` }), ...options.env, DATABASE_URL: place.url });
  const database = openDatabase(place.url, { maxConnections: config.maxConnections, maxIdleConnections: config.maxIdleConnections });
  // Which user each of the client's requests is forced to be made by: decided once per request, in
  // the context its client sent it from (a live stream's later checks run in others').
  const forcing = new AsyncLocalStorage<number | undefined>();
  const decided = new WeakMap<object, number | undefined>();
  const forcedUser: ForcedUser = (request) => {
    if (!decided.has(request.raw)) decided.set(request.raw, forcing.getStore());
    return decided.get(request.raw);
  };
  const streams = new Set<LiveEvents>();
  let server: FastifyInstance;
  try {
    await migrateApp(database, app);
    await assertSchemaMatches(database, app);
    server = await buildApp(app, { database, config, forcedUser });
    await server.ready();
  } catch (error) {
    await database.close();
    await place.drop();
    await dropFiles();
    throw error;
  }
  const context = {
    server,
    // Awaited inside the run: inject answers a thenable that sends the request only once awaited.
    asUser: <T>(id: number | undefined, send: () => PromiseLike<T>) => forcing.run(id, async () => await send()),
    opened: (events: LiveEvents) => streams.add(events),
  };

  return {
    server,
    database,
    async createUser({ username, password, email = '', superuser = false, staff = false, permissions = [], groups = [] }) {
      const user = { username, password, unusablePassword: password === undefined, email, superuser, staff, permissions, groups };
      const id = await createUser(database, user, definition.userModel);
      return { id, username, password };
    },
    createGroup: (name, permissions = []) => createGroup(database, name, permissions),
    client: () => new TestClient(context),
    reset: () => emptyAppTables(database),
    recordStore: (serializer, storeOptions = {}) => recordStore(database, serializer, { name: serializer.model.table, ...storeOptions }),
    liveEvents(path, { as, ...request } = {}) {
      const client = new TestClient(context);
      return (as ? client.as(as) : client).liveEvents(path, request);
    },
    async close() {
      for (const events of streams) events.close();
      try {
        await server.close();
        await database.close();
      } finally {
        await place.drop();
        await dropFiles();
      }
    },
  };
}
