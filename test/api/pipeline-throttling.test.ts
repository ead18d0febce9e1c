import { afterEach, describe, expect, it } from 'vitest';
import { defineApp, loadConfig } from '../../src/framework/index.js';
import service from '../../src/service/app.js';
import { PASSWORD, startApi, type Reply, type TestApi } from '../support/api.js';
import { withPublicNotes } from './pipeline-support.js';

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(env: Record<string, string>, definition = service): Promise<TestApi> {
  api = await startApi(env, definition);
  return api;
}

/** A request from a given client address (inject's default is 127.0.0.1). */
async function from(address: string, method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}, body?: unknown) {
  const response = await api!.app.inject({
    method,
    url,
    remoteAddress: address,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.statusCode, headers: response.headers, json: response.json() as Record<string, unknown> };
}

function expectRateHeaders(reply: Pick<Reply, 'headers'>, limit: number, remaining: number): void {
  expect(reply.headers['ratelimit-limit']).toBe(String(limit));
  expect(reply.headers['ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(reply.headers['ratelimit-reset']);
  expect(Number.isInteger(reset) && reset >= 1 && reset <= 60).toBe(true);
}

describe('throttling: users by id', () => {
  it('counts down RateLimit-Remaining, then answers 429 throttled with Retry-After and the headers', async () => {
    const { request, user } = await start({ THROTTLE_USER: '3/min' });
    const alice = await user('alice');
    for (const remaining of [2, 1, 0]) {
      const reply = await request('GET', '/api/v1/users/', { token: alice.token });
      expect(reply.status).toBe(200);
      expectRateHeaders(reply, 3, remaining);
    }
    const over = await request('GET', '/api/v1/users/', { token: alice.token });
    expect(over.status).toBe(429);
    expect(over.json).toEqual({ error: expect.stringMatching(/throttled/), code: 'throttled' });
    expect(over.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expectRateHeaders(over, 3, 0);
  });

  it('keeps one window per user, whatever their address', async () => {
    const { request, user } = await start({ THROTTLE_USER: '1/min' });
    const alice = await user('alice');
    const bob = await user('bob');
    expect((await request('GET', '/api/v1/users/', { token: alice.token })).status).toBe(200);
    expect((await request('GET', '/api/v1/users/', { token: alice.token })).status).toBe(429);
    expect((await from('10.0.0.9', 'GET', '/api/v1/users/', { authorization: `Bearer ${alice.token}` })).status).toBe(429);
    expect((await request('GET', '/api/v1/users/', { token: bob.token })).status).toBe(200);
  });

  it('sends no RateLimit headers when the rate is off', async () => {
    const { request, user } = await start({ THROTTLE_USER: 'off' });
    const alice = await user('alice');
    const reply = await request('GET', '/api/v1/users/', { token: alice.token });
    expect(reply.status).toBe(200);
    expect(reply.headers['ratelimit-limit']).toBeUndefined();
  });
});

describe('throttling: anonymous clients by IP, after authentication and permissions', () => {
  const env = { THROTTLE_ANON: '2/min', THROTTLE_USER: '100/min' };
  const notes = '/api/v1/notes/';

  it('throttles an anonymous address without touching another address or a signed-in user', async () => {
    const { user } = await start(env, withPublicNotes());
    const alice = await user('alice');
    expect((await from('10.0.0.1', 'GET', notes)).status).toBe(200);
    const last = await from('10.0.0.1', 'GET', notes);
    expectRateHeaders(last, 2, 0);
    expect((await from('10.0.0.1', 'GET', notes)).status).toBe(429);
    expect((await from('10.0.0.2', 'GET', notes)).status).toBe(200);
    const signedIn = await from('10.0.0.1', 'GET', notes, { authorization: `Bearer ${alice.token}` });
    expect(signedIn.status).toBe(200);
    expectRateHeaders(signedIn, 100, 99);
  });

  it('answers 401 to a request failing authentication even when its address is over the rate', async () => {
    await start(env, withPublicNotes());
    for (let i = 0; i < 3; i += 1) await from('10.0.0.1', 'GET', notes);
    expect((await from('10.0.0.1', 'GET', notes)).status).toBe(429);

    const badToken = await from('10.0.0.1', 'GET', notes, { authorization: 'Bearer rf_not-a-real-token' });
    expect(badToken.status).toBe(401);
    expect(badToken.json.code).toBe('authentication_failed');
    expect(badToken.headers['ratelimit-limit']).toBeUndefined();
    // Writing needs a user: the permission stage answers before the throttle.
    const anonymousWrite = await from('10.0.0.1', 'POST', notes, {}, { title: 'x' });
    expect(anonymousWrite.status).toBe(401);
    expect(anonymousWrite.json.code).toBe('not_authenticated');
  });

  it('answers 403 to a user lacking a permission even when over the rate, and 429 to an allowed request', async () => {
    const { request, user } = await start({ THROTTLE_USER: '1/min' });
    const alice = await user('alice');
    expect((await request('GET', '/api/v1/users/', { token: alice.token })).status).toBe(200);
    const forbidden = await request('POST', '/api/v1/users/', { token: alice.token, body: { username: 'x', password: 'y' } });
    expect(forbidden.status).toBe(403);
    expect((await request('GET', '/api/v1/users/', { token: alice.token })).status).toBe(429);
  });
});

describe('throttling: client addresses behind a proxy', () => {
  const env = { THROTTLE_ANON: '1/min' };
  const viaProxy = (client: string) => from('10.9.9.9', 'GET', '/api/v1/notes/', { 'x-forwarded-for': client });

  it('ignores X-Forwarded-For without TRUST_PROXY, so a client cannot dodge its limit by forging it', async () => {
    await start(env, withPublicNotes());
    expect((await viaProxy('203.0.113.1')).status).toBe(200);
    expect((await viaProxy('203.0.113.2')).status).toBe(429);
  });

  it('keys anonymous clients by their X-Forwarded-For address with TRUST_PROXY', async () => {
    await start({ ...env, TRUST_PROXY: '1' }, withPublicNotes());
    expect((await viaProxy('203.0.113.1')).status).toBe(200);
    expect((await viaProxy('203.0.113.1')).status).toBe(429);
    expect((await viaProxy('203.0.113.2')).status).toBe(200);
  });
});

describe('throttling: a bucket of its own per collection', () => {
  const buckets = withPublicNotes({ throttles: { articles: { user: '1/min' }, notes: { user: '1/min' } } });

  it('applies a collection its own rate, counted apart from the default window', async () => {
    const { request, user } = await start({ THROTTLE_USER: '5/min' }, buckets);
    const alice = await user('alice');
    const first = await request('GET', '/api/v1/articles/', { token: alice.token });
    expect(first.status).toBe(200);
    expectRateHeaders(first, 1, 0);
    expect((await request('GET', '/api/v1/articles/', { token: alice.token })).status).toBe(429);
    const users = await request('GET', '/api/v1/users/', { token: alice.token });
    expect(users.status).toBe(200);
    expectRateHeaders(users, 5, 4);
  });

  it('keeps the default rate for the kind a bucket leaves out', async () => {
    const { request } = await start({ THROTTLE_ANON: '2/min' }, buckets);
    const reply = await request('GET', '/api/v1/notes/');
    expect(reply.status).toBe(200);
    expectRateHeaders(reply, 2, 1);
  });

  it("keeps the framework's /auth/users/ out of the app's users bucket: its rate and its counts", async () => {
    const { request, user } = await start({ THROTTLE_USER: '5/min' }, defineApp({ ...service, throttles: { users: { user: '1/min' } } }));
    const root = await user('root', { superuser: true });
    const own = await request('GET', '/api/v1/users/', { token: root.token });
    expect(own.status).toBe(200);
    expectRateHeaders(own, 1, 0);
    // Same collection name, another route: the default window at the default rate, not the app's spent bucket.
    const framework = await request('GET', '/api/v1/auth/users/', { token: root.token });
    expect(framework.status).toBe(200);
    expectRateHeaders(framework, 5, 4);
    expect((await request('GET', '/api/v1/users/', { token: root.token })).status).toBe(429);
  });

  it('refuses to start with a bucket naming no collection or a malformed rate', async () => {
    await expect(startApi({}, defineApp({ ...service, throttles: { posts: { user: '1/min' } } }))).rejects.toThrow(
      'throttles: no collection named "posts".',
    );
    await expect(startApi({}, defineApp({ ...service, throttles: { users: { user: 'lots' } } }))).rejects.toThrow(
      'throttles.users.user: Invalid rate "lots"',
    );
  });
});

describe('throttling: the login endpoints', () => {
  it('limits password attempts per address to THROTTLE_LOGIN, right or wrong', async () => {
    const { user } = await start({ THROTTLE_LOGIN: '2/min' });
    await user('alice');
    const wrong = await from('10.0.0.1', 'POST', '/api/v1/auth/token/', {}, { username: 'alice', password: 'nope' });
    expect(wrong.status).toBe(400);
    expectRateHeaders(wrong, 2, 1);
    // Another username from the same address draws on the same allowance.
    expect((await from('10.0.0.1', 'POST', '/api/v1/auth/token/', {}, { username: 'bob', password: 'nope' })).status).toBe(400);
    const right = await from('10.0.0.1', 'POST', '/api/v1/auth/token/', {}, { username: 'alice', password: PASSWORD });
    expect(right.status).toBe(429);
    expect(right.json.code).toBe('throttled');
    expect(right.headers['retry-after']).toMatch(/^\d+$/);
    expect((await from('10.0.0.2', 'POST', '/api/v1/auth/token/', {}, { username: 'alice', password: PASSWORD })).status).toBe(200);
  });

  it('defaults to 10 attempts a minute', async () => {
    await start({});
    for (let i = 0; i < 10; i += 1) {
      expect((await from('10.0.0.1', 'POST', '/api/v1/auth/token/', {}, { username: 'a', password: 'b' })).status).toBe(400);
    }
    const over = await from('10.0.0.1', 'POST', '/api/v1/auth/token/', {}, { username: 'a', password: 'b' });
    expect(over.status).toBe(429);
    expectRateHeaders(over, 10, 0);
  });
});

describe('throttling: settings', () => {
  it('refuses to start when REDIS_URL names a Redis it cannot reach', async () => {
    const closed = 'redis://127.0.0.1:1';
    await expect(startApi({ REDIS_URL: closed })).rejects.toThrow(/^REDIS_URL: cannot connect to Redis/);
  });

  it('accepts N/sec, N/min, N/hour, N/day and off, and names a bad setting', () => {
    const config = loadConfig({ THROTTLE_ANON: '5/sec', THROTTLE_USER: '7/day', THROTTLE_LOGIN: 'off' });
    expect(config.throttleAnonymous).toEqual({ limit: 5, windowSeconds: 1 });
    expect(config.throttleUser).toEqual({ limit: 7, windowSeconds: 86_400 });
    expect(config.throttleLogin).toBeNull();
    expect(loadConfig({ THROTTLE_USER: '3/hour' }).throttleUser).toEqual({ limit: 3, windowSeconds: 3600 });
    expect(() => loadConfig({ THROTTLE_ANON: '10/fortnight' })).toThrow(/^THROTTLE_ANON: Invalid rate/);
    expect(() => loadConfig({ THROTTLE_LOGIN: '0/min' })).toThrow(/^THROTTLE_LOGIN: Invalid rate/);
  });
});
