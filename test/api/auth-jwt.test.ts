import { SignJWT, decodeJwt, jwtVerify } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signingKeys } from '../../src/framework/app/secrets.js';
import { PASSWORD, startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';

const SECRET_KEY = 'jwt-test-secret-key-that-is-long-enough-0123456789';
const key = signingKeys(SECRET_KEY).jwt;

let api: TestApi;
let alice: TestUser;

beforeEach(async () => {
  api = await startApi({ SECRET_KEY });
  alice = await api.user('alice');
});
afterEach(() => api.close());

const obtain = (username = 'alice', password = PASSWORD) => api.request('POST', '/api/v1/auth/jwt/', { body: { username, password } });

function expectRefused(reply: Reply): void {
  expect(reply.status).toBe(401);
  expect(reply.json.code).toBe('authentication_failed');
  expect(reply.headers['www-authenticate']).toBe('Bearer');
}

/** A token as the service would make it, with claims (and key) of the test's choosing. */
const forge = (claims: Record<string, unknown>, options: { alg?: string; key?: Uint8Array } = {}) =>
  new SignJWT({ token_type: 'access', sub: String(alice.id), ...claims })
    .setProtectedHeader({ alg: options.alg ?? 'HS256' })
    .setIssuedAt()
    .sign(options.key ?? key);

const inOneMinute = () => Math.floor(Date.now() / 1000) + 60;

describe('jwt: obtain and use', () => {
  it('answers 200 {access, refresh}, HS256 tokens signed with the JWT key derived from SECRET_KEY, and the access token authenticates', async () => {
    const reply = await obtain();
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.json).sort()).toEqual(['access', 'refresh']);
    const { payload, protectedHeader } = await jwtVerify(reply.json.access, key);
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload).toMatchObject({ sub: String(alice.id), token_type: 'access' });

    const users = await api.request('GET', '/api/v1/users/', { token: reply.json.access });
    expect(users.status).toBe(200);
  });

  it('makes access tokens live 5 minutes and refresh tokens 1 day by default', async () => {
    const { access, refresh } = (await obtain()).json;
    const accessClaims = decodeJwt(access);
    const refreshClaims = decodeJwt(refresh);
    expect(accessClaims.exp! - accessClaims.iat!).toBe(300);
    expect(refreshClaims.exp! - refreshClaims.iat!).toBe(86_400);
  });

  it('takes lifetimes from JWT_ACCESS_LIFETIME and JWT_REFRESH_LIFETIME', async () => {
    const custom = await startApi({ SECRET_KEY, JWT_ACCESS_LIFETIME: '90s', JWT_REFRESH_LIFETIME: '2h' });
    try {
      await custom.user('bob');
      const { access, refresh } = (await custom.request('POST', '/api/v1/auth/jwt/', { body: { username: 'bob', password: PASSWORD } })).json;
      expect(decodeJwt(access).exp! - decodeJwt(access).iat!).toBe(90);
      expect(decodeJwt(refresh).exp! - decodeJwt(refresh).iat!).toBe(7200);
    } finally {
      await custom.close();
    }
  });

  it('answers wrong credentials with 400 and the same message whether or not the user exists', async () => {
    const wrongPassword = await obtain('alice', 'not-the-password');
    const noSuchUser = await obtain('nobody', 'not-the-password');
    expect(wrongPassword.status).toBe(400);
    expect(noSuchUser.status).toBe(400);
    expect(wrongPassword.json).toEqual(noSuchUser.json);
    expect(wrongPassword.json.code).toBe('validation_failed');
  });

  it('refuses an inactive user\'s credentials like wrong ones', async () => {
    await api.user('sleepy', { active: false });
    const reply = await obtain('sleepy');
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual((await obtain('nobody')).json);
  });

  it('names missing fields with 400', async () => {
    const reply = await api.request('POST', '/api/v1/auth/jwt/', { body: {} });
    expect(reply.status).toBe(400);
    expect(reply.json.details).toEqual({ username: ['This field is required.'], password: ['This field is required.'] });
  });
});

