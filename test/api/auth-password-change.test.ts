/**
 * Changing a user record: who may (a superuser's only by a superuser), what an own password change
 * must prove (current_password), and what a password change or deactivation ends (every earlier
 * token, JWT and session of the user, but the credential the change was made with).
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { releaseAccountMigrations as accountMigrations } from '../../src/store/accounts/release-migrations.js';
import { buildApp, loadConfig, migrateApp } from '../../src/framework/index.js';
import { openStoreDatabase } from '../../src/store/connection/database.js';
import { hashPassword } from '../../src/framework/base/passwords.js';
import { migrate } from '../../src/store/schema/migrations.js';
import service from '../../src/service/app.js';
import { PASSWORD, startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';
import { login } from '../support/auth-session-suite.js';
import { createTestDatabase } from '../support/database.js';

const NEW_PASSWORD = 'a-brand-new-password';

let api: TestApi;
let admin: TestUser;
let alice: TestUser;

beforeEach(async () => {
  api = await startApi({ SECRET_KEY: 'password-change-test-secret-key-0123456789' });
  admin = await api.user('admin', { superuser: true });
  alice = await api.user('alice');
});
afterEach(() => api.close());

const userUrl = (user: TestUser) => `/api/v1/users/${user.id}/`;
const canLogIn = async (username: string, password: string) =>
  (await api.request('POST', '/api/v1/auth/token/', { body: { username, password } })).status === 200;
/** The status a read with these request options gets. */
const readStatus = async (options: { token?: string; headers?: Record<string, string> }) =>
  (await api.request('GET', '/api/v1/users/', options)).status;
const obtainJwt = async (username = 'alice', password = PASSWORD): Promise<{ access: string; refresh: string }> =>
  (await api.request('POST', '/api/v1/auth/jwt/', { body: { username, password } })).json;
const refresh = (token: string) => api.request('POST', '/api/v1/auth/jwt/refresh/', { body: { refresh: token } });

function expectStatus(reply: Reply, status: number, code?: string): void {
  expect({ status: reply.status, code: reply.json?.code }).toEqual({ status, code: code ?? reply.json?.code });
}

describe("users: a superuser's record is changed by superusers only", () => {
  it('a users.change holder gets 403 on PATCH and PUT of a superuser, and the password stays', async () => {
    const changer = await api.user('changer', { permissions: ['users.change'] });
    const patch = await api.request('PATCH', userUrl(admin), { token: changer.token, body: { password: 'taken-over' } });
    expectStatus(patch, 403, 'permission_denied');
    const put = await api.request('PUT', userUrl(admin), {
      token: changer.token,
      body: { username: 'admin', email: 'x@example.com', is_active: true, password: 'taken-over' },
    });
    expectStatus(put, 403, 'permission_denied');
    expect(await canLogIn('admin', 'taken-over')).toBe(false);
    expect(await canLogIn('admin', PASSWORD)).toBe(true);
    expect((await api.request('GET', userUrl(admin), { token: admin.token })).json.email).toBe('admin@example.com');
  });

  it("a users.change holder may change a normal user's password, without that user's current password", async () => {
    const changer = await api.user('changer', { permissions: ['users.change'] });
    expectStatus(await api.request('PATCH', userUrl(alice), { token: changer.token, body: { password: NEW_PASSWORD } }), 200);
    const put = await api.request('PUT', userUrl(alice), {
      token: changer.token,
      body: { username: 'alice', email: 'alice@example.org', is_active: true },
    });
    expectStatus(put, 200);
    expect(await canLogIn('alice', NEW_PASSWORD)).toBe(true);
  });

  it('a users.delete holder cannot delete a superuser; a superuser may change another superuser', async () => {
    const deleter = await api.user('deleter', { permissions: ['users.delete'] });
    expectStatus(await api.request('DELETE', userUrl(admin), { token: deleter.token }), 403, 'permission_denied');
    const root = await api.user('root', { superuser: true });
    expectStatus(await api.request('PATCH', userUrl(admin), { token: root.token, body: { email: 'boss@example.com' } }), 200);
  });
});

