/**
 * The service behind PgBouncer in transaction mode with named statements left on
 * (DB_PREPARED_STATEMENTS unset), where PgBouncer carries them (1.21 and later, max_prepared_statements):
 * it prepares each statement text once per server connection under a name of its own, on whichever
 * server connection a client's statement runs, and answers Close itself. The pooler's pool is
 * lowered to a few server connections, far fewer than the servers' pools. Read on PgBouncer's admin
 * console: the statements it keeps per server and per client connection, and how many it prepared.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import accountMigrations from '../../src/store/accounts/migrations/index.js';
import service from '../../src/service/app.js';
import { openStoreDatabase } from '../../src/store/connection/database.js';
import { STATEMENTS_PER_CONNECTION } from '../../src/store/dialects/postgres/named-statement.js';
import { onPostgres } from '../support/database.js';
import { get, sleep, spawnServer, userWithToken, type SpawnedServer } from '../postgres/spawned.js';
import { migrateCli, mixedLoad, onAdminConsole, pgbouncerSetting, pooledDatabase, preparedPooler, servedThrough, type PooledDatabase } from './pooled.js';

/** The pooler's server connections per database and user, for this suite: fewer than any one server's pool. */
const SERVER_CONNECTIONS = 4;

interface PoolerStats {
  total_client_parse_count: string;
  total_server_parse_count: string;
  total_bind_count: string;
}

