/**
 * A rolling deploy of the release whose framework migration 0003 moved users' own grants to
 * `auth_user_permissions`: servers of the release before, which read and write `user_permissions`,
 * keep answering while 0003 runs and after it, each release sees the other's grants and revocations,
 * and `migrate --contract` (0004) drops the old table only when asked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp, declaredSchemaDifferences, loadConfig } from '../../src/framework/index.js';
import { migrateFrameworkAndApp } from '../../src/framework/app/definition.js';
import { createToken } from '../../src/framework/stages/authentication/token.js';
import { hashPassword } from '../../src/framework/base/passwords.js';
import service from '../../src/service/app.js';
import accountMigrations from '../../src/store/accounts/migrations/index.js';
import { openStoreDatabase, storeDatabase, type Database, type StoreDatabase } from '../../src/store/connection/database.js';
import { migrate } from '../../src/store/schema/migrations.js';
import { recordedState } from '../../src/store/schema/operations.js';
import { compiledStatement, type Build } from '../../src/store/statements/compiled.js';
import type { Placeholder } from '../../src/store/statements/placeholder.js';
import { PASSWORD } from '../support/api.js';
import { runCli } from '../support/spawned-server.js';
import { createTestDatabase, testDialect, withApplicationName, type TestDatabase } from '../support/database.js';

/** The framework's migrations of the release before 0003. */
const previousMigrations = Object.fromEntries(Object.entries(accountMigrations).filter(([name]) => name < '0003'));

/** The release before's statements on users' own grants, as its store/accounts/user-permissions.ts ran them. */
function previousRelease(database: StoreDatabase) {
  const effectiveOf: Build<{ name: string }> = (on: Database, userId: Placeholder) => {
    const { db } = storeDatabase(on);
    return db
      .selectFrom('user_permissions')
      .select('name')
      .where('user_id', '=', userId)
      .union(
        db
          .selectFrom('auth_group_permissions')
          .innerJoin('auth_user_groups', 'auth_user_groups.group_id', 'auth_group_permissions.group_id')
          .select('auth_group_permissions.name')
          .where('auth_user_groups.user_id', '=', userId),
      )
      .orderBy('name');
  };
  return {
    effective: async (userId: number) => (await compiledStatement(effectiveOf, 'permissions', effectiveOf)(database, [userId])).map((row) => row.name),
    grant: async (userId: number, name: string) => {
      await database.db.insertInto('user_permissions').values({ user_id: userId, name }).onConflict((conflict) => conflict.columns(['user_id', 'name']).doNothing()).execute();
    },
    revoke: async (userId: number, name: string) =>
      Number((await database.db.deleteFrom('user_permissions').where('user_id', '=', userId).where('name', 'in', [name]).executeTakeFirst()).numDeletedRows),
  };
}

/** SQLite: a file both connections open (an in-memory database is each connection's own). */
async function sharedDatabase(): Promise<TestDatabase> {
  if (testDialect === 'postgres') return createTestDatabase();
  const folder = mkdtempSync(join(tmpdir(), 'restfold-expand-'));
  return { url: `sqlite:${join(folder, 'db.sqlite3')}`, drop: async () => rmSync(folder, { recursive: true, force: true }) };
}

/** Whether a connection tagged `name` waits for a lock (PostgreSQL). */
async function waitsForLock(client: pg.Client, name: string): Promise<boolean> {
  // Inside a transaction, pg_stat_activity is read once and kept.
  await client.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await client.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [name]);
  return rows.length > 0;
}

