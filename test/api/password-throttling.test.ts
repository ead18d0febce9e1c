/**
 * What limits the requests that check or set a password. A credential check (a login, a token or JWT
 * obtain, a current password) counts against THROTTLE_LOGIN per client address and per account. A
 * password set by a user's write is that user's request (THROTTLE_USER), one set by an anonymous
 * write (a sign-up) counts against THROTTLE_SIGNUP per address; neither touches THROTTLE_LOGIN. And a
 * flood of password changes cannot keep a login from its share of the hashing.
 */
import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { allowAny, collection, defineApp, hasPermission, serializer, User } from '../../src/framework/index.js';
import service from '../../src/service/app.js';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** Every rate at its default, as with the variables unset (the test harness turns THROTTLE_ANON and THROTTLE_USER off). */
const DEFAULT_RATES = { THROTTLE_ANON: '', THROTTLE_USER: '' };

/**
 * For a test that hashes many passwords: writes hash on half the cores, one at a time on two, each
 * tens of milliseconds on an idle core and many times that on a busy machine. A time limit, not a
 * measurement: what must happen within a throttle window is asserted through the RateLimit headers.
 */
const HASHING_TIMEOUT_MS = 180_000;

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

const login = (address: string, username: string, password = PASSWORD): Promise<Sent> =>
  from(address, 'POST', '/api/v1/auth/token/', { username, password });

/** Staff who may add and change users. */
async function staffUsers(): Promise<TestUser[]> {
  const staff = [];
  for (const name of ['staff0', 'staff1', 'staff2']) staff.push(await api!.user(name, { permissions: ['users.add', 'users.change'] }));
  return staff;
}

/** Each user's password as their own changes left it, by token (a test's users are its own). */
const currentPasswords = new Map<string, string>();

/** `actor` changing their own password, sending the current one. */
async function changeOwn(address: string, actor: TestUser, method: 'PUT' | 'PATCH', n: number): Promise<Sent> {
  const password = `changed-${n}-${actor.username}`;
  const body = { password, current_password: currentPasswords.get(actor.token) ?? PASSWORD, ...(method === 'PUT' && { username: actor.username }) };
  const reply = await from(address, method, `/api/v1/users/${actor.id}/`, body, actor.token);
  if (reply.status === 200) currentPasswords.set(actor.token, password);
  return reply;
}

interface Endpoint {
  readonly name: string;
  readonly success: number;
  /** The check `actor` makes of their own password at this endpoint, the `n`th of the test. */
  send(address: string, actor: TestUser, n: number): Promise<Sent>;
}

const credentials = (path: string): Endpoint['send'] => (address, actor) =>
  from(address, 'POST', `/api/v1/auth/${path}/`, { username: actor.username, password: PASSWORD });

const checks: Endpoint[] = [
  { name: 'token obtain', success: 200, send: credentials('token') },
  { name: 'JWT obtain', success: 200, send: credentials('jwt') },
  { name: 'session login', success: 200, send: credentials('login') },
  { name: 'own password change by PUT (current_password)', success: 200, send: (address, actor, n) => changeOwn(address, actor, 'PUT', n) },
  { name: 'own password change by PATCH (current_password)', success: 200, send: (address, actor, n) => changeOwn(address, actor, 'PATCH', n) },
];

