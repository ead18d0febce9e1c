/**
 * Two instances of the service over one database and one Redis behave as one
 * service for throttle counts. Needs TEST_REDIS_URL (scripts/test.js runs
 * this folder only then); runs on SQLite (a shared file) or PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { allowAny, buildApp, collection, defineApp, hasPermission, loadConfig, migrateApp, openDatabase, serializer, User, type Database } from '../../src/framework/index.js';
import { createUser } from '../../src/framework/app/admin.js';
import { createToken } from '../../src/framework/stages/authentication/token.js';
import { withPublicNotes } from '../api/pipeline-support.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';

const redisUrl = process.env.TEST_REDIS_URL;
if (!redisUrl) throw new Error('test/redis needs TEST_REDIS_URL (e.g. redis://127.0.0.1:6379).');

/** The service with public notes, and users added by staff several at once (`people`) or by anyone signing up (`signups`). */
const definition = (() => {
  const base = withPublicNotes();
  const people = serializer(User, { name: 'Person', fields: ['id', 'username', 'password'], writeOnly: ['password'] });
  return defineApp({
    ...base,
    collections: [
      ...base.collections,
      collection('people', { serializer: people, permissions: [hasPermission('users.add')], bulkCreate: { max: 10 } }),
      collection('signups', { serializer: people, permissions: [allowAny] }),
    ],
  });
})();
let databaseUrl: string;
let dropDatabase: () => Promise<void>;
let redis: Redis;
const instances: { app: FastifyInstance; database: Database }[] = [];

beforeAll(async () => {
  redis = new Redis(redisUrl);
  if (testDialect === 'postgres') {
    const test: TestDatabase = await createTestDatabase();
    databaseUrl = test.url;
    dropDatabase = test.drop;
  } else {
    const folder = mkdtempSync(join(tmpdir(), 'restfold-redis-'));
    databaseUrl = `sqlite:${join(folder, 'db.sqlite3')}`;
    dropDatabase = async () => rmSync(folder, { recursive: true, force: true });
  }
  const database = openDatabase(databaseUrl);
  await migrateApp(database, definition);
  await database.close();
});
afterEach(async () => {
  for (const { app, database } of instances.splice(0)) {
    await app.close();
    await database.close();
  }
});
afterAll(async () => {
  await redis.quit();
  await dropDatabase();
});

/** A key prefix of our own, so parallel runs (and other tests) never share counters. */
const freshPrefix = (): string => `restfold-test:${randomBytes(6).toString('hex')}:`;

/** An instance of the service, as a separate process would build it: its own pool, its own Redis client. */
async function instance(env: Record<string, string>, url = redisUrl!): Promise<FastifyInstance> {
  const config = loadConfig({ THROTTLE_ANON: 'off', THROTTLE_USER: 'off', LOG_LEVEL: 'silent', ...env, DATABASE_URL: databaseUrl, REDIS_URL: url });
  const database = openDatabase(config.databaseUrl);
  const app = await buildApp(definition, { database, config });
  instances.push({ app, database });
  return app;
}

async function twoInstances(env: Record<string, string>): Promise<[FastifyInstance, FastifyInstance]> {
  const prefix = freshPrefix();
  return [await instance({ ...env, REDIS_KEY_PREFIX: prefix }), await instance({ ...env, REDIS_KEY_PREFIX: prefix })];
}

let users = 0;
async function userToken(permissions: string[] = []): Promise<string> {
  const database = openDatabase(databaseUrl);
  try {
    users += 1;
    const id = await createUser(database, { username: `user${users}_${randomBytes(3).toString('hex')}`, password: 'pw', email: '', superuser: false, permissions });
    return await createToken(database, id);
  } finally {
    await database.close();
  }
}

const get = (app: FastifyInstance, url: string, headers: Record<string, string> = {}, remoteAddress = '10.1.1.1') =>
  app.inject({ method: 'GET', url, headers, remoteAddress });

