/**
 * SECRET_KEY itself signs nothing: JWTs, session cookies and cursors each use
 * a key derived from it for that purpose alone, so a value signed with the raw
 * key, or with another purpose's key, is refused.
 */
import { createHmac } from 'node:crypto';
import { sign as signCookie } from '@fastify/cookie';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { signingKeys } from '../../src/framework/app/secrets.js';
import { User, collection, defineApp, serializer } from '../../src/framework/index.js';
import { PASSWORD, startApi, type TestApi } from '../support/api.js';

const SECRET_KEY = 'signing-keys-test-secret-key-0123456789abcdef';
const raw = Buffer.from(SECRET_KEY);
const derived = signingKeys(SECRET_KEY);

let api: TestApi;
afterEach(() => api.close());

describe('keys derived from SECRET_KEY, one per purpose', () => {
  it('refuses a JWT signed with SECRET_KEY itself or with the cookie key; accepts only the JWT key', async () => {
    api = await startApi({ SECRET_KEY });
    const alice = await api.user('alice');
    const forge = (key: Uint8Array) =>
      new SignJWT({ token_type: 'access' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(String(alice.id))
        .setIssuedAt()
        .setExpirationTime('1m')
        .sign(key);
    for (const key of [raw, derived.cookie, derived.cursor]) {
      const reply = await api.request('GET', '/api/v1/users/', { token: await forge(key) });
      expect(reply.status).toBe(401);
      expect(reply.json.code).toBe('authentication_failed');
    }
    expect((await api.request('GET', '/api/v1/users/', { token: await forge(derived.jwt) })).status).toBe(200);
  });

  it('refuses a session cookie signed with SECRET_KEY itself or with the JWT key; accepts only the cookie key', async () => {
    api = await startApi({ SECRET_KEY });
    await api.user('alice');
    const login = await api.request('POST', '/api/v1/auth/login/', { body: { username: 'alice', password: PASSWORD } });
    expect(login.status).toBe(200);
    const cookieSignedWith = (key: Buffer) => ({ cookie: `restfold_session=${encodeURIComponent(signCookie(login.json.session, key))}` });
    for (const key of [raw, derived.jwt]) {
      const reply = await api.request('GET', '/api/v1/users/', { headers: cookieSignedWith(key) });
      expect(reply.status).toBe(401);
      expect(reply.json.code).toBe('authentication_failed');
    }
    expect((await api.request('GET', '/api/v1/users/', { headers: cookieSignedWith(derived.cookie) })).status).toBe(200);
  });

  it('refuses a cursor signed with SECRET_KEY itself', async () => {
    const people = defineApp({
      collections: [collection('people', { serializer: serializer(User, { fields: ['id', 'username'] }), pagination: 'cursor', pageSize: 1 })],
    });
    api = await startApi({ SECRET_KEY }, people);
    const admin = await api.user('admin');
    await api.user('bob');
    const first = await api.request('GET', '/api/v1/people/', { token: admin.token });
    const cursor = new URL(first.json.next).searchParams.get('cursor')!;
    const [payload] = cursor.split('.');
    const resigned = `${payload}.${createHmac('sha256', raw).update(payload!).digest().subarray(0, 16).toString('base64url')}`;
    const reply = await api.request('GET', `/api/v1/people/?cursor=${resigned}`, { token: admin.token });
    expect(reply.status).toBe(400);
    expect(reply.json.details.cursor).toEqual(['Invalid cursor.']);
    expect((await api.request('GET', `/api/v1/people/?cursor=${cursor}`, { token: admin.token })).json.results).toHaveLength(1);
  });
});