function expectThrottled(reply: Sent, limit: string): void {
  expect(reply.status).toBe(429);
  expect(reply.json).toEqual({ error: expect.stringMatching(/throttled/), code: 'throttled' });
  expect(Number(reply.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(reply.headers['retry-after'])).toBeLessThanOrEqual(60);
  expect(reply.headers['ratelimit-limit']).toBe(limit);
  expect(reply.headers['ratelimit-remaining']).toBe('0');
}

describe.each(checks)('THROTTLE_LOGIN on $name', (endpoint) => {
  it('limits each client address, whoever the user', async () => {
    api = await startApi({ THROTTLE_LOGIN: '2/min' });
    const staff = await staffUsers();
    const first = await endpoint.send('10.0.0.1', staff[0]!, 0);
    expect(first.status).toBe(endpoint.success);
    expect(first.headers['ratelimit-limit']).toBe('2');
    expect(first.headers['ratelimit-remaining']).toBe('1');
    expect((await endpoint.send('10.0.0.1', staff[1]!, 1)).status).toBe(endpoint.success);
    expectThrottled(await endpoint.send('10.0.0.1', staff[2]!, 2), '2');
    expect((await endpoint.send('10.0.0.2', staff[2]!, 3)).status).toBe(endpoint.success);
  });

  it('limits each user, from whichever address', async () => {
    api = await startApi({ THROTTLE_LOGIN: '2/min' });
    const staff = await staffUsers();
    expect((await endpoint.send('10.0.0.1', staff[0]!, 0)).status).toBe(endpoint.success);
    expect((await endpoint.send('10.0.0.2', staff[0]!, 1)).status).toBe(endpoint.success);
    expectThrottled(await endpoint.send('10.0.0.3', staff[0]!, 2), '2');
    expect((await endpoint.send('10.0.0.3', staff[1]!, 3)).status).toBe(endpoint.success);
  });
});

describe('THROTTLE_LOGIN: what counts', () => {
  it('counts attempts on one username together whatever their case', async () => {
    api = await startApi({ THROTTLE_LOGIN: '2/min' });
    await api.user('alice');
    for (const [address, username] of [['10.0.0.1', 'alice'], ['10.0.0.2', 'ALICE']] as const) {
      expect((await login(address, username, 'wrong')).status).toBe(400);
    }
    expectThrottled(await login('10.0.0.3', 'Alice'), '2');
  });

  it('counts a current password, right or wrong, in the bucket of the account\'s logins', async () => {
    api = await startApi({ THROTTLE_LOGIN: '2/min' });
    const bob = await api.user('bob');
    const guess = await from('10.0.0.1', 'PATCH', `/api/v1/users/${bob.id}/`, { password: 'taken-over', current_password: 'guess' }, bob.token);
    expect(guess.status).toBe(400);
    expect(guess.json.details).toEqual({ current_password: ['The current password is incorrect.'] });
    expect((await login('10.0.0.2', 'bob', 'guess')).status).toBe(400);
    expectThrottled(await changeOwn('10.0.0.3', bob, 'PATCH', 0), '2');
    expectThrottled(await login('10.0.0.4', 'BOB'), '2');
  });

  it('never counts a write that checks no password: staff setting passwords, a user changing their e-mail', async () => {
    api = await startApi({ THROTTLE_LOGIN: '2/min' });
    const [staff] = await staffUsers();
    const target = await api.user('target');
    for (let n = 0; n < 3; n += 1) {
      expect((await from('10.0.0.1', 'POST', '/api/v1/users/', { username: `new${n}`, password: 'a-new-password' }, staff!.token)).status).toBe(201);
      expect((await from('10.0.0.1', 'PATCH', `/api/v1/users/${target.id}/`, { password: `changed-${n}` }, staff!.token)).status).toBe(200);
      expect((await from('10.0.0.1', 'PUT', `/api/v1/users/${target.id}/`, { username: 'target', password: `put-${n}` }, staff!.token)).status).toBe(200);
      expect((await from('10.0.0.1', 'PATCH', `/api/v1/users/${staff!.id}/`, { email: `staff${n}@example.com` }, staff!.token)).status).toBe(200);
    }
    // Neither the address's allowance nor the staff account's was drawn on.
    const staffLogin = await login('10.0.0.1', 'staff0');
    expect(staffLogin.status).toBe(200);
    expect(staffLogin.headers['ratelimit-limit']).toBe('2');
    expect(staffLogin.headers['ratelimit-remaining']).toBe('1');
  });
});

const personSerializer = serializer(User, { name: 'Person', fields: ['id', 'username', 'password'], writeOnly: ['password'] });
/** `people`: users staff add, several at once; `signups`: a public registration. */
const withRegistration = defineApp({
  ...service,
  collections: [
    ...service.collections,
    collection('people', { serializer: personSerializer, permissions: [hasPermission('users.add')], bulkCreate: { max: 10 } }),
    collection('signups', { serializer: personSerializer, permissions: [allowAny] }),
  ],
});

const person = (username: string) => ({ username, password: `${username}-password` });

describe('passwords set by an authorized user count as that user\'s requests (THROTTLE_USER)', () => {
  it('lets an administrator create 100 users with passwords in one window at default settings, each one request', async () => {
    api = await startApi(DEFAULT_RATES);
    const admin = await api.user('admin', { superuser: true });
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, n) => from('10.0.0.1', 'POST', '/api/v1/users/', { username: `member${n}`, password: `password-${n}` }, admin.token)),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(100).fill(201));
    // THROTTLE_USER's window counted each create once, all in one window (1000 allowed, 900 left).
    expect(new Set(replies.map((reply) => reply.headers['ratelimit-limit']))).toEqual(new Set(['1000']));
    const remaining = replies.map((reply) => Number(reply.headers['ratelimit-remaining'])).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, n) => 900 + n));
    // The address's login allowance is untouched, and the passwords were set.
    const created = await login('10.0.0.1', 'member99', 'password-99');
    expect(created.status).toBe(200);
    expect(created.headers['ratelimit-remaining']).toBe('9');
  }, 2 * HASHING_TIMEOUT_MS);

  it('answers 20 concurrent creates of one username at default settings with one 201 and nineteen 400s', async () => {
    api = await startApi(DEFAULT_RATES);
    const admin = await api.user('admin', { superuser: true });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, n) => from('10.0.0.1', 'POST', '/api/v1/users/', { username: 'racer', password: `password-${n}` }, admin.token)),
    );
    expect(replies.map((reply) => reply.status).sort()).toEqual([201, ...Array(19).fill(400)]);
    for (const reply of replies.filter(({ status }) => status === 400)) {
      expect(reply.json).toEqual({ error: 'Invalid input.', code: 'validation_failed', details: { username: ['A record with this username already exists.'] } });
    }
  }, HASHING_TIMEOUT_MS);

  it('counts each password of a bulk create as one request, and refuses past the rate', async () => {
    api = await startApi({ THROTTLE_USER: '5/min', THROTTLE_LOGIN: '1/min' }, withRegistration);
    const admin = await api.user('admin', { superuser: true });
    const bulk = await from('10.0.0.1', 'POST', '/api/v1/people/bulk/', [person('ann'), person('ben'), person('cat')], admin.token);
    expect(bulk.status).toBe(201);
    expect(bulk.headers['ratelimit-limit']).toBe('5');
    expect(bulk.headers['ratelimit-remaining']).toBe('2');
    expect((await from('10.0.0.1', 'POST', '/api/v1/people/', person('dan'), admin.token)).headers['ratelimit-remaining']).toBe('1');
    expectThrottled(await from('10.0.0.1', 'POST', '/api/v1/people/bulk/', [person('eve'), person('fay')], admin.token), '5');
    // The refused bulk created nobody.
    expect((await login('10.0.0.2', 'eve', 'eve-password')).status).toBe(400);
  }, HASHING_TIMEOUT_MS);
});

