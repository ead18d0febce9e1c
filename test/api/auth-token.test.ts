import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let alice: TestUser;

beforeEach(async () => {
  api = await startApi({ SECRET_KEY: 'token-test-secret-key-0123456789abcdef' });
  alice = await api.user('alice');
});
afterEach(() => api.close());

function expectRefused(reply: Reply): void {
  expect(reply.status).toBe(401);
  expect(reply.json.code).toBe('authentication_failed');
  expect(reply.headers['www-authenticate']).toBe('Bearer');
}

const users = (headers: Record<string, string>) => api.request('GET', '/api/v1/users/', { headers });

describe('token', () => {
  it('obtain answers 200 {token}; the token authenticates; DELETE with it answers 204 and revokes it', async () => {
    const obtained = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'alice', password: PASSWORD } });
    expect(obtained.status).toBe(200);
    expect(obtained.json).toEqual({ token: expect.stringMatching(/^rf_[A-Za-z0-9_-]{43}$/) });
    const { token } = obtained.json;
    expect((await api.request('GET', '/api/v1/users/', { token })).status).toBe(200);

    const revoked = await api.request('DELETE', '/api/v1/auth/token/', { token });
    expect(revoked.status).toBe(204);
    expectRefused(await api.request('GET', '/api/v1/users/', { token }));
    expectRefused(await api.request('DELETE', '/api/v1/auth/token/', { token }));
    // Other tokens of the same user live on.
    expect((await api.request('GET', '/api/v1/users/', { token: alice.token })).status).toBe(200);
  });

  it('revoking without a token is 401 not_authenticated', async () => {
    const reply = await api.request('DELETE', '/api/v1/auth/token/');
    expect(reply.status).toBe(401);
    expect(reply.json.code).toBe('not_authenticated');
  });

  it('wrong credentials: 400 with the same body whether or not the user exists', async () => {
    const wrong = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'alice', password: 'wrong-one' } });
    const unknown = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'ghost', password: 'wrong-one' } });
    expect(wrong.status).toBe(400);
    expect(wrong.json).toEqual(unknown.json);
    expect(wrong.json.error).toBe('Unable to log in with the provided credentials.');
  });

  it('refuses unknown tokens and tokens of deactivated or deleted users', async () => {
    expectRefused(await api.request('GET', '/api/v1/users/', { token: `rf_${'Z'.repeat(43)}` }));
    const bob = await api.user('bob');
    await api.database.db.updateTable('users').set({ is_active: 0 }).where('id', '=', alice.id).execute();
    await api.database.db.deleteFrom('users').where('id', '=', bob.id).execute();
    expectRefused(await api.request('GET', '/api/v1/users/', { token: alice.token }));
    expectRefused(await api.request('GET', '/api/v1/users/', { token: bob.token }));
  });
});

describe('the Authorization header', () => {
  it('"Bearer" with no credential is 401 authentication_failed', async () => {
    expectRefused(await users({ authorization: 'Bearer' }));
    expectRefused(await users({ authorization: 'Bearer   ' }));
  });

  it('a credential no enabled kind recognises is 401 authentication_failed', async () => {
    expectRefused(await users({ authorization: 'Bearer something-else' }));
  });

  it('another scheme leaves the request anonymous: 401 not_authenticated where authentication is needed', async () => {
    const reply = await users({ authorization: 'Basic YWxpY2U6cHc=' });
    expect(reply.status).toBe(401);
    expect(reply.json.code).toBe('not_authenticated');
    expect(reply.headers['www-authenticate']).toBe('Bearer');
  });

  it('the scheme name is case-insensitive', async () => {
    expect((await users({ authorization: `bearer ${alice.token}` })).status).toBe(200);
  });
});

describe('AUTH: kinds tried in order, each recognising its own credentials', () => {
  it('every kind works whatever the order', async () => {
    const reordered = await startApi({ SECRET_KEY: 'token-test-secret-key-0123456789abcdef', AUTH: 'session,jwt,token' });
    try {
      const bob = await reordered.user('bob');
      const body = { username: 'bob', password: PASSWORD };
      const { access } = (await reordered.request('POST', '/api/v1/auth/jwt/', { body })).json;
      const { session } = (await reordered.request('POST', '/api/v1/auth/login/', { body })).json;
      for (const token of [bob.token, access, session]) {
        expect((await reordered.request('GET', '/api/v1/users/', { token })).status).toBe(200);
      }
    } finally {
      await reordered.close();
    }
  });

  it('a kind left out of AUTH refuses its credentials and has no endpoints', async () => {
    const jwtOnly = await startApi({ SECRET_KEY: 'token-test-secret-key-0123456789abcdef', AUTH: 'jwt' });
    try {
      const bob = await jwtOnly.user('bob');
      const refused = await jwtOnly.request('GET', '/api/v1/users/', { token: bob.token });
      expect(refused.status).toBe(401);
      expect(refused.json.code).toBe('authentication_failed');
      expect((await jwtOnly.request('POST', '/api/v1/auth/token/', { body: { username: 'bob', password: PASSWORD } })).status).toBe(404);
    } finally {
      await jwtOnly.close();
    }
  });
});
