/**
 * The session kind's behaviour, run against each session store: the database
 * (test/api/auth-session.test.ts) and Redis (test/redis/auth-sessions.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type Reply, type TestApi, type TestUser } from './api.js';

export interface SessionLogin {
  session: string;
  csrf: string;
  /** `restfold_session=<signed value>`, as a browser would send it back. */
  cookie: string;
  /** The Set-Cookie line. */
  setCookie: string;
}

export const setCookieLine = (reply: Reply, name = 'restfold_session'): string | undefined =>
  ([reply.headers['set-cookie'] ?? []].flat() as string[]).find((line) => line.startsWith(`${name}=`));

export async function login(api: TestApi, username: string, headers: Record<string, string> = {}): Promise<SessionLogin> {
  const reply = await api.request('POST', '/api/v1/auth/login/', { body: { username, password: PASSWORD }, headers });
  expect(reply.status).toBe(200);
  const setCookie = setCookieLine(reply)!;
  return { session: reply.json.session, csrf: reply.json.csrf_token, cookie: setCookie.split(';')[0]!, setCookie };
}

export function expectRefused(reply: Reply): void {
  expect(reply.status).toBe(401);
  expect(reply.json.code).toBe('authentication_failed');
  expect(reply.headers['www-authenticate']).toBe('Bearer');
}

