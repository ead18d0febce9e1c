/**
 * DB_MAX_CONNECTIONS and DB_MAX_IDLE_CONNECTIONS, seen from PostgreSQL's side
 * (pg_stat_activity) while a spawned server serves more requests than its pool
 * holds, all blocked on a table lock the test holds.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testDialect, withApplicationName, type TestDatabase } from '../support/database.js';
import { backends, eventually, get, sleep, spawnServer, userWithToken, type SpawnedServer } from './spawned.js';

describe.runIf(testDialect === 'postgres')('the PostgreSQL pool', () => {
  const applicationName = `rf_pool_${randomBytes(4).toString('hex')}`;
  let database: TestDatabase;
  let server: SpawnedServer;
  let token: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    ({ token } = await userWithToken(database.url, 'pooled'));
    server = await spawnServer({
      DATABASE_URL: withApplicationName(database.url, applicationName),
      DB_MAX_CONNECTIONS: '4',
      DB_MAX_IDLE_CONNECTIONS: '2',
    });
  });
  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('opens at most DB_MAX_CONNECTIONS, and keeps DB_MAX_IDLE_CONNECTIONS open once idle', { timeout: 40_000 }, async () => {
    const blocker = new pg.Client({ connectionString: database.url });
    await blocker.connect();
    let responses: Promise<{ status: number }[]>;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      responses = Promise.all(Array.from({ length: 12 }, () => get(server.port, '/api/v1/users/', token)));

      const blocked = await eventually(async () => {
        const rows = await backends(applicationName);
        return rows.filter((row) => row.waitEventType === 'Lock').length >= 4 ? rows : undefined;
      }, 'four requests waiting on the lock');
      // Give a pool that ignored its limit the chance to open more before counting again.
      await sleep(500);
      expect(blocked).toHaveLength(4);
      expect(await backends(applicationName)).toHaveLength(4);
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }

    const statuses = (await responses).map((response) => response.status);
    expect(statuses).toEqual(Array(12).fill(200));

    // pg-pool closes connections idle for 10 s while more than DB_MAX_IDLE_CONNECTIONS are open.
    const idle = await eventually(async () => {
      const rows = await backends(applicationName);
      return rows.length === 2 ? rows : undefined;
    }, 'the pool to shrink to two connections', 30);
    expect(idle.map((row) => row.state)).toEqual(['idle', 'idle']);
  });

  it('shares its default of 25 connections among WORKERS=2 (13 each), not 25 each', { timeout: 40_000 }, async () => {
    const workersName = `${applicationName}_w`;
    const workers = await spawnServer({ DATABASE_URL: withApplicationName(database.url, workersName), WORKERS: '2' });
    // The server answers once one worker listens; the load must reach both.
    await eventually(async () => {
      const answering = new Set(await Promise.all(Array.from({ length: 6 }, async () => (await get(workers.port, '/healthz')).headers['x-worker-id'])));
      return answering.size === 2 ? answering : undefined;
    }, 'both workers answering');
    const blocker = new pg.Client({ connectionString: database.url });
    await blocker.connect();
    let responses: Promise<{ status: number }[]>;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      // More than both pools together hold; the primary hands connections to the workers in turn.
      responses = Promise.all(Array.from({ length: 40 }, () => get(workers.port, '/api/v1/users/', token)));
      await eventually(async () => {
        const rows = await backends(workersName);
        return rows.filter((row) => row.waitEventType === 'Lock').length >= 26 ? rows : undefined;
      }, 'both workers\' pools full, waiting on the lock');
      await sleep(500);
      expect(await backends(workersName)).toHaveLength(26);
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }
    try {
      expect((await responses).map((response) => response.status)).toEqual(Array(40).fill(200));
    } finally {
      await workers.stop();
    }
  });
});
