/**
 * An app's own user model and what Conduit-like apps build on it, over HTTP on SQLite and
 * PostgreSQL: `User.extend` adds fields to the framework's `users` table through the app's own
 * migration (refusing to redeclare what authentication reads); `credentials.check` and
 * `credentials.issue` let a custom action log in and a hook hand out a token; `computed.credential()`
 * shows only a credential the request issued or the caller presented, never in a list, never
 * another user's; a singleton collection serves the caller's own record without a record key segment;
 * a `writeOnly` field is written and never rendered.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allowAny,
  appBaseline,
  appState,
  collection,
  computed,
  declaredSchemaDifferences,
  defineApp,
  fields,
  isAuthenticated,
  planMigration,
  serializer,
  User,
  type Permission,
} from '../../src/framework/index.js';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';
import { loginAction } from '../support/login-action.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const nobody: Permission = { description: 'no one', hasPermission: () => false };

const Member = User.extend({ bio: fields.text({ nullable: true }), email: fields.email({ unique: true }) });

const memberSerializer = serializer(Member, {
  name: 'Member',
  fields: ['id', 'username', 'email', 'bio', 'token', 'password'],
  writeOnly: ['password'],
  computed: { token: computed.credential() },
});

const members = collection('members', {
  serializer: memberSerializer,
  permissions: { list: [isAuthenticated], retrieve: [isAuthenticated], create: [allowAny], update: [nobody], partial_update: [nobody], destroy: [nobody] },
  hooks: {
    afterCreate: async ({ record, credentials }) => {
      await credentials.issue(record);
    },
  },
  actions: {
    login: loginAction({ issue: true }),
  },
});

const me = collection('me', { serializer: memberSerializer, singleton: ({ user }) => user?.id, permissions: [isAuthenticated] });

const app = withGeneratedMigrations(defineApp({ collections: [members, me], userModel: Member }));

const registration = (username: string) => ({ username, email: `${username}@example.org`, password: 'a-long-password-1', bio: `I am ${username}` });

describe('an app user model (User.extend)', () => {
  it('refuses to redeclare the fields authentication reads', () => {
    for (const name of ['password', 'username', 'is_active', 'credentials_version']) {
      expect(() => User.extend({ [name]: fields.text() })).toThrow(new RegExp(`${name} cannot be redeclared`));
    }
    expect(() => User.extend({ password: undefined as never })).toThrow(/cannot be redeclared/);
  });

  it('refuses, at declaration, a singleton with what needs a record key segment or a list', () => {
    const declared = { serializer: memberSerializer, singleton: () => 1 };
    expect(() => collection('one', { ...declared, recordKey: 'username' })).toThrow(/singleton collection .*recordKey/);
    expect(() => collection('one', { ...declared, bulkCreate: { max: 2 } })).toThrow(/singleton collection .*bulkCreate/);
    expect(() => collection('one', { ...declared, actions: { touch: { detail: true, method: 'POST', handler: () => ({}) } } })).toThrow(/singleton collection .*detail actions/);
  });

  it("generates the app's migration as changes to the framework's users table, then no changes", () => {
    const state = appState(app);
    const plan = planMigration(state, app.migrations!, {}, appBaseline(app));
    expect(plan.changes).toStrictEqual([]);
    // From the framework's own table: no table made, only what the app's model changes.
    expect(planMigration(state, {}, {}, appBaseline(app)).changes).toStrictEqual(['alter column users.email', 'add column users.bio']);
  });
});

describe('a user model, credentials, a singleton (token auth)', () => {
  let api: TestApi;
  let alice: TestUser;
  beforeAll(async () => {
    api = await startApi({ THROTTLE_LOGIN: 'off' }, app);
    alice = await api.user('alice');
  });
  afterAll(() => api.close());

  it('migrates the added fields on top of the framework\'s table: the database matches the declarations', async () => {
    expect(await declaredSchemaDifferences(api.database, app)).toStrictEqual([]);
  });

  it('registers with the added field, answering a fresh token that authenticates, and never the password', async () => {
    const reply = await api.request('POST', '/api/v1/members/', { body: registration('bruno') });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.json).sort()).toStrictEqual(['bio', 'email', 'id', 'token', 'username']);
    expect(reply.json).toMatchObject({ username: 'bruno', email: 'bruno@example.org', bio: 'I am bruno', token: expect.stringMatching(/^rf_/) });
    const own = await api.request('GET', '/api/v1/me/', { token: reply.json.token });
    expect(own.status).toBe(200);
    expect(own.json).toStrictEqual({ id: reply.json.id, username: 'bruno', email: 'bruno@example.org', bio: 'I am bruno', token: reply.json.token });
  });

  it('keeps the redeclared e-mail required and unique: 400 naming it, nothing stored', async () => {
    const blank = await api.request('POST', '/api/v1/members/', { body: { ...registration('carla'), email: '' } });
    expect(blank.status).toBe(400);
    expect(Object.keys(blank.json.details)).toStrictEqual(['email']);
    const taken = await api.request('POST', '/api/v1/members/', { body: { ...registration('carla'), email: 'alice@example.com' } });
    expect(taken.status).toBe(400);
    expect(Object.keys(taken.json.details)).toStrictEqual(['email']);
    const names = (await api.request('GET', '/api/v1/members/', { token: alice.token })).json.results.map((member: { username: string }) => member.username);
    expect(names).not.toContain('carla');
  });

  it('checks a username or an e-mail with the password in a custom action, alike when wrong, and issues a working token', async () => {
    for (const sent of [{ username: 'alice', password: PASSWORD }, { email: 'alice@example.com', password: PASSWORD }]) {
      const reply = await api.request('POST', '/api/v1/members/login/', { body: sent });
      expect(reply.status).toBe(200);
      expect(reply.json.username).toBe('alice');
      expect((await api.request('GET', '/api/v1/me/', { token: reply.json.token })).json.username).toBe('alice');
    }
    const wrongPassword = await api.request('POST', '/api/v1/members/login/', { body: { email: 'alice@example.com', password: 'not-it' } });
    const unknownEmail = await api.request('POST', '/api/v1/members/login/', { body: { email: 'nobody@example.com', password: PASSWORD } });
    expect([wrongPassword.status, unknownEmail.status]).toStrictEqual([401, 401]);
    expect(wrongPassword.json).toStrictEqual(unknownEmail.json);
  });

  it("shows no credential in a list, not even the caller's own, nor on another user's record", async () => {
    const bruno = (await api.request('POST', '/api/v1/members/', { body: registration('dora') })).json;
    const list = await api.request('GET', '/api/v1/members/', { token: alice.token });
    expect(list.status).toBe(200);
    expect(list.json.results.length).toBeGreaterThanOrEqual(2);
    for (const member of list.json.results) expect(member.token).toBeNull();
    expect(list.body).not.toContain(alice.token);
    const other = await api.request('GET', `/api/v1/members/${bruno.id}/`, { token: alice.token });
    expect(other.status).toBe(200);
    expect(other.json.token).toBeNull();
    expect((await api.request('GET', `/api/v1/members/${alice.id}/`, { token: alice.token })).json.token).toBe(alice.token);
  });

  it('serves the singleton without a record key segment: GET, PUT, PATCH on the caller\'s own record; no list, create or delete', async () => {
    const patched = await api.request('PATCH', '/api/v1/me/', { token: alice.token, body: { bio: 'patched' } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ id: alice.id, username: 'alice', bio: 'patched', token: alice.token });
    const put = await api.request('PUT', '/api/v1/me/', { token: alice.token, body: { username: 'alice', email: 'alice@example.com', bio: 'put' } });
    expect(put.status).toBe(200);
    expect((await api.request('GET', '/api/v1/me/', { token: alice.token })).json.bio).toBe('put');
    for (const method of ['POST', 'DELETE']) {
      const refused = await api.request(method, '/api/v1/me/', { token: alice.token, body: method === 'POST' ? { bio: 'x' } : undefined });
      expect(refused.status).toBe(405);
      expect(refused.headers.allow).toBe('GET, PUT, PATCH, HEAD, OPTIONS');
    }
    expect((await api.request('GET', `/api/v1/me/${alice.id}/`, { token: alice.token })).status).toBe(404);
    expect((await api.request('GET', `/api/v1/members/${alice.id}/`, { token: alice.token })).json.bio).toBe('put');
  });

  it('answers an anonymous caller of the singleton 401 with the challenge', async () => {
    for (const method of ['GET', 'PATCH']) {
      const reply = await api.request(method, '/api/v1/me/', { body: method === 'PATCH' ? { bio: 'anonymous' } : undefined });
      expect(reply.status).toBe(401);
      expect(reply.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('documents the singleton\'s path without a parameter, and the writeOnly field in bodies only', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    const path = document.paths['/api/v1/me/'];
    expect(Object.keys(path).sort()).toStrictEqual(['get', 'patch', 'put']);
    for (const operation of Object.values(path) as { parameters?: { in: string }[] }[]) {
      expect((operation.parameters ?? []).filter((parameter) => parameter.in === 'path')).toStrictEqual([]);
    }
    expect(Object.keys(document.paths).some((name: string) => name.startsWith('/api/v1/me/{'))).toBe(false);
    const member = document.components.schemas.Member;
    expect(Object.keys(member.properties)).not.toContain('password');
    expect(member.required).not.toContain('password');
    expect(Object.keys(document.components.schemas.MemberCreate.properties)).toContain('password');
  });

  it('renders the singleton on the browsable page, without a delete button', async () => {
    const page = await api.request('GET', '/api/v1/me/', { token: alice.token, headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('alice@example.com');
    expect(page.body).not.toContain('id="delete"');
    // A record's own page has one, so its absence above is the singleton's.
    expect((await api.request('GET', `/api/v1/members/${alice.id}/`, { token: alice.token, headers: { accept: 'text/html' } })).body).toContain('id="delete"');
  });
});

describe("a user model's own indexes (User.extend's indexes)", () => {
  // Declared first, kept by the later extend: an e-mail unique ignoring case, as usernames are.
  const Subscriber = User.extend(
    { email: fields.email({ unique: true }) },
    { indexes: [{ name: 'users_email_ignoring_case_key', columns: ['email'], unique: true, ignoreCase: true }] },
  ).extend({ bio: fields.text({ nullable: true }) });
  const subscribers = collection('subscribers', {
    serializer: serializer(Subscriber, { fields: ['id', 'username', 'email', 'bio', 'password'], writeOnly: ['password'] }),
    permissions: { list: [isAuthenticated], create: [allowAny] },
  });
  const indexed = withGeneratedMigrations(defineApp({ collections: [subscribers], userModel: Subscriber }));
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({}, indexed);
  });
  afterAll(() => api.close());

  it('are made by the app\'s migration beside the framework\'s, and the database matches them', async () => {
    expect(planMigration(appState(indexed), {}, {}, appBaseline(indexed)).changes).toStrictEqual([
      'alter column users.email',
      'add column users.bio',
      'create index users_email_ignoring_case_key on users',
    ]);
    expect(await declaredSchemaDifferences(api.database, indexed)).toStrictEqual([]);
  });

  it('hold over HTTP: an e-mail taken in another case is refused, 400 naming it, nothing stored', async () => {
    const register = (username: string, email: string) =>
      api.request('POST', '/api/v1/subscribers/', { body: { username, email, password: 'a-long-password-1' } });
    expect((await register('first', 'Same.Box@example.org')).status).toBe(201);
    for (const email of ['same.box@example.org', 'SAME.BOX@EXAMPLE.ORG']) {
      const taken = await register('second', email);
      expect(taken.status, email).toBe(400);
      expect(Object.keys(taken.json.details)).toStrictEqual(['email']);
    }
    const reader = await api.user('reader');
    const listed = await api.request('GET', '/api/v1/subscribers/', { token: reader.token });
    expect(listed.json.results.map((record: { username: string }) => record.username).sort()).toStrictEqual(['first', 'reader']);
  });
});

describe('credentials.check under THROTTLE_LOGIN', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({ THROTTLE_LOGIN: '3/min' }, app);
    await api.user('guarded');
  });
  afterAll(() => api.close());

  it('counts each check as a login: 429 with Retry-After once over, the right password included', async () => {
    const attempts = ['guess-1', 'guess-2', 'guess-3'].map((password) => ({ email: 'guarded@example.com', password }));
    for (const sent of attempts) expect((await api.request('POST', '/api/v1/members/login/', { body: sent })).status).toBe(401);
    const over = await api.request('POST', '/api/v1/members/login/', { body: { email: 'guarded@example.com', password: PASSWORD } });
    expect(over.status).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('credentials.issue where only JWTs authenticate', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({ AUTH: 'jwt' }, app);
  });
  afterAll(() => api.close());

  it('issues a JWT access token that authenticates the singleton', async () => {
    const reply = await api.request('POST', '/api/v1/members/', { body: registration('erin') });
    expect(reply.status).toBe(201);
    expect(reply.json.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect((await api.request('GET', '/api/v1/me/', { token: reply.json.token })).json).toMatchObject({ username: 'erin', token: reply.json.token });
  });
});

describe('credentials.issue where neither tokens nor JWTs authenticate', () => {
  let api: TestApi;
  const lines: string[] = [];
  beforeAll(async () => {
    const logStream = new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) });
    api = await startApi({ AUTH: 'session', LOG_LEVEL: 'error' }, app, { logStream });
  });
  afterAll(() => api.close());

  it('fails the call with a 500 whose cause, in the log, names the fix; the registration is rolled back', async () => {
    const reply = await api.request('POST', '/api/v1/members/', { body: registration('frank') });
    expect(reply.status).toBe(500);
    expect(reply.json.code).toBe('server_error');
    expect(reply.body).not.toContain('AUTH');
    expect(lines.join('')).toContain('credentials.issue needs token or jwt authentication: AUTH is \\"session\\"');
    expect(await api.database.db.selectFrom('users').select('id').where('username', '=', 'frank').execute()).toStrictEqual([]);
  });
});
