/**
 * Redis going away under load, with throttles on (docs/deploying.md, Dependency outages): token
 * and JWT requests go on being answered, their limits counted in each process; what lives in Redis
 * (sessions) is 503 in the API's error envelope, for those requests only; /readyz stays 200 and
 * says Redis is unreachable; once Redis is back, counting is shared again. Two instances of the
 * service over one database, and a Redis of the test's own (redis-server on a free port), stopped
 * and started again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PASSWORD, startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';
import { createTestDatabase, testDialect } from '../support/database.js';
import { openEvents } from '../support/event-stream.js';
import { liveItemsApp } from '../support/live-items.js';

/** A free loopback port, for a Redis of the test's own. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** redis-server on `port`, nothing persisted, resolved once it accepts connections. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').includes('Ready to accept connections')) resolve();
    });
  });
  child.stdout!.resume();
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Polls `probe` every 50 ms until it holds (10 s at most). */
async function until(probe: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let port: number;
let redis: ChildProcess;
let a: TestApi;
let b: TestApi;
let alice: TestUser;
let bob: TestUser;
const dropDatabases: (() => Promise<void>)[] = [];
const logged: string[] = [];

/** One database for both instances: a SQLite file (a memory database is one process's own), or a PostgreSQL schema. */
async function sharedDatabase(): Promise<string> {
  if (testDialect === 'postgres') {
    const database = await createTestDatabase();
    dropDatabases.push(database.drop);
    return database.url;
  }
  const folder = mkdtempSync(join(tmpdir(), 'restfold-redis-outage-'));
  dropDatabases.push(async () => rmSync(folder, { recursive: true, force: true }));
  return `sqlite:${join(folder, 'db.sqlite3')}`;
}

beforeAll(async () => {
  port = await freePort();
  redis = await startRedis(port);
  const env = {
    REDIS_URL: `redis://127.0.0.1:${port}`,
    REDIS_KEY_PREFIX: `outage:${randomBytes(4).toString('hex')}:`,
    THROTTLE_USER: '100000/min',
    THROTTLE_LOGIN: '100000/min',
    METRICS: 'true',
    LOG_LEVEL: 'info',
    SECRET_KEY: 'redis-outage-secret-key-0123456789abcdef',
  };
  const logStream = new Writable({ write: (chunk, _encoding, done) => done(void logged.push(String(chunk))) });
  const databaseUrl = await sharedDatabase();
  a = await startApi(env, undefined, { logStream, databaseUrl });
  b = await startApi({ ...env, LOG_LEVEL: 'silent' }, undefined, { databaseUrl });
  alice = await a.user('alice');
  bob = await a.user('bob');
}, 60_000);
afterAll(async () => {
  await b?.close();
  await a?.close();
  await Promise.all(dropDatabases.map((drop) => drop()));
  if (redis) await stopRedis(redis);
});

const remaining = (reply: Reply): number => Number(reply.headers['ratelimit-remaining']);
const listUsers = (api: TestApi, user = alice): Promise<Reply> => api.request('GET', '/api/v1/users/', { token: user.token });
const sessionLogin = (api: TestApi): Promise<Reply> => api.request('POST', '/api/v1/auth/login/', { body: { username: 'alice', password: PASSWORD } });

/**
 * Whether a's count and b's are one: a hit through b sees the one just made through a. Asked as bob,
 * whom the load never sends as: under alice's load two counts kept apart could differ by exactly one
 * by chance, and a load request between the two hits would hide a shared count.
 */
async function countsShared(): Promise<boolean> {
  const first = await listUsers(a, bob);
  const second = await listUsers(b, bob);
  return remaining(second) === remaining(first) - 1;
}

const metric = async (name: string): Promise<number> => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec((await a.request('GET', '/metrics')).body)?.[1]);