describe('users: an own password change sends current_password', () => {
  it('is 400 validation_failed naming current_password when it is missing or wrong, and nothing changes', async () => {
    const missing = await api.request('PATCH', userUrl(alice), { token: alice.token, body: { password: NEW_PASSWORD } });
    expectStatus(missing, 400, 'validation_failed');
    expect(Object.keys(missing.json.details)).toEqual(['current_password']);
    for (const current of ['not-my-password', '', 42]) {
      const wrong = await api.request('PATCH', userUrl(alice), { token: alice.token, body: { password: NEW_PASSWORD, current_password: current } });
      expectStatus(wrong, 400, 'validation_failed');
      expect(Object.keys(wrong.json.details)).toEqual(['current_password']);
    }
    const put = await api.request('PUT', userUrl(alice), {
      token: alice.token,
      body: { username: 'alice', email: 'alice@example.com', is_active: true, password: NEW_PASSWORD },
    });
    expectStatus(put, 400, 'validation_failed');
    expect(put.json.details.current_password).toBeDefined();
    expect(await canLogIn('alice', NEW_PASSWORD)).toBe(false);
  });

  it('holds for a superuser changing their own password too', async () => {
    expectStatus(await api.request('PATCH', userUrl(admin), { token: admin.token, body: { password: NEW_PASSWORD } }), 400, 'validation_failed');
  });

  it('with the right current_password answers 200 (PATCH and PUT); current_password is never rendered or stored', async () => {
    const patch = await api.request('PATCH', userUrl(alice), { token: alice.token, body: { password: NEW_PASSWORD, current_password: PASSWORD } });
    expectStatus(patch, 200);
    expect(Object.keys(patch.json)).toEqual(['id', 'username', 'email', 'is_active', 'date_joined', 'password']);
    expect(patch.body).not.toContain(PASSWORD);
    expect(await canLogIn('alice', NEW_PASSWORD)).toBe(true);
    const put = await api.request('PUT', userUrl(alice), {
      token: alice.token,
      body: { username: 'alice', email: 'alice@example.com', is_active: true, password: 'third-password', current_password: NEW_PASSWORD },
    });
    expectStatus(put, 200);
    expect(await canLogIn('alice', 'third-password')).toBe(true);
    const row = await api.database.db.selectFrom('users').selectAll().where('id', '=', alice.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(NEW_PASSWORD);
  });

  it('is not needed for other changes, and is an unknown field on create', async () => {
    expectStatus(await api.request('PATCH', userUrl(alice), { token: alice.token, body: { email: 'new@example.com' } }), 200);
    const create = await api.request('POST', '/api/v1/users/', {
      token: admin.token,
      body: { username: 'bob', password: 'pw-bob-pw', current_password: 'x' },
    });
    expectStatus(create, 400, 'validation_failed');
    expect(create.json.details).toEqual({ current_password: ['Unknown field.'] });
  });
});

/** Every kind of credential alice can hold, each obtained with her password. */
async function credentialsOf(username: string) {
  const token = (await api.request('POST', '/api/v1/auth/token/', { body: { username, password: PASSWORD } })).json.token as string;
  const jwt = await obtainJwt(username);
  const session = await login(api, username);
  return { token, jwt, session };
}

/** Whether each credential still authenticates (JWT refresh included). */
async function stillWorking(credentials: Awaited<ReturnType<typeof credentialsOf>>) {
  return {
    token: await readStatus({ token: credentials.token }),
    access: await readStatus({ token: credentials.jwt.access }),
    refresh: (await refresh(credentials.jwt.refresh)).status,
    sessionBearer: await readStatus({ token: credentials.session.session }),
    sessionCookie: await readStatus({ headers: { cookie: credentials.session.cookie } }),
  };
}

const ALL_ENDED = { token: 401, access: 401, refresh: 401, sessionBearer: 401, sessionCookie: 401 };

describe('users: a password change ends the credentials issued before it', () => {
  it('made with a token: every other token, JWT and session is 401, the token that made it still works', async () => {
    const earlier = await credentialsOf('alice');
    const change = await api.request('PATCH', userUrl(alice), { token: alice.token, body: { password: NEW_PASSWORD, current_password: PASSWORD } });
    expectStatus(change, 200);
    expect(await stillWorking(earlier)).toEqual(ALL_ENDED);
    expect(await readStatus({ token: alice.token })).toBe(200);
    // Credentials obtained with the new password work.
    const fresh = await obtainJwt('alice', NEW_PASSWORD);
    expect(await readStatus({ token: fresh.access })).toBe(200);
  });

  it('made with a session cookie: that session keeps working, in its cookie and as Bearer; the rest end', async () => {
    const earlier = await credentialsOf('alice');
    const own = await login(api, 'alice');
    const change = await api.request('PATCH', userUrl(alice), {
      headers: { cookie: own.cookie, 'x-csrf-token': own.csrf },
      body: { password: NEW_PASSWORD, current_password: PASSWORD },
    });
    expectStatus(change, 200);
    expect(await readStatus({ headers: { cookie: own.cookie } })).toBe(200);
    expect(await readStatus({ token: own.session })).toBe(200);
    expect(await stillWorking(earlier)).toEqual(ALL_ENDED);
    expect(await readStatus({ token: alice.token })).toBe(401);
  });

  it('made with a JWT access token: that access token keeps working until it expires, its refresh token ends', async () => {
    const earlier = await credentialsOf('alice');
    const own = await obtainJwt();
    const change = await api.request('PATCH', userUrl(alice), { token: own.access, body: { password: NEW_PASSWORD, current_password: PASSWORD } });
    expectStatus(change, 200);
    expect(await readStatus({ token: own.access })).toBe(200);
    expect((await refresh(own.refresh)).status).toBe(401);
    expect(await stillWorking(earlier)).toEqual(ALL_ENDED);
  });

  it("made by another user (users.change): every credential of the changed user ends, none of the changer's", async () => {
    const earlier = await credentialsOf('alice');
    expectStatus(await api.request('PATCH', userUrl(alice), { token: admin.token, body: { password: NEW_PASSWORD } }), 200);
    expect(await stillWorking(earlier)).toEqual(ALL_ENDED);
    expect(await readStatus({ token: alice.token })).toBe(401);
    expect(await readStatus({ token: admin.token })).toBe(200);
  });

  it('a change without a new password (e-mail) ends nothing', async () => {
    const earlier = await credentialsOf('alice');
    expectStatus(await api.request('PATCH', userUrl(alice), { token: alice.token, body: { email: 'new@example.com' } }), 200);
    const working = await stillWorking(earlier);
    expect(working).toEqual({ token: 200, access: 200, refresh: 200, sessionBearer: 200, sessionCookie: 200 });
  });
});

describe('users: deactivation ends credentials for good', () => {
  it('deactivate then reactivate: no earlier token, JWT or session comes back, not even the one that did it', async () => {
    const earlier = await credentialsOf('alice');
    const own = await credentialsOf('admin');
    expectStatus(await api.request('PATCH', userUrl(alice), { token: admin.token, body: { is_active: false } }), 200);
    expectStatus(await api.request('PATCH', userUrl(alice), { token: admin.token, body: { is_active: true } }), 200);
    expect(await stillWorking(earlier)).toEqual(ALL_ENDED);
    expect(await readStatus({ token: alice.token })).toBe(401);
    expect(await canLogIn('alice', PASSWORD)).toBe(true);
    expect((await stillWorking(own)).token).toBe(200);

    // A superuser who deactivates themselves keeps nothing either.
    expectStatus(await api.request('PATCH', userUrl(admin), { token: admin.token, body: { is_active: false } }), 200);
    await api.database.db.updateTable('users').set({ is_active: 1 }).where('id', '=', admin.id).execute();
    expect(await readStatus({ token: admin.token })).toBe(401);
  });
});

describe('jwt: refresh rotation', () => {
  it('each refresh returns the next refresh token; a used one is 401 and ends its login, other logins go on', async () => {
    const first = await obtainJwt();
    const other = await obtainJwt();
    const second = await refresh(first.refresh);
    expectStatus(second, 200);
    expect(second.json.refresh).not.toBe(first.refresh);
    const third = await refresh(second.json.refresh);
    expectStatus(third, 200);

    expectStatus(await refresh(first.refresh), 401, 'authentication_failed');
    // Reuse means the token leaked: the whole login ends, the latest refresh token with it.
    expectStatus(await refresh(third.json.refresh), 401, 'authentication_failed');
    expectStatus(await refresh(other.refresh), 200);
  });

  it('of two refreshes racing with one token, one succeeds', async () => {
    const { refresh: token } = await obtainJwt();
    const replies = await Promise.all([refresh(token), refresh(token), refresh(token)]);
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1);
    expect(replies.every((reply) => reply.status === 200 || reply.status === 401)).toBe(true);
  });
});