describe('jwt: refresh', () => {
  it('trades a refresh token for a new working access token and the next refresh token', async () => {
    const { refresh } = (await obtain()).json;
    const reply = await api.request('POST', '/api/v1/auth/jwt/refresh/', { body: { refresh } });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.json)).toEqual(['access', 'refresh']);
    expect(decodeJwt(reply.json.refresh)).toMatchObject({ sub: String(alice.id), token_type: 'refresh' });
    expect(decodeJwt(reply.json.access)).toMatchObject({ sub: String(alice.id), token_type: 'access' });
    expect((await api.request('GET', '/api/v1/users/', { token: reply.json.access })).status).toBe(200);
  });

  it('refuses an access token where a refresh token is expected', async () => {
    const { access } = (await obtain()).json;
    expectRefused(await api.request('POST', '/api/v1/auth/jwt/refresh/', { body: { refresh: access } }));
  });

  it('needs a refresh field: 400 naming it', async () => {
    const reply = await api.request('POST', '/api/v1/auth/jwt/refresh/', { body: { refresh: 42 } });
    expect(reply.status).toBe(400);
    expect(reply.json.details).toEqual({ refresh: ['This field is required.'] });
    const notJson = await api.request('POST', '/api/v1/auth/jwt/refresh/', { body: '{', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(notJson.json.code).toBe('parse_error');
  });

  it('refuses a refresh token of a user deactivated since', async () => {
    const { refresh } = (await obtain()).json;
    await api.database.db.updateTable('users').set({ is_active: 0 }).where('id', '=', alice.id).execute();
    expectRefused(await api.request('POST', '/api/v1/auth/jwt/refresh/', { body: { refresh } }));
  });

  it('refuses an expired or foreign-signed refresh token', async () => {
    const expired = await forge({ token_type: 'refresh', exp: Math.floor(Date.now() / 1000) - 10 });
    expectRefused(await api.request('POST', '/api/v1/auth/jwt/refresh/', { body: { refresh: expired } }));
    const foreign = await forge({ token_type: 'refresh', exp: inOneMinute() }, { key: new TextEncoder().encode('another-key') });
    expectRefused(await api.request('POST', '/api/v1/auth/jwt/refresh/', { body: { refresh: foreign } }));
  });
});

describe('jwt: refused access tokens get 401 authentication_failed with WWW-Authenticate: Bearer', () => {
  const protectedGet = (token: string) => api.request('GET', '/api/v1/users/', { token });

  it('a refresh token used as an access token', async () => {
    const { refresh } = (await obtain()).json;
    expectRefused(await protectedGet(refresh));
  });

  it('a well-made token accepted, as the control for the cases below', async () => {
    expect((await protectedGet(await forge({ exp: inOneMinute() }))).status).toBe(200);
  });

  it('alg: none', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ sub: String(alice.id), token_type: 'access', exp: inOneMinute() })).toString('base64url');
    expectRefused(await protectedGet(`${header}.${payload}.`));
  });

  it('another algorithm, even with the right key', async () => {
    expectRefused(await protectedGet(await forge({ exp: inOneMinute() }, { alg: 'HS512' })));
  });

  it('a bad signature', async () => {
    expectRefused(await protectedGet(await forge({ exp: inOneMinute() }, { key: new TextEncoder().encode('not-the-secret-key') })));
    const good = (await obtain()).json.access as string;
    const [header, , signature] = good.split('.');
    const otherUser = Buffer.from(JSON.stringify({ ...decodeJwt(good), sub: '999' })).toString('base64url');
    expectRefused(await protectedGet(`${header}.${otherUser}.${signature}`));
  });

  it('an expired token, and one without exp', async () => {
    expectRefused(await protectedGet(await forge({ exp: Math.floor(Date.now() / 1000) - 1 })));
    expectRefused(await protectedGet(await forge({})));
  });

  it('a token of a deleted user and of a deactivated user', async () => {
    const bob = await api.user('bob');
    const carol = await api.user('carol');
    const bobs = (await api.request('POST', '/api/v1/auth/jwt/', { body: { username: 'bob', password: PASSWORD } })).json.access;
    const carols = (await api.request('POST', '/api/v1/auth/jwt/', { body: { username: 'carol', password: PASSWORD } })).json.access;
    await api.database.db.deleteFrom('users').where('id', '=', bob.id).execute();
    await api.database.db.updateTable('users').set({ is_active: 0 }).where('id', '=', carol.id).execute();
    expectRefused(await protectedGet(bobs));
    expectRefused(await protectedGet(carols));
  });

  it('JWT-shaped garbage', async () => {
    expectRefused(await protectedGet('abc.def.ghi'));
  });
});

describe('jwt: AUTH', () => {
  it('without jwt in AUTH, the endpoints are absent and a JWT is an unrecognised credential', async () => {
    const tokensOnly = await startApi({ SECRET_KEY, AUTH: 'token' });
    try {
      await tokensOnly.user('bob');
      expect((await tokensOnly.request('POST', '/api/v1/auth/jwt/', { body: { username: 'bob', password: PASSWORD } })).status).toBe(404);
      const reply = await tokensOnly.request('GET', '/api/v1/users/', { token: await forge({ exp: inOneMinute() }) });
      expectRefused(reply);
    } finally {
      await tokensOnly.close();
    }
  });
});
