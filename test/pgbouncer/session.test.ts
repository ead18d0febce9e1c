/**
 * The service behind PgBouncer in session mode, which gives each client connection a server
 * connection of its own for as long as it is open: named statements work as on a direct
 * connection. The pool must fit the pooler's: a connection beyond its pool waits in PgBouncer's
 * queue, out of reach of DB_CONNECTION_WAIT_MS, until PgBouncer's query_wait_timeout ends it, which
 * the service answers as it answers an outage, 503.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/database.js';
import { eventually, get, spawnServer, userWithToken, type HttpReply } from '../postgres/spawned.js';
import { mixedLoad, onAdminConsole, pgbouncerSetting, pooledDatabase, servedThrough, sessionPooler, type PooledDatabase } from './pooled.js';

describe.runIf(sessionPooler)('through PgBouncer in session mode, with named statements', () => {
  let database: PooledDatabase;
  let poolSize: number;

  beforeAll(async () => {
    database = await pooledDatabase(sessionPooler!);
    poolSize = Number(await pgbouncerSetting(sessionPooler!, 'default_pool_size'));
    await userWithToken(database.direct, 'mixed');
  });
  afterAll(() => database?.drop());

  it('answers every kind of request as it must under a mixed load, WORKERS=2 sharing a pool the size of the pooler\'s', { timeout: 180_000 }, async () => {
    const server = await spawnServer(servedThrough(database.pooled, { WORKERS: '2', DB_MAX_CONNECTIONS: String(poolSize) }));
    try {
      const { unexpected, requests } = await mixedLoad([server.port], { username: 'mixed', password: 'pw-123456' }, 8, 2);
      expect(unexpected).toEqual([]);
      expect(requests).toBe(8 * 2 * 19);
      // A session keeps its LISTEN: the notification each process sent itself at start-up was heard.
      expect(server.output()).toContain('Server listening');
      expect(server.output()).not.toContain('did not reach the listening connection');
    } finally {
      await server.stop();
    }
  });

  it('answers 503 to a request whose connection PgBouncer kept waiting past query_wait_timeout, beyond its pool', { timeout: 120_000 }, async () => {
    const { token } = await userWithToken(database.direct, 'waiting');
    // The service's articles are live: without Redis it holds one connection of its own to listen
    // for changes, which takes one of the pooler's. With it, two connections more than the pooler's
    // pool; each request waits in Restfold's pool for far longer than PgBouncer's queue.
    const listening = 1;
    const requests = poolSize + 2 - listening;
    const server = await spawnServer(servedThrough(database.pooled, { DB_MAX_CONNECTIONS: String(requests), DB_CONNECTION_WAIT_MS: '60000' }));
    const waitTimeout = await pgbouncerSetting(sessionPooler!, 'query_wait_timeout');
    await onAdminConsole(sessionPooler!, (client) => client.query('SET query_wait_timeout = 2'));
    const blocker = new pg.Client({ connectionString: database.direct });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const statuses: number[] = [];
      const replies = Array.from({ length: requests }, () => get(server.port, '/api/v1/users/', token).then((reply: HttpReply) => (statuses.push(reply.status), reply)));
      // What the pooler's pool has room for waits on the lock in PostgreSQL; the other two in PgBouncer, until it gives up on them.
      const onLock = poolSize - listening;
      await eventually(async () => {
        const { rows } = await onPostgres((client) => client.query("SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [database.name]));
        return rows[0].count === onLock && statuses.length === 2 ? true : undefined;
      }, `${onLock} requests on the lock and two answered`, 30);
      expect(statuses).toEqual([503, 503]);
      await blocker.query('COMMIT');
      const answered = await Promise.all(replies);
      expect(answered.map((reply) => reply.status).sort()).toEqual([...Array(onLock).fill(200), 503, 503]);
      expect(answered.find((reply) => reply.status === 503)!.json).toMatchObject({ code: 'service_unavailable' });
    } finally {
      await blocker.end();
      await onAdminConsole(sessionPooler!, (client) => client.query(`SET query_wait_timeout = ${Number(waitTimeout)}`));
      await server.stop();
    }
  });
});
