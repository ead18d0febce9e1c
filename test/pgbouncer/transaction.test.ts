/**
 * The service behind PgBouncer in transaction mode, which hands each transaction whichever server
 * connection is free: with DB_PREPARED_STATEMENTS=false every statement is sent unnamed, so none
 * meets a statement prepared on another connection, or misses its own. Start-up migrates through
 * the pooler, with a lock held by a transaction (a session's lock would be taken on one server
 * connection and released on another).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import accountMigrations from '../../src/store/accounts/migrations/index.js';
import service from '../../src/service/app.js';
import { testApp } from '../../src/testing/index.js';
import { onPostgres } from '../support/database.js';
import { get, spawnServer, userWithToken, type SpawnedServer } from '../postgres/spawned.js';
import { migrateCli, mixedLoad, pooledDatabase, servedThrough, transactionPooler, type PooledDatabase } from './pooled.js';

describe.runIf(transactionPooler)('through PgBouncer in transaction mode, DB_PREPARED_STATEMENTS=false', () => {
  let database: PooledDatabase;
  const servers: SpawnedServer[] = [];

  beforeAll(async () => {
    database = await pooledDatabase(transactionPooler!);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await database?.drop();
  });

  it('starts WORKERS=4, another server and `migrate` together on an empty database: every migration once, no lock left held', { timeout: 120_000 }, async () => {
    const env = servedThrough(database.pooled, { DB_PREPARED_STATEMENTS: 'false' });
    const [workers, single, migrated] = await Promise.allSettled([spawnServer({ ...env, WORKERS: '4' }), spawnServer(env), migrateCli(env)]);
    for (const started of [workers, single]) if (started.status === 'fulfilled') servers.push(started.value);
    expect([workers, single].map((started) => (started.status === 'rejected' ? String(started.reason) : 'up'))).toEqual(['up', 'up']);
    expect(migrated.status === 'fulfilled' && migrated.value).toMatchObject({ code: 0 });
    for (const server of servers) expect((await get(server.port, '/readyz')).status).toBe(200);

    const { recorded, locks } = await onPostgres(
      async (client) => ({
        recorded: (await client.query<{ name: string }>('SELECT name FROM restfold_migrations UNION ALL SELECT name FROM app_migrations')).rows.map((row) => row.name),
        locks: (await client.query("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")).rows,
      }),
      database.direct,
    );
    expect(recorded.sort()).toEqual([...Object.keys(accountMigrations), ...Object.keys(service.migrations ?? {})].sort());
    expect(locks).toEqual([]);
  });

  it('answers every kind of request as it must under a mixed load on both servers', { timeout: 180_000 }, async () => {
    expect(servers).toHaveLength(2);
    const { id } = await userWithToken(database.direct, 'mixed');
    expect(id).toBeGreaterThan(0);
    const { unexpected, requests } = await mixedLoad(
      servers.map((server) => server.port),
      { username: 'mixed', password: 'pw-123456' },
      8,
      2,
    );
    expect(unexpected).toEqual([]);
    expect(requests).toBe(8 * 2 * 19);
    // The writes' changes were sent (heard by no other process: the LISTEN is lost through the pooler,
    // as each warned), none refused by a statement name another client had prepared on the connection.
    for (const server of servers) expect(server.output()).not.toContain('a change could not be sent');
  });

  it("refuses restfold/testing's schema per test app at once, saying to reach PostgreSQL directly, and leaves no schema behind", async () => {
    // The pooler refuses the `options` startup parameter the schema is chosen with; unchecked, the app's tables would go to `public`.
    await expect(testApp(service, { database: database.pooled })).rejects.toThrow(/through a pooler .* Give the tests a URL that reaches PostgreSQL directly/);
    const left = await onPostgres((client) => client.query("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, 'restfold_test_')"), database.direct);
    expect(left.rows).toEqual([]);
  });
});