it('keeps token and JWT requests answered through a Redis outage, refuses sessions alone, and shares counters again once Redis is back', async () => {
  expect(await countsShared()).toBe(true);
  expect((await sessionLogin(a)).status).toBe(200);
  const { cookie } = await (async () => {
    const reply = await sessionLogin(b);
    return { cookie: String(reply.headers['set-cookie']).split(';')[0]! };
  })();
  expect((await a.request('GET', '/readyz')).json).toEqual({ status: 'ok', redis: 'ok' });

  // Clients with tokens, on both instances, throughout.
  const statuses: number[] = [];
  let loading = true;
  const load = Promise.all(
    [a, b, a, b].map(async (api) => {
      while (loading) {
        statuses.push((await listUsers(api)).status);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }),
  );

  // Stopped whatever happens below, so a failed expectation is reported as itself, not as the load
  // meeting a closed server after the file's clean-up.
  try {
    await stopRedis(redis);
    await until(async () => (await a.request('GET', '/readyz')).json.redis === 'unreachable', '/readyz to say Redis is unreachable');
    const ready = await a.request('GET', '/readyz');
    expect(ready.status).toBe(200);

    const refused = await sessionLogin(a);
    expect(refused.status).toBe(503);
    expect(refused.json).toEqual({ error: expect.stringMatching(/session store is unreachable/), code: 'service_unavailable', request_id: refused.headers['x-request-id'] });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const withSession = await b.request('GET', '/api/v1/users/', { headers: { cookie } });
    expect(withSession.status).toBe(503);
    expect(withSession.json.code).toBe('service_unavailable');

    // Tokens and JWTs work, each process counting alone.
    const jwt = await a.request('POST', '/api/v1/auth/jwt/', { body: { username: 'alice', password: PASSWORD } });
    expect(jwt.status).toBe(200);
    expect((await b.request('GET', '/api/v1/users/', { token: jwt.json.access })).status).toBe(200);
    const throughA = await listUsers(a);
    expect(throughA.status).toBe(200);
    expect(throughA.headers['ratelimit-limit']).toBe('100000');
    expect(await countsShared()).toBe(false);
    expect(await metric('restfold_rate_limit_counters_shared')).toBe(0);

    redis = await startRedis(port);
    await until(async () => (await a.request('GET', '/readyz')).json.redis === 'ok', '/readyz to say Redis is back');
    await until(countsShared, 'the counters to be shared again');
    expect(await metric('restfold_rate_limit_counters_shared')).toBe(1);
    expect((await sessionLogin(a)).status).toBe(200);
  } finally {
    loading = false;
    await load;
  }
  expect(statuses.length).toBeGreaterThan(20);
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
  // Said once each way, however many requests met the outage.
  const messages = logged.map((line) => JSON.parse(line).msg as string);
  expect(messages.filter((msg) => msg.startsWith('rate-limit store unreachable'))).toHaveLength(1);
  expect(messages.filter((msg) => msg.startsWith('rate-limit store back'))).toHaveLength(1);
  expect(await metric('restfold_rate_limit_fallbacks')).toBe(1);
}, 60_000);

it('tells a live stream to refetch once Redis is back, a write on another process meanwhile unheard, then delivers again', async () => {
  const env = { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_KEY_PREFIX: `outage-live:${randomBytes(4).toString('hex')}:` };
  const databaseUrl = await sharedDatabase();
  const listening = await startApi(env, liveItemsApp, { databaseUrl });
  const writing = await startApi(env, liveItemsApp, { databaseUrl });
  try {
    const carol = await listening.user('carol');
    const stream = await openEvents(`http://127.0.0.1:${await listening.listen()}/api/v1/items/events/`, { authorization: `Bearer ${carol.token}` });
    const create = async (text: string): Promise<number> => {
      const reply = await writing.request('POST', '/api/v1/items/', { token: carol.token, body: { text } });
      expect(reply.status).toBe(201);
      return (reply.json as { id: number }).id;
    };
    const before = await create('before');
    expect(await stream.next()).toMatchObject({ event: 'created', data: { id: before } });

    await stopRedis(redis);
    await until(async () => (await listening.request('GET', '/readyz')).json.redis === 'unreachable', '/readyz to say Redis is unreachable');
    // Committed and answered, but no process can hear of it: the stream must not go on as if nothing happened.
    await create('during');
    redis = await startRedis(port);
    expect(await stream.next()).toMatchObject({ event: 'reset', data: {} });
    await until(async () => (await writing.request('GET', '/readyz')).json.redis === 'ok', 'the writing process to reach Redis again');
    const after = await create('after');
    expect(await stream.next()).toMatchObject({ event: 'created', data: { id: after } });
    stream.close();
  } finally {
    await writing.close();
    await listening.close();
  }
}, 60_000);
