/**
 * Every request that hashes or checks a password counts against THROTTLE_LOGIN, per client address
 * and per user; and a flood of password changes cannot keep a login from its share of the hashing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

interface Sent {
  status: number;
  headers: Record<string, unknown>;
  json: Record<string, unknown>;
}

/** A request from a given client address (inject's default is 127.0.0.1). */
async function from(address: string, method: string, url: string, body: unknown, token?: string): Promise<Sent> {
  const response = await api!.app.inject({
    method: method as 'POST',
    url,
    remoteAddress: address,
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    payload: JSON.stringify(body),
  });
  return { status: response.statusCode, headers: response.headers, json: response.json() as Record<string, unknown> };
}

/** Staff who may add and change users (never their own password, which needs more), and a user they change. */
async function staffAndTarget(): Promise<{ staff: TestUser[]; target: TestUser }> {
  const staff = [];
  for (const name of ['staff0', 'staff1', 'staff2']) staff.push(await api!.user(name, { permissions: ['users.add', 'users.change'] }));
  return { staff, target: await api!.user('target') };
}

interface Endpoint {
  readonly name: string;
  readonly success: number;
  /** The request `actor` makes to this endpoint, the `n`th of the test. */
  send(address: string, actor: TestUser, target: TestUser, n: number): Promise<Sent>;
}

const credentials = (path: string): Endpoint['send'] => (address, actor) =>
  from(address, 'POST', `/api/v1/auth/${path}/`, { username: actor.username, password: PASSWORD });

const endpoints: Endpoint[] = [
  { name: 'token obtain', success: 200, send: credentials('token') },
  { name: 'JWT obtain', success: 200, send: credentials('jwt') },
  { name: 'session login', success: 200, send: credentials('login') },
  {
    name: 'user create',
    success: 201,
    send: (address, actor, _target, n) => from(address, 'POST', '/api/v1/users/', { username: `new${n}`, password: 'a-new-password' }, actor.token),
  },
  {
    name: 'password change by PUT',
    success: 200,
    send: (address, actor, target, n) =>
      from(address, 'PUT', `/api/v1/users/${target.id}/`, { username: target.username, password: `changed-${n}` }, actor.token),
  },
  {
    name: 'password change by PATCH',
    success: 200,
    send: (address, actor, target, n) => from(address, 'PATCH', `/api/v1/users/${target.id}/`, { password: `changed-${n}` }, actor.token),
  },
];

function expectThrottled(reply: Sent): void {
  expect(reply.status).toBe(429);
  expect(reply.json).toEqual({ error: expect.stringMatching(/throttled/), code: 'throttled' });
  expect(Number(reply.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(reply.headers['retry-after'])).toBeLessThanOrEqual(60);
  expect(reply.headers['ratelimit-remaining']).toBe('0');
}

describe.each(endpoints)('THROTTLE_LOGIN on $name', (endpoint) => {
  it('limits each client address, whoever the user', async () => {
    api = await startApi({ THROTTLE_LOGIN: '2/min' });
    const { staff, target } = await staffAndTarget();
    const first = await endpoint.send('10.0.0.1', staff[0]!, target, 0);
    expect(first.status).toBe(endpoint.success);
    expect(first.headers['ratelimit-limit']).toBe('2');
    expect(first.headers['ratelimit-remaining']).toBe('1');
    expect((await endpoint.send('10.0.0.1', staff[1]!, target, 1)).status).toBe(endpoint.success);
    expectThrottled(await endpoint.send('10.0.0.1', staff[2]!, target, 2));
    expect((await endpoint.send('10.0.0.2', staff[2]!, target, 3)).status).toBe(endpoint.success);
  });

  it('limits each user, from whichever address', async () => {
    api = await startApi({ THROTTLE_LOGIN: '2/min' });
    const { staff, target } = await staffAndTarget();
    expect((await endpoint.send('10.0.0.1', staff[0]!, target, 0)).status).toBe(endpoint.success);
    expect((await endpoint.send('10.0.0.2', staff[0]!, target, 1)).status).toBe(endpoint.success);
    expectThrottled(await endpoint.send('10.0.0.3', staff[0]!, target, 2));
    expect((await endpoint.send('10.0.0.3', staff[1]!, target, 3)).status).toBe(endpoint.success);
  });
});

describe('THROTTLE_LOGIN: what counts', () => {
  it('counts attempts on one username together whatever their case', async () => {
    api = await startApi({ THROTTLE_LOGIN: '2/min' });
    await api.user('alice');
    for (const [address, username] of [['10.0.0.1', 'alice'], ['10.0.0.2', 'ALICE']] as const) {
      expect((await from(address, 'POST', '/api/v1/auth/token/', { username, password: 'wrong' })).status).toBe(400);
    }
    expectThrottled(await from('10.0.0.3', 'POST', '/api/v1/auth/token/', { username: 'Alice', password: PASSWORD }));
  });

  it('does not count writes that set no password', async () => {
    api = await startApi({ THROTTLE_LOGIN: '2/min' });
    const { staff, target } = await staffAndTarget();
    for (let n = 0; n < 4; n += 1) {
      const reply = await from('10.0.0.1', 'PATCH', `/api/v1/users/${target.id}/`, { email: `target${n}@example.com` }, staff[0]!.token);
      expect(reply.status).toBe(200);
    }
    expect((await endpoints[5]!.send('10.0.0.1', staff[0]!, target, 0)).status).toBe(200);
  });
});

describe('hashing capacity under a flood of password changes', () => {
  it('answers a login while the flood is still being hashed, not after it drains', async () => {
    api = await startApi({ THROTTLE_LOGIN: 'off' });
    const admin = await api.user('admin', { superuser: true });
    const target = await api.user('target');
    await api.user('bob');
    const flood = 16;
    let answered = 0;
    const changes = Array.from({ length: flood }, (_, n) =>
      from('10.0.0.66', 'PATCH', `/api/v1/users/${target.id}/`, { password: `flood-${n}` }, admin.token).then((reply) => {
        answered += 1;
        return reply;
      }),
    );
    // Once one change is answered, the rest are waiting for hashing slots.
    await Promise.race(changes);
    const login = await from('10.0.0.7', 'POST', '/api/v1/auth/token/', { username: 'bob', password: PASSWORD });
    const unansweredAtLogin = flood - answered;
    expect(login.status).toBe(200);
    expect(unansweredAtLogin).toBeGreaterThanOrEqual(flood / 2);
    expect((await Promise.all(changes)).map((reply) => reply.status)).toEqual(Array(flood).fill(200));
  });
});