describe.runIf(preparedPooler)('through PgBouncer in transaction mode with max_prepared_statements, named statements on', () => {
  let database: PooledDatabase;
  let poolSize: string;
  const servers: SpawnedServer[] = [];
  /** Rows of one of the admin console's SHOW commands about this suite's database. */
  const show = async <T>(what: 'CLIENTS' | 'SERVERS' | 'STATS'): Promise<T[]> =>
    onAdminConsole(preparedPooler!, async (client) => (await client.query(`SHOW ${what}`)).rows.filter((row) => row.database === database.name));
  const user = { username: 'mixed', password: 'pw-123456' };

  beforeAll(async () => {
    expect(await pgbouncerSetting(preparedPooler!, 'pool_mode')).toBe('transaction');
    expect(Number(await pgbouncerSetting(preparedPooler!, 'max_prepared_statements'))).toBeGreaterThan(0);
    poolSize = await pgbouncerSetting(preparedPooler!, 'default_pool_size');
    await onAdminConsole(preparedPooler!, (client) => client.query(`SET default_pool_size = ${SERVER_CONNECTIONS}`));
    database = await pooledDatabase(preparedPooler!);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await database?.drop();
    await onAdminConsole(preparedPooler!, (client) => client.query(`SET default_pool_size = ${Number(poolSize)}`));
  });

  it('starts WORKERS=2, another server and `migrate` together on an empty database: every migration once', { timeout: 120_000 }, async () => {
    const env = servedThrough(database.pooled);
    const [workers, single, migrated] = await Promise.allSettled([spawnServer({ ...env, WORKERS: '2' }), spawnServer(env), migrateCli(env)]);
    for (const started of [workers, single]) if (started.status === 'fulfilled') servers.push(started.value);
    expect([workers, single].map((started) => (started.status === 'rejected' ? String(started.reason) : 'up'))).toEqual(['up', 'up']);
    expect(migrated.status === 'fulfilled' && migrated.value).toMatchObject({ code: 0 });
    for (const server of servers) expect((await get(server.port, '/readyz')).status).toBe(200);
    const recorded = await onPostgres(
      async (client) => (await client.query<{ name: string }>('SELECT name FROM restfold_migrations UNION ALL SELECT name FROM app_migrations')).rows.map((row) => row.name),
      database.direct,
    );
    expect(recorded.sort()).toEqual([...Object.keys(accountMigrations), ...Object.keys(service.migrations ?? {})].sort());
  });

  it('answers every kind of request as it must from more clients than the pooler has server connections, each statement prepared once per server connection', { timeout: 180_000 }, async () => {
    expect(servers).toHaveLength(2);
    await userWithToken(database.direct, user.username);
    const { unexpected, requests } = await mixedLoad(
      servers.map((server) => server.port),
      user,
      12,
      2,
    );
    expect(unexpected).toEqual([]);
    expect(requests).toBe(12 * 2 * 19);
    const [clients, serverConnections] = [await show('CLIENTS'), await show('SERVERS')];
    expect(serverConnections.length).toBeLessThanOrEqual(SERVER_CONNECTIONS);
    expect(clients.length).toBeGreaterThan(SERVER_CONNECTIONS);
    // Clients parsed each statement once per connection of theirs; PgBouncer prepared it on far fewer.
    const [stats] = await show<PoolerStats>('STATS');
    const [clientParses, serverParses, binds] = [stats!.total_client_parse_count, stats!.total_server_parse_count, stats!.total_bind_count].map(Number) as [number, number, number];
    expect(serverParses).toBeLessThan(clientParses);
    expect(binds).toBeGreaterThan(requests);
  });

  it('answers every request while migrations retype a column it returns (twice) and add one', { timeout: 180_000 }, async () => {
    const alter = (change: string) => onPostgres((client) => client.query(`ALTER TABLE articles ${change}`), database.direct);
    // Each change makes the statements that return titles stale on every server connection that prepared them.
    const load = mixedLoad(
      servers.map((server) => server.port),
      user,
      8,
      3,
    );
    for (const change of ['ALTER COLUMN title TYPE text', 'ADD COLUMN summary text', 'ALTER COLUMN title TYPE varchar(300)']) {
      await sleep(700);
      await alter(change);
    }
    const during = await load;
    expect(during.unexpected).toEqual([]);
    const after = await mixedLoad(
      servers.map((server) => server.port),
      user,
      4,
      1,
    );
    expect(after.unexpected).toEqual([]);
  });

  it('keeps a server connection within max_prepared_statements and a client within STATEMENTS_PER_CONNECTION, however many statements are run', async () => {
    const store = openStoreDatabase(database.pooled, { maxConnections: 1 });
    try {
      const shapes = STATEMENTS_PER_CONNECTION + 100;
      for (let shape = 0; shape < shapes; shape++) expect(await store.run(`select $1::int + ${shape} as n`, [1])).toEqual([{ n: 1 + shape }]);
      const limit = Number(await pgbouncerSetting(preparedPooler!, 'max_prepared_statements'));
      const held = (rows: { prepared_statements: number }[]) => Math.max(...rows.map((row) => Number(row.prepared_statements)));
      expect(held(await show('SERVERS'))).toBeLessThanOrEqual(limit);
      expect(held(await show('CLIENTS'))).toBeLessThanOrEqual(STATEMENTS_PER_CONNECTION);
      // The first was closed long ago, by the client and by PgBouncer: it is prepared again.
      expect(await store.run('select $1::int + 0 as n', [5])).toEqual([{ n: 5 }]);
    } finally {
      await store.close();
    }
  });

  it('runs a statement whose Parse the server refused once it can, on the same connection, and a stale one with its new type', async () => {
    const store = openStoreDatabase(database.pooled, { maxConnections: 1 });
    const direct = (text: string) => onPostgres((client) => client.query(text), database.direct);
    try {
      // Through Kysely, whose connection outlives an error (`run` drops it).
      const later = () => store.db.selectFrom('later').select('n').execute();
      await expect(later()).rejects.toMatchObject({ code: '42P01' });
      await direct("CREATE TABLE later (n text); INSERT INTO later VALUES ('7')");
      expect(await later()).toEqual([{ n: '7' }]);
      await direct('ALTER TABLE later ALTER COLUMN n TYPE integer USING n::integer');
      expect(await later()).toEqual([{ n: 7 }]);
      expect(await store.run('select n from later', [])).toEqual([{ n: 7 }]);
    } finally {
      await store.close();
    }
  });

  it('warns, on each server, that live changes through it reach no other process: a LISTEN through a transaction pooler is lost', async () => {
    // Started minutes ago, with the service's live articles and no LIVE_DATABASE_URL or REDIS_URL.
    expect(servers).toHaveLength(2);
    for (const server of servers) expect(server.output()).toContain('a notification sent through DATABASE_URL did not reach the listening connection');
  });
});
