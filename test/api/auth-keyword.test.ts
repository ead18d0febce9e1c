/**
 * `Authorization: Token <credential>`, the keyword Django REST Framework's
 * clients send, works wherever `Bearer` does: for every kind of credential,
 * and for revoking a token. A bad one is refused as a bad Bearer is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let alice: TestUser;
beforeAll(async () => {
  api = await startApi();
  alice = await api.user('alice');
});
afterAll(() => api.close());

const withKeyword = (keyword: string, credential: string) => ({ headers: { authorization: `${keyword} ${credential}` } });

describe('the Token keyword', () => {
  it('authenticates a token, a JWT access token and a session id, as Bearer does', async () => {
    const credentials = { username: 'alice', password: PASSWORD };
    const access = (await api.request('POST', '/api/v1/auth/jwt/', { body: credentials })).json.access;
    const session = (await api.request('POST', '/api/v1/auth/login/', { body: credentials })).json.session;
    for (const credential of [alice.token, access, session]) {
      for (const keyword of ['Token', 'token', 'Bearer']) {
        const reply = await api.request('GET', '/api/v1/users/', withKeyword(keyword, credential));
        expect(reply.status, `${keyword} ${credential.slice(0, 4)}…`).toBe(200);
      }
    }
  });

  it('refuses a bad credential or none after the keyword with 401 and WWW-Authenticate', async () => {
    for (const header of ['Token rf_not-a-token', 'Token']) {
      const reply = await api.request('GET', '/api/v1/users/', { headers: { authorization: header } });
      expect(reply.status, header).toBe(401);
      expect(reply.json.code).toBe('authentication_failed');
      expect(reply.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('revokes the token it names', async () => {
    const token = (await api.request('POST', '/api/v1/auth/token/', { body: { username: 'alice', password: PASSWORD } })).json.token;
    expect((await api.request('DELETE', '/api/v1/auth/token/', withKeyword('Token', token))).status).toBe(204);
    expect((await api.request('GET', '/api/v1/users/', withKeyword('Token', token))).status).toBe(401);
  });
});
