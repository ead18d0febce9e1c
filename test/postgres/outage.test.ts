/**
 * The database going away under a running server: requests that need it get
 * a 503 envelope with Retry-After, /readyz says 503, the process keeps
 * running, and once the database is back the server recovers by itself.
 */
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, onPostgres, testDialect, withApplicationName, type TestDatabase } from '../support/database.js';
import { backends, eventually, get, spawnServer, userWithToken, type SpawnedServer } from './spawned.js';

/** A TCP proxy to PostgreSQL that the test can cut (close every connection, refuse new ones) and restore. */
class Proxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: URL) {}

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port || 5432), this.target.hostname);
      for (const [socket, other] of [[client, upstream], [upstream, client]] as const) {
        this.sockets.add(socket);
        socket.on('error', () => other.destroy());
        socket.on('close', () => {
          this.sockets.delete(socket);
          other.destroy();
        });
        socket.pipe(other);
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    const closed = new Promise((resolve) => this.server!.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** `url` with its host and port pointing at the proxy. */
  through(url: string): string {
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(this.port);
    return proxied.toString();
  }
}

const expectUnavailable = (reply: { status: number; headers: Record<string, unknown>; json: unknown }): void => {
  expect(reply.status).toBe(503);
  expect(reply.json).toMatchObject({ error: expect.any(String), code: 'service_unavailable' });
  expect(Number(reply.headers['retry-after'])).toBeGreaterThan(0);
};

const waitingOnLock = (applicationName: string, count: number): Promise<true> =>
  eventually(async () => {
    const waiting = (await backends(applicationName)).filter((row) => row.waitEventType === 'Lock');
    return waiting.length === count ? true : undefined;
  }, `${count} requests waiting on the lock`);

describe.runIf(testDialect === 'postgres')('a PostgreSQL outage', () => {
  let database: TestDatabase;
  let token: string;
  const servers: SpawnedServer[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    ({ token } = await userWithToken(database.url, 'survivor'));
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await database?.drop();
  });

  it('gives 503s while the database is unreachable, then recovers by itself', async () => {
    const applicationName = `rf_outage_${randomBytes(4).toString('hex')}`;
    const proxy = new Proxy(new URL(database.url));
    await proxy.open();
    const server = await spawnServer({ DATABASE_URL: proxy.through(withApplicationName(database.url, applicationName)) });
    servers.push(server);
    expect((await get(server.port, '/api/v1/users/', token)).status).toBe(200);

    // The network drops while requests are inside a query (waiting on a lock the test holds).
    const inFlight = await onPostgres(async (blocker) => {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const requests = Promise.all([1, 2, 3].map(() => get(server.port, '/api/v1/users/', token)));
      await waitingOnLock(applicationName, 3);
      await proxy.cut();
      await blocker.query('COMMIT');
      return requests;
    }, database.url);
    for (const reply of inFlight) expectUnavailable(reply);

    await proxy.cut();
    expectUnavailable(await get(server.port, '/api/v1/users/', token));
    expectUnavailable(await get(server.port, '/api/v1/users/1/', token));
    expect(server.process.exitCode).toBeNull();
    const ready = await get(server.port, '/readyz');
    expect(ready.status).toBe(503);
    expect(Number(ready.headers['retry-after'])).toBeGreaterThan(0);
    expect((await get(server.port, '/healthz')).status).toBe(200);

    await proxy.open();
    await eventually(async () => ((await get(server.port, '/readyz')).status === 200 ? true : undefined), '/readyz to recover');
    const listed = await get(server.port, '/api/v1/users/', token);
    expect(listed.status).toBe(200);
    expect(listed.json.results.map((user: { username: string }) => user.username)).toEqual(['survivor']);
    expect(server.process.exitCode).toBeNull();
    await proxy.cut();
  });

  it('survives its connections being terminated mid-query, answering 503 for those requests only', async () => {
    const applicationName = `rf_outage_${randomBytes(4).toString('hex')}`;
    const server = await spawnServer({ DATABASE_URL: withApplicationName(database.url, applicationName) });
    servers.push(server);
    expect((await get(server.port, '/api/v1/users/', token)).status).toBe(200);

    // Hold requests inside a query (waiting on a lock), then kill every connection the server has.
    const inFlight = await onPostgres(async (blocker) => {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const requests = Promise.all([1, 2, 3].map(() => get(server.port, '/api/v1/users/', token)));
      await waitingOnLock(applicationName, 3);
      await blocker.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
      await blocker.query('COMMIT');
      return requests;
    }, database.url);
    for (const reply of inFlight) expectUnavailable(reply);

    const after = await get(server.port, '/api/v1/users/', token);
    expect(after.status).toBe(200);
    expect((await get(server.port, '/readyz')).status).toBe(200);
    expect(server.process.exitCode).toBeNull();
  });

  it("tells of its LISTEN connection's loss in /readyz's body, staying 200, and of its return", async () => {
    const applicationName = `rf_listen_${randomBytes(4).toString('hex')}`;
    const server = await spawnServer({ DATABASE_URL: withApplicationName(database.url, applicationName) });
    servers.push(server);
    // The example service's articles are live and no REDIS_URL is set: changes cross processes over LISTEN/NOTIFY.
    expect((await get(server.port, '/readyz')).json).toEqual({ status: 'ok', listen: 'ok' });
    await onPostgres((client) => client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [`${applicationName}-listen`]), database.url);
    const lost = await eventually(async () => {
      const reply = await get(server.port, '/readyz');
      return reply.json?.listen === 'reconnecting' ? reply : undefined;
    }, '/readyz to say the LISTEN connection is being connected again');
    // Only live streams across processes depend on it: the process stays in rotation.
    expect(lost.status).toBe(200);
    expect(lost.json).toEqual({ status: 'ok', listen: 'reconnecting' });
    await eventually(async () => ((await get(server.port, '/readyz')).json?.listen === 'ok' ? true : undefined), '/readyz to say the LISTEN connection is back');
    expect((await get(server.port, '/api/v1/users/', token)).status).toBe(200);
  });
});
