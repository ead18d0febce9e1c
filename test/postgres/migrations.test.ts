/**
 * Several servers started together on one empty schema: they race to create
 * the migration tables and to migrate, and all must come up with every
 * migration applied exactly once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import accountMigrations from '../../src/store/accounts/migrations/index.js';
import service from '../../src/service/app.js';
import { createTestDatabase, onPostgres, testDialect, type TestDatabase } from '../support/database.js';
import { get, spawnServer, type SpawnedServer } from './spawned.js';

/** The migrations a server's log says it applied. */
const migrationsLogged = (output: string): string[] =>
  output
    .split('\n')
    .filter((line) => line.includes('"msg":"migrations applied"'))
    .flatMap((line) => (JSON.parse(line) as { migrations: string[] }).migrations);

describe.runIf(testDialect === 'postgres')('migrations on PostgreSQL', () => {
  const databases: TestDatabase[] = [];
  const servers: SpawnedServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await Promise.all(databases.map((database) => database.drop()));
  });

  it('run once when three servers start together on an empty schema', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const started = await Promise.allSettled([1, 2, 3].map(() => spawnServer({ DATABASE_URL: database.url })));
    for (const result of started) if (result.status === 'fulfilled') servers.push(result.value);
    expect(started.map((result) => (result.status === 'rejected' ? String(result.reason) : 'up'))).toEqual(['up', 'up', 'up']);

    for (const server of servers) {
      expect((await get(server.port, '/readyz')).status).toBe(200);
      expect((await get(server.port, '/api/v1/users/')).status).toBe(401);
    }

    const applied = await onPostgres(async (client) => ({
      restfold: (await client.query(`SELECT name FROM ${database.schema}.restfold_migrations ORDER BY name`)).rows,
      app: (await client.query(`SELECT name FROM ${database.schema}.app_migrations ORDER BY name`)).rows,
    }));
    const expected = [...Object.keys(accountMigrations), ...Object.keys(service.migrations ?? {})].sort();
    expect([...applied.restfold, ...applied.app].map((row) => row.name).sort()).toEqual(expected);
    // Each server logs what it applied, each named with its app: together, every migration exactly once.
    const logged = servers.flatMap((server) => migrationsLogged(server.output()));
    const named = [...Object.keys(accountMigrations).map((name) => `restfold.${name}`), ...Object.keys(service.migrations ?? {}).map((name) => `app.${name}`)];
    expect(logged.sort()).toEqual(named.sort());
  });
});