describe('throttling with REDIS_URL', () => {
  it('holds a user limit across two instances together', async () => {
    const [a, b] = await twoInstances({ THROTTLE_USER: '3/min' });
    const authorization = `Bearer ${await userToken()}`;
    const remaining: string[] = [];
    for (const app of [a, b, a]) {
      const reply = await get(app, '/api/v1/notes/', { authorization });
      expect(reply.statusCode).toBe(200);
      remaining.push(reply.headers['ratelimit-remaining'] as string);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const over = await get(b, '/api/v1/notes/', { authorization });
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ code: 'throttled' });
    expect(over.headers['retry-after']).toMatch(/^\d+$/);
    expect((await get(a, '/api/v1/notes/', { authorization })).statusCode).toBe(429);
  });

  it('lets exactly the limit through when two instances take concurrent requests', async () => {
    const [a, b] = await twoInstances({ THROTTLE_ANON: '50/min' });
    const replies = await Promise.all(Array.from({ length: 120 }, (_, i) => get(i % 2 ? a : b, '/api/v1/notes/', {}, '10.1.1.9')));
    const statuses = replies.map((reply) => reply.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(50);
    expect(statuses.filter((status) => status === 429)).toHaveLength(70);
  });

  it('holds an anonymous limit per address across two instances', async () => {
    const [a, b] = await twoInstances({ THROTTLE_ANON: '2/min' });
    expect((await get(a, '/api/v1/notes/')).statusCode).toBe(200);
    expect((await get(b, '/api/v1/notes/')).statusCode).toBe(200);
    expect((await get(a, '/api/v1/notes/')).statusCode).toBe(429);
    expect((await get(b, '/api/v1/notes/', {}, '10.1.1.2')).statusCode).toBe(200);
  });

  it('holds the login limit across two instances', async () => {
    const [a, b] = await twoInstances({ THROTTLE_LOGIN: '2/min' });
    const attempt = (app: FastifyInstance) =>
      app.inject({
        method: 'POST',
        url: '/api/v1/auth/token/',
        remoteAddress: '10.1.1.3',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ username: 'nobody', password: 'guess' }),
      });
    expect((await attempt(a)).statusCode).toBe(400);
    expect((await attempt(b)).statusCode).toBe(400);
    expect((await attempt(a)).statusCode).toBe(429);
  });

  it('holds the sign-up rate per address, and counts each password of a bulk create, across two instances', async () => {
    const [a, b] = await twoInstances({ THROTTLE_SIGNUP: '2/min', THROTTLE_USER: '4/min' });
    const post = (app: FastifyInstance, url: string, body: unknown, authorization?: string) =>
      app.inject({
        method: 'POST',
        url,
        remoteAddress: '10.1.1.4',
        headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
        payload: JSON.stringify(body),
      });
    // Names of this run's own: the database is shared by the file's tests.
    const person = (name: string) => ({ username: `${name}_${randomBytes(3).toString('hex')}`, password: 'a-long-password' });
    expect((await post(a, '/api/v1/signups/', person('first'))).statusCode).toBe(201);
    expect((await post(b, '/api/v1/signups/', person('second'))).statusCode).toBe(201);
    expect((await post(a, '/api/v1/signups/', person('third'))).statusCode).toBe(429);

    const authorization = `Bearer ${await userToken(['users.add'])}`;
    const bulk = await post(a, '/api/v1/people/bulk/', [person('p1'), person('p2'), person('p3')], authorization);
    expect(bulk.statusCode).toBe(201);
    expect(bulk.headers['ratelimit-remaining']).toBe('1');
    expect((await post(b, '/api/v1/people/', person('p4'), authorization)).headers['ratelimit-remaining']).toBe('0');
    expect((await post(a, '/api/v1/people/', person('p5'), authorization)).statusCode).toBe(429);
  });

  it('keeps counters under REDIS_KEY_PREFIX, each expiring with its window', async () => {
    const prefix = freshPrefix();
    const app = await instance({ THROTTLE_ANON: '5/hour', REDIS_KEY_PREFIX: prefix });
    expect((await get(app, '/api/v1/notes/')).statusCode).toBe(200);
    const keys = await redis.keys(`${prefix}*`);
    expect(keys).toHaveLength(1);
    const ttl = await redis.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    expect(await redis.get(keys[0]!)).toBe('1');
    // A second instance with another prefix counts on its own.
    const other = await instance({ THROTTLE_ANON: '5/hour', REDIS_KEY_PREFIX: freshPrefix() });
    expect((await get(other, '/api/v1/notes/')).headers['ratelimit-remaining']).toBe('4');
  });

  it('counts in the process while Redis is unreachable: still throttled, never a 503 or a 500 (test/redis/outage.test.ts: and back)', async () => {
    // A TCP relay to Redis that the test can cut.
    const sockets = new Set<Socket>();
    const target = new URL(redisUrl!);
    const relay: Server = createServer((client) => {
      const upstream = connect(Number(target.port || 6379), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => socket.destroy());
        socket.on('close', () => sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayUrl = `redis://127.0.0.1:${(relay.address() as { port: number }).port}`;
    try {
      const app = await instance({ THROTTLE_ANON: '2/min', REDIS_KEY_PREFIX: freshPrefix() }, relayUrl);
      expect((await get(app, '/api/v1/notes/')).statusCode).toBe(200);
      relay.close();
      for (const socket of sockets) socket.destroy();
      // This process's own window, from its first hit.
      const counted = [await get(app, '/api/v1/notes/'), await get(app, '/api/v1/notes/')];
      expect(counted.map((reply) => [reply.statusCode, reply.headers['ratelimit-remaining']])).toEqual([[200, '1'], [200, '0']]);
      const over = await get(app, '/api/v1/notes/');
      expect(over.statusCode).toBe(429);
      expect(over.json()).toMatchObject({ code: 'throttled' });
    } finally {
      relay.close();
      for (const socket of sockets) socket.destroy();
    }
  });
});
