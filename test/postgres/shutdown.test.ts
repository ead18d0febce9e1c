/**
 * SIGTERM with a request in flight: the server stops accepting connections,
 * lets the request finish with its 2xx, closes the pool and exits 0. A request
 * whose client has hung up is let finish too before the pool closes.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, onPostgres, testDialect, withApplicationName, type TestDatabase } from '../support/database.js';
import { backends, eventually, get, spawnServer, userWithToken, type SpawnedServer } from './spawned.js';

describe.runIf(testDialect === 'postgres')('SIGTERM', () => {
  const applicationName = `rf_shutdown_${randomBytes(4).toString('hex')}`;
  let database: TestDatabase;
  let server: SpawnedServer;
  let token: string;

  beforeEach(async () => {
    database = await createTestDatabase();
    ({ token } = await userWithToken(database.url, 'patient'));
    server = await spawnServer({ DATABASE_URL: withApplicationName(database.url, applicationName) });
  });
  afterEach(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('drains the request in flight, closes the pool and exits 0', async () => {
    const inFlight = await onPostgres(async (blocker) => {
      // Keep a request inside its query (waiting on a lock the test holds) while the signal arrives.
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const request = get(server.port, '/api/v1/users/', token);
      await eventually(
        async () => ((await backends(applicationName)).some((row) => row.waitEventType === 'Lock') ? true : undefined),
        'the request to wait on the lock',
      );
      server.kill('SIGTERM');
      await eventually(
        () => get(server.port, '/healthz').then(() => undefined, (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED' || undefined),
        'the server to stop accepting connections',
      );
      await blocker.query('COMMIT');
      return request;
    }, database.url);

    expect(inFlight.status).toBe(200);
    expect(inFlight.json.results.map((user: { username: string }) => user.username)).toEqual(['patient']);
    expect(await server.exited).toBe(0);
    expect(await backends(applicationName)).toEqual([]);
  });

  it('lets a request whose client hung up finish before it closes the pool', async () => {
    await onPostgres(async (blocker) => {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const abandoned = httpRequest({ host: '127.0.0.1', port: server.port, path: '/api/v1/users/', headers: { authorization: `Bearer ${token}` }, agent: false });
      abandoned.on('error', () => {});
      abandoned.end();
      await eventually(
        async () => ((await backends(applicationName)).some((row) => row.waitEventType === 'Lock') ? true : undefined),
        'the request to wait on the lock',
      );
      abandoned.destroy();
      server.kill('SIGTERM');
      // Its connection is gone, so the server has nothing left to drain but the handler itself.
      await eventually(async () => (server.output().includes('waiting for requests still being handled') ? true : undefined), 'the server to wait for the handler', 10);
      await blocker.query('COMMIT');
    }, database.url);

    expect(await server.exited).toBe(0);
    const errors = server.output().split('\n').filter((line) => line.includes('"level":50'));
    expect(errors).toEqual([]);
    expect(await backends(applicationName)).toEqual([]);
  });
});