describe("framework migration 0003 under servers of the release before it", () => {
  let testDatabase: TestDatabase;
  /** A server of the release before: its own connections. */
  let previous: StoreDatabase;
  /** The new release's: it migrates, then serves. */
  let current: StoreDatabase;
  let app: FastifyInstance | undefined;
  let root: number;
  let bob: number;

  beforeEach(async () => {
    testDatabase = await sharedDatabase();
    previous = openStoreDatabase(testDatabase.url);
    current = openStoreDatabase(testDialect === 'postgres' ? withApplicationName(testDatabase.url, 'migrating') : testDatabase.url);
    await migrate(previous, 'restfold', previousMigrations);
    await migrate(previous, 'app', service.migrations!, recordedState(previousMigrations));
    const password = await hashPassword(PASSWORD);
    const { types } = previous.capabilities;
    [root, bob] = await Promise.all(
      ['root', 'bob'].map(async (username) => {
        const values = { username, email: '', password, is_active: types.booleanValue(true), is_superuser: types.booleanValue(username === 'root'), date_joined: new Date().toISOString() };
        return Number((await previous.db.insertInto('users').values(values).returning('id').executeTakeFirstOrThrow()).id);
      }),
    ) as [number, number];
    await previousRelease(previous).grant(bob, 'articles.change');
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await Promise.all([previous.close(), current.close()]);
    await testDatabase.drop();
  });

  /** The new release's server, as root: bob's own grants through /auth/users/{id}/permissions/. */
  async function newServer() {
    const config = loadConfig({ DATABASE_URL: testDatabase.url, LOG_LEVEL: 'silent', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' });
    app = await buildApp(service, { database: current, config });
    const headers = { authorization: `Bearer ${await createToken(current, root)}` };
    const grants = `/api/v1/auth/users/${bob}/permissions/`;
    const served = app;
    return {
      names: async () => {
        const listed = await served.inject({ method: 'GET', url: `${grants}?page_size=100`, headers });
        expect(listed.statusCode, listed.body).toBe(200);
        return (listed.json().results as { name: string }[]).map((grant) => grant.name).sort();
      },
      grant: (name: string) => served.inject({ method: 'POST', url: grants, headers, payload: { name } }),
      revoke: (name: string) => served.inject({ method: 'DELETE', url: `${grants}?name=${encodeURIComponent(name)}`, headers }),
      rename: (id: number, name: string) => served.inject({ method: 'PATCH', url: `${grants}${id}/`, headers, payload: { name } }),
    };
  }

  it("keeps the release before answering while 0003 runs; each release sees the other's grants and revocations", async () => {
    const old = previousRelease(previous);
    // The release before grants and reads all along, the migration running meanwhile.
    let migrated = false;
    const loopGranted: string[] = [];
    const loop = (async () => {
      for (let round = 0; !migrated || round < 2; round += 1) {
        const name = `loop.n${loopGranted.length}`;
        await old.grant(bob, name);
        loopGranted.push(name);
        expect(await old.effective(bob)).toEqual(expect.arrayContaining(['articles.change', ...loopGranted]));
      }
    })();

    let blocker: pg.Client | undefined;
    let readDuring: Promise<string[]> | undefined;
    let grantDuring: Promise<void> | undefined;
    if (testDialect === 'postgres') {
      // Holds 0003 open once it has made everything but its record, so that the release before reads and grants meanwhile.
      blocker = new pg.Client({ connectionString: testDatabase.url });
      await blocker.connect();
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE restfold_migrations IN EXCLUSIVE MODE');
    }
    const migration = migrateFrameworkAndApp(current, service);
    try {
      if (blocker) {
        while (!(await waitsForLock(blocker, 'migrating'))) await new Promise((resolve) => setTimeout(resolve, 10));
        // They wait for the migration's lock on user_permissions, then answer.
        readDuring = old.effective(bob);
        grantDuring = old.grant(bob, 'during.migration');
      }
    } finally {
      await blocker?.query('COMMIT');
      await blocker?.end();
    }
    // The loop stops however the migration ends.
    const applied = await migration.finally(() => (migrated = true));
    if (readDuring) expect(await readDuring).toContain('articles.change');
    await grantDuring;
    await loop;

    expect(applied.framework).toEqual(['0003_admin_log_and_user_permission_ids']);
    expect(applied.held).toEqual(['restfold.0004_drop_table_user_permissions']);
    // What `serve` checks before it starts: the new release serves on the expanded schema.
    expect(await declaredSchemaDifferences(current, service)).toEqual([]);
    const server = await newServer();
    const kept = ['articles.change', ...loopGranted, ...(grantDuring ? ['during.migration'] : [])].sort();
    expect(await server.names()).toEqual(kept);

    // The release before's grant and revocation reach the new release, and the other way round.
    await old.grant(bob, 'old.side');
    expect(await server.names()).toContain('old.side');
    const granted = await server.grant('new.side');
    expect(granted.statusCode, granted.body).toBe(201);
    expect(await old.effective(bob)).toContain('new.side');
    expect((await server.revoke('old.side')).statusCode).toBe(204);
    expect(await old.effective(bob)).not.toContain('old.side');
    const renamed = await server.rename((granted.json() as { id: number }).id, 'new.renamed');
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(await old.effective(bob)).toEqual(expect.arrayContaining(['new.renamed']));
    expect(await old.effective(bob)).not.toContain('new.side');
    expect(await old.revoke(bob, 'new.renamed')).toBe(1);
    expect(await server.names()).toEqual(kept);

    // Both at once, the same names: each side answers as it does alone (201, or 400 when the other's came first), never a 500.
    const both = Array.from({ length: 8 }, (_, index) => `both.n${index}`);
    const granting = await Promise.all(both.flatMap((name) => [old.grant(bob, name).then(() => 201), server.grant(name).then((reply) => reply.statusCode)]));
    expect(granting.filter((status) => status !== 201 && status !== 400)).toEqual([]);
    expect(await server.names()).toEqual([...kept, ...both].sort());
    expect(await old.effective(bob)).toEqual([...kept, ...both].sort());
    const revoking = await Promise.all(both.flatMap((name) => [old.revoke(bob, name).then(() => 204), server.revoke(name).then((reply) => reply.statusCode)]));
    expect(revoking.filter((status) => status !== 204 && status !== 404)).toEqual([]);
    expect(await server.names()).toEqual(kept);
    expect(await old.effective(bob)).toEqual(kept);
  });

  it('drops user_permissions only on `migrate --contract`; the new release goes on granting after it', async () => {
    expect((await migrateFrameworkAndApp(current, service)).held).toEqual(['restfold.0004_drop_table_user_permissions']);
    // Held again by the next start too.
    expect(await migrateFrameworkAndApp(current, service)).toEqual({ framework: [], app: [], held: ['restfold.0004_drop_table_user_permissions'] });
    expect(await previousRelease(previous).effective(bob)).toEqual(['articles.change']);

    expect(await migrateFrameworkAndApp(current, service, true)).toEqual({ framework: ['0004_drop_table_user_permissions'], app: [], held: [] });
    await expect(previousRelease(previous).grant(bob, 'too.late')).rejects.toThrow(/user_permissions/);
    expect(await declaredSchemaDifferences(current, service)).toEqual([]);
    const server = await newServer();
    expect((await server.grant('after.contract')).statusCode).toBe(201);
    expect(await server.names()).toEqual(['after.contract', 'articles.change']);
    expect((await server.revoke('articles.change')).statusCode).toBe(204);
    expect(await server.names()).toEqual(['after.contract']);
  });

  it('`restfold migrate` says what waits for `--contract`, which runs it', () => {
    const env = { PATH: process.env.PATH, DATABASE_URL: testDatabase.url, LOG_LEVEL: 'silent', SECRET_KEY: 'permissions-expand-secret-0123456789abcdef' };
    const waiting = 'Waiting for `restfold migrate --contract`, to run once no server of the release before serves: restfold.0004_drop_table_user_permissions.\n';
    expect(runCli(['migrate'], env)).toMatchObject({ status: 0, stdout: `Applied the framework's migrations: 0003_admin_log_and_user_permission_ids\n${waiting}` });
    expect(runCli(['migrate'], env)).toMatchObject({ status: 0, stdout: `Migrations are up to date.\n${waiting}` });
    expect(runCli(['migrate', '--contract'], env)).toMatchObject({ status: 0, stdout: "Applied the framework's migrations: 0004_drop_table_user_permissions\n" });
    expect(runCli(['migrate'], env)).toMatchObject({ status: 0, stdout: 'Migrations are up to date.\n' });
  });

  it('runs 0004 at once on a database that had none of the migrations: no server of a release before serves it', async () => {
    const fresh = await createTestDatabase();
    const database = openStoreDatabase(fresh.url);
    try {
      expect(await migrateFrameworkAndApp(database, service)).toMatchObject({ framework: Object.keys(accountMigrations), held: [] });
      await expect(database.db.selectFrom('user_permissions').selectAll().execute()).rejects.toThrow(/user_permissions/);
    } finally {
      await database.close();
      await fresh.drop();
    }
  });
});