describe('passwords set by anonymous writes count per address (THROTTLE_SIGNUP)', () => {
  it('limits sign-ups per client address, apart from the address\'s logins', async () => {
    api = await startApi({ THROTTLE_SIGNUP: '2/min', THROTTLE_LOGIN: '2/min' }, withRegistration);
    const first = await from('10.0.0.1', 'POST', '/api/v1/signups/', person('ann'), undefined);
    expect(first.status).toBe(201);
    expect(first.headers['ratelimit-limit']).toBe('2');
    expect(first.headers['ratelimit-remaining']).toBe('1');
    expect((await from('10.0.0.1', 'POST', '/api/v1/signups/', person('ben'), undefined)).status).toBe(201);
    expectThrottled(await from('10.0.0.1', 'POST', '/api/v1/signups/', person('cat'), undefined), '2');
    expect((await from('10.0.0.2', 'POST', '/api/v1/signups/', person('cat'), undefined)).status).toBe(201);
    const signedUp = await login('10.0.0.1', 'ann', 'ann-password');
    expect(signedUp.status).toBe(200);
    expect(signedUp.headers['ratelimit-remaining']).toBe('1');
  });

  it('allows 30 sign-ups a minute from one address at default settings', async () => {
    api = await startApi(DEFAULT_RATES, withRegistration);
    const replies = await Promise.all(Array.from({ length: 30 }, (_, n) => from('10.0.0.1', 'POST', '/api/v1/signups/', person(`member${n}`), undefined)));
    expect(replies.map((reply) => reply.status)).toEqual(Array(30).fill(201));
    expectThrottled(await from('10.0.0.1', 'POST', '/api/v1/signups/', person('one-more'), undefined), '30');
  }, HASHING_TIMEOUT_MS);

  it('counts a signed-in user\'s registration as that user\'s request, not as a sign-up', async () => {
    api = await startApi({ THROTTLE_SIGNUP: '1/min' }, withRegistration);
    const member = await api.user('member');
    for (const name of ['ann', 'ben', 'cat']) expect((await from('10.0.0.1', 'POST', '/api/v1/signups/', person(name), member.token)).status).toBe(201);
  }, HASHING_TIMEOUT_MS);
});

describe('hashing capacity under a flood of password changes', () => {
  it('answers a login at default settings while the flood is still being hashed, not after it drains', async () => {
    api = await startApi(DEFAULT_RATES);
    const admin = await api.user('admin', { superuser: true });
    const target = await api.user('target');
    await api.user('bob');
    // Writes hash on half the slots (one per CPU): sixteen changes queued behind each of theirs.
    const flood = 16 * Math.max(1, Math.floor(availableParallelism() / 2));
    let answered = 0;
    const changes = Array.from({ length: flood }, (_, n) =>
      from('10.0.0.66', 'PATCH', `/api/v1/users/${target.id}/`, { password: `flood-${n}` }, admin.token).then((reply) => {
        answered += 1;
        return reply;
      }),
    );
    // Once one change is answered, the rest are waiting for hashing slots.
    await Promise.race(changes);
    const bobLogin = await login('10.0.0.7', 'bob');
    const unansweredAtLogin = flood - answered;
    expect(bobLogin.status).toBe(200);
    expect(unansweredAtLogin).toBeGreaterThanOrEqual(flood / 2);
    // None of the flood is refused: an administrator's password changes are not logins.
    expect((await Promise.all(changes)).map((reply) => reply.status)).toEqual(Array(flood).fill(200));
  }, HASHING_TIMEOUT_MS);
});
