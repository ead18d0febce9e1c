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
      // The queued requests must outwait the connections opening on a loaded machine.
      DB_CONNECTION_WAIT_MS: '30000',
    });
  });
  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  /**
   * `count` user-list requests to `port` while the test holds the users table locked: the app's
   * connections (named `name`) once `expected` of them wait on the lock, counted again 500 ms later
   * (a pool that ignored its limit gets the chance to open more), and the statuses after the release.
   */
  async function requestsBlockedOnUsers(port: number, count: number, name: string, expected: number) {
    const blocker = new pg.Client({ connectionString: database.url });
    await blocker.connect();
    let responses: Promise<{ status: number }[]>;
    let blocked, open;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      responses = Promise.all(Array.from({ length: count }, () => get(port, '/api/v1/users/', token)));
      // A loaded machine may take a while to open that many backends.
      blocked = await eventually(async () => {
        const rows = await backends(name);
        return rows.filter((row) => row.waitEventType === 'Lock').length >= expected ? rows : undefined;
      }, `${expected} requests waiting on the lock`, 40);
      await sleep(500);
      open = await backends(name);
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }
    return { blocked, open, statuses: (await responses).map((response) => response.status) };
  }

  it('opens at most DB_MAX_CONNECTIONS, and keeps DB_MAX_IDLE_CONNECTIONS open once idle', { timeout: 60_000 }, async () => {
    const { blocked, open, statuses } = await requestsBlockedOnUsers(server.port, 12, applicationName, 4);
    expect(blocked).toHaveLength(4);
    expect(open).toHaveLength(4);
    expect(statuses).toEqual(Array(12).fill(200));

    // pg-pool closes connections idle for 10 s while more than DB_MAX_IDLE_CONNECTIONS are open.
    const idle = await eventually(async () => {
      const rows = await backends(applicationName);
      return rows.length === 2 ? rows : undefined;
    }, 'the pool to shrink to two connections', 30);
    expect(idle.map((row) => row.state)).toEqual(['idle', 'idle']);
  });

  it('shares its default of 25 connections (13 and 12) and 5 idle ones among WORKERS=2, not 25 and 5 each', { timeout: 90_000 }, async () => {
    const workersName = `${applicationName}_w`;
    const workers = await spawnServer({ DATABASE_URL: withApplicationName(database.url, workersName), WORKERS: '2', DB_CONNECTION_WAIT_MS: '30000' });
    try {
      // The server answers once one worker listens; the load must reach both.
      await eventually(async () => {
        const answering = new Set(await Promise.all(Array.from({ length: 6 }, async () => (await get(workers.port, '/healthz')).headers['x-worker-id'])));
        return answering.size === 2 ? answering : undefined;
      }, 'both workers answering');
      // Far more than both pools together hold: the primary hands connections to whichever worker is
      // free, not strictly in turn, so 40 left one worker fewer than its 13 now and then.
      const { open, statuses } = await requestsBlockedOnUsers(workers.port, 80, workersName, 25);
      expect(open).toHaveLength(25);
      expect(statuses).toEqual(Array(80).fill(200));
      // Idle, the workers keep 3 and 2 connections open.
      const idle = await eventually(async () => {
        const rows = await backends(workersName);
        return rows.length === 5 ? rows : undefined;
      }, 'the pools to shrink to five connections', 30);
      await sleep(1000);
      expect(await backends(workersName)).toHaveLength(idle.length);
    } finally {
      await workers.stop();
    }
  });

  it('answers 503 to a request that waits longer than DB_CONNECTION_WAIT_MS for a connection', { timeout: 40_000 }, async () => {
    const impatientName = `${applicationName}_i`;
    const impatient = await spawnServer({
      DATABASE_URL: withApplicationName(database.url, impatientName),
      DB_MAX_CONNECTIONS: '1',
      DB_CONNECTION_WAIT_MS: '300',
    });
    try {
      const blocker = new pg.Client({ connectionString: database.url });
      await blocker.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
        const holding = get(impatient.port, '/api/v1/users/', token);
        await eventually(async () => ((await backends(impatientName)).some((row) => row.waitEventType === 'Lock') ? true : undefined), 'the first request waiting on the lock');
        // The lock is held past the wait, but well within the default of 5 s (which would answer 200).
        const queued = get(impatient.port, '/api/v1/users/', token);
        await sleep(2000);
        await blocker.query('COMMIT');
        expect((await queued).status).toBe(503);
        expect((await holding).status).toBe(200);
      } finally {
        await blocker.end();
      }
    } finally {
      await impatient.stop();
    }
  });
});