export function describeSessions(title: string, env: Record<string, string>): void {
  describe(title, () => {
    let api: TestApi;
    let alice: TestUser;

    beforeEach(async () => {
      api = await startApi({ SECRET_KEY: 'session-test-secret-key-0123456789abcdef', ...env });
      alice = await api.user('alice');
    });
    afterEach(() => api.close());

    const createArticle = (headers: Record<string, string>) =>
      api.request('POST', '/api/v1/articles/', { body: { title: 'Hello' }, headers });

    it('login answers 200 {session, csrf_token} and sets a signed, HttpOnly, SameSite=Lax cookie', async () => {
      const reply = await api.request('POST', '/api/v1/auth/login/', { body: { username: 'alice', password: PASSWORD } });
      expect(reply.status).toBe(200);
      expect(Object.keys(reply.json).sort()).toEqual(['csrf_token', 'session']);
      expect(reply.json.session).toMatch(/^rfs_[A-Za-z0-9_-]{43}$/);
      const line = setCookieLine(reply)!;
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Lax', 'Path=/']));
      expect(attributes).not.toContain('Secure');
      // Signed: the session id plus a signature, not the bare id (percent-encoded as any cookie value may be).
      expect(decodeURIComponent(pair!)).toMatch(new RegExp(`^restfold_session=${reply.json.session}\\.[A-Za-z0-9+/]+$`));
    });

    it('marks the cookie Secure when the request came over HTTPS through a trusted proxy only', async () => {
      const untrusted = await login(api, 'alice', { 'x-forwarded-proto': 'https' });
      expect(untrusted.setCookie).not.toMatch(/;\s*Secure/);
      const proxied = await startApi({ SECRET_KEY: 'session-test-secret-key-0123456789abcdef', TRUST_PROXY: '1', ...env });
      try {
        await proxied.user('bob');
        expect((await login(proxied, 'bob', { 'x-forwarded-proto': 'https' })).setCookie).toMatch(/;\s*Secure/);
        expect((await login(proxied, 'bob')).setCookie).not.toMatch(/;\s*Secure/);
      } finally {
        await proxied.close();
      }
    });

    it('authenticates reads by cookie without a CSRF token, as the logged-in user', async () => {
      const { cookie } = await login(api, 'alice');
      expect((await api.request('GET', '/api/v1/users/', { headers: { cookie } })).status).toBe(200);
      expect((await api.request('GET', '/api/v1/users/')).status).toBe(401);
    });

    it('needs X-CSRF-Token matching the session on unsafe methods with the cookie: 403 without or with a wrong one', async () => {
      const { cookie, csrf } = await login(api, 'alice');
      const missing = await createArticle({ cookie });
      expect(missing.status).toBe(403);
      expect(missing.json.code).toBe('permission_denied');
      const wrong = await createArticle({ cookie, 'x-csrf-token': `${csrf.slice(0, -1)}x` });
      expect(wrong.status).toBe(403);
      const other = await login(api, 'alice');
      expect((await createArticle({ cookie, 'x-csrf-token': other.csrf })).status).toBe(403);

      const right = await createArticle({ cookie, 'x-csrf-token': csrf });
      expect(right.status).toBe(201);
      expect(right.json.author).toEqual({ id: alice.id, username: 'alice' });
    });

    it('takes a session as a Bearer credential, needing no CSRF token', async () => {
      const { session } = await login(api, 'alice');
      const reply = await api.request('POST', '/api/v1/articles/', { token: session, body: { title: 'Hello' } });
      expect(reply.status).toBe(201);
      expect(reply.json.author.id).toBe(alice.id);
    });

    it('refuses a tampered or unsigned cookie with 401', async () => {
      const { cookie, session } = await login(api, 'alice');
      expectRefused(await api.request('GET', '/api/v1/users/', { headers: { cookie: `${cookie.slice(0, -2)}AA` } }));
      expectRefused(await api.request('GET', '/api/v1/users/', { headers: { cookie: `restfold_session=${session}` } }));
    });

    it('refuses a well-formed but unknown session, in cookie or header', async () => {
      const unknown = `rfs_${'A'.repeat(43)}`;
      expectRefused(await api.request('GET', '/api/v1/users/', { token: unknown }));
    });

    it('gives a new session id at every login', async () => {
      const first = await login(api, 'alice');
      const second = await login(api, 'alice', { cookie: first.cookie });
      expect(second.session).not.toBe(first.session);
      expect(second.csrf).not.toBe(first.csrf);
      expect((await api.request('GET', '/api/v1/users/', { token: second.session })).status).toBe(200);
    });

    it('answers wrong credentials with 400, the same whether or not the user exists, and sets no cookie', async () => {
      const wrong = await api.request('POST', '/api/v1/auth/login/', { body: { username: 'alice', password: 'nope-nope' } });
      const unknown = await api.request('POST', '/api/v1/auth/login/', { body: { username: 'nobody', password: 'nope-nope' } });
      expect(wrong.status).toBe(400);
      expect(wrong.json).toEqual(unknown.json);
      expect(setCookieLine(wrong)).toBeUndefined();
      await api.user('sleepy', { active: false });
      const inactive = await api.request('POST', '/api/v1/auth/login/', { body: { username: 'sleepy', password: PASSWORD } });
      expect(inactive.status).toBe(400);
      expect(inactive.json).toEqual(unknown.json);
    });

    it('logout with the cookie (and CSRF token) answers 204, clears the cookie and ends the session everywhere', async () => {
      const { cookie, csrf, session } = await login(api, 'alice');
      const withoutCsrf = await api.request('POST', '/api/v1/auth/logout/', { headers: { cookie } });
      expect(withoutCsrf.status).toBe(403);

      const reply = await api.request('POST', '/api/v1/auth/logout/', { headers: { cookie, 'x-csrf-token': csrf } });
      expect(reply.status).toBe(204);
      expect(reply.body).toBe('');
      expect(setCookieLine(reply)).toMatch(/^restfold_session=;.*Expires=Thu, 01 Jan 1970/);
      expectRefused(await api.request('GET', '/api/v1/users/', { headers: { cookie } }));
      expectRefused(await api.request('GET', '/api/v1/users/', { token: session }));
    });

    it('logout with the session as Bearer answers 204 and ends it; without a session, 401; with a token, 400', async () => {
      const { session, cookie } = await login(api, 'alice');
      expect((await api.request('POST', '/api/v1/auth/logout/', { token: session })).status).toBe(204);
      expectRefused(await api.request('GET', '/api/v1/users/', { headers: { cookie } }));
      expectRefused(await api.request('POST', '/api/v1/auth/logout/', { token: session }));

      const none = await api.request('POST', '/api/v1/auth/logout/');
      expect(none.status).toBe(401);
      expect(none.json.code).toBe('not_authenticated');
      const token = await api.request('POST', '/api/v1/auth/logout/', { token: alice.token });
      expect(token.status).toBe(400);
    });

    it('ends the sessions of deactivated and deleted users', async () => {
      const bob = await api.user('bob');
      const alices = await login(api, 'alice');
      const bobs = await login(api, 'bob');
      await api.database.db.updateTable('users').set({ is_active: 0 }).where('id', '=', alice.id).execute();
      await api.database.db.deleteFrom('users').where('id', '=', bob.id).execute();
      expectRefused(await api.request('GET', '/api/v1/users/', { headers: { cookie: alices.cookie } }));
      expectRefused(await api.request('GET', '/api/v1/users/', { token: bobs.session }));
    });

    it('a password change ends the other sessions of the user and keeps the one that made it; deactivation ends all', async () => {
      const other = await login(api, 'alice');
      const own = await login(api, 'alice');
      const change = await api.request('PATCH', `/api/v1/users/${alice.id}/`, {
        headers: { cookie: own.cookie, 'x-csrf-token': own.csrf },
        body: { password: 'a-brand-new-password', current_password: PASSWORD },
      });
      expect(change.status).toBe(200);
      expectRefused(await api.request('GET', '/api/v1/users/', { headers: { cookie: other.cookie } }));
      expectRefused(await api.request('GET', '/api/v1/users/', { token: other.session }));
      expect((await api.request('GET', '/api/v1/users/', { headers: { cookie: own.cookie } })).status).toBe(200);

      const admin = await api.user('admin', { superuser: true });
      for (const is_active of [false, true]) {
        expect((await api.request('PATCH', `/api/v1/users/${alice.id}/`, { token: admin.token, body: { is_active } })).status).toBe(200);
      }
      expectRefused(await api.request('GET', '/api/v1/users/', { token: own.session }));
    });

    it('is off without session in AUTH: no login endpoint, the cookie is ignored, a session id is unrecognised', async () => {
      const { cookie, session } = await login(api, 'alice');
      const tokensOnly = await startApi({ SECRET_KEY: 'session-test-secret-key-0123456789abcdef', AUTH: 'token,jwt', ...env });
      try {
        await tokensOnly.user('alice');
        expect((await tokensOnly.request('POST', '/api/v1/auth/login/', { body: { username: 'alice', password: PASSWORD } })).status).toBe(404);
        const byCookie = await tokensOnly.request('GET', '/api/v1/users/', { headers: { cookie } });
        expect(byCookie.status).toBe(401);
        expect(byCookie.json.code).toBe('not_authenticated');
        expectRefused(await tokensOnly.request('GET', '/api/v1/users/', { token: session }));
      } finally {
        await tokensOnly.close();
      }
    });
  });
}