describe('credential versions: an existing database upgrades', () => {
  it('keeps the tokens and sessions issued before the upgrade working, and a password change then ends them', async () => {
    const testDatabase = await createTestDatabase();
    const database = openStoreDatabase(testDatabase.url);
    try {
      const { '0001_users_permissions_tokens': users, '0002_sessions': sessions } = accountMigrations;
      await migrate(database, 'restfold', { '0001_users_permissions_tokens': users!, '0002_sessions': sessions! });
      const { id } = await database.db
        .insertInto('users')
        .values({ username: 'old', email: '', password: await hashPassword(PASSWORD), date_joined: new Date().toISOString() })
        .returning('id')
        .executeTakeFirstOrThrow();
      const token = `rf_${'T'.repeat(43)}`;
      const session = `rfs_${'S'.repeat(43)}`;
      const hash = (text: string) => createHash('sha256').update(text).digest('hex');
      await database.db.insertInto('auth_tokens').values({ user_id: id, key_hash: hash(token), created_at: new Date().toISOString() }).execute();
      await database.db
        .insertInto('auth_sessions')
        .values({ id_hash: hash(session), user_id: id, csrf_token: 'c', expires_at: new Date(Date.now() + 60_000).toISOString() })
        .execute();

      expect(await migrateApp(database, service)).toContain('0003_credential_versions');
      const app = await buildApp(service, { database, config: loadConfig({ DATABASE_URL: testDatabase.url, LOG_LEVEL: 'silent', THROTTLE_USER: 'off' }) });
      try {
        const read = async (credential: string) =>
          (await app.inject({ method: 'GET', url: '/api/v1/users/', headers: { authorization: `Bearer ${credential}` } })).statusCode;
        expect(await read(token)).toBe(200);
        expect(await read(session)).toBe(200);
        const change = await app.inject({
          method: 'PATCH',
          url: `/api/v1/users/${id}/`,
          headers: { authorization: `Bearer ${token}` },
          payload: { password: NEW_PASSWORD, current_password: PASSWORD },
        });
        expect(change.statusCode).toBe(200);
        expect(await read(token)).toBe(200);
        expect(await read(session)).toBe(401);
      } finally {
        await app.close();
      }
    } finally {
      await database.close();
      await testDatabase.drop();
    }
  });
});
