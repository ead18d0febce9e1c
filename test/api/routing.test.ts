import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { User, collection, defineApp, serializer } from '../../src/framework/index.js';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';
import { testDialect } from '../support/database.js';

let api: TestApi;
let admin: TestUser;

beforeEach(async () => {
  api = await startApi();
  admin = await api.user('admin', { superuser: true });
});
afterEach(() => api.close());

describe('routes', () => {
  it('lists the collections at the API root', async () => {
    const reply = await api.request('GET', '/api/v1/', { token: admin.token });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({
      users: 'http://localhost/api/v1/users/',
      articles: 'http://localhost/api/v1/articles/',
      tags: 'http://localhost/api/v1/tags/',
    });
  });

  it.each([
    ['/api/v1/users', '/api/v1/users/'],
    ['/api/v1/users?page=2&search=a%20b', '/api/v1/users/?page=2&search=a%20b'],
    ['/api/v1/users/5', '/api/v1/users/5/'],
    ['/api/v1', '/api/v1/'],
  ])('redirects %s with 308 to the slashed path', async (path, location) => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const reply = await api.request(method, path);
      expect(reply.status).toBe(308);
      expect(reply.headers.location).toBe(location);
    }
  });

  it.each([
    ['PUT', '/api/v1/users/', 'GET, POST, HEAD, OPTIONS'],
    ['DELETE', '/api/v1/users/', 'GET, POST, HEAD, OPTIONS'],
    ['POST', '/api/v1/users/1/', 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS'],
    ['POST', '/api/v1/', 'GET, HEAD, OPTIONS'],
  ])('answers %s %s with 405 and Allow', async (method, path, allow) => {
    const reply = await api.request(method, path, { token: admin.token });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe(allow);
    expect(reply.json).toEqual({ error: `Method "${method}" not allowed.`, code: 'method_not_allowed' });
  });

  it('answers OPTIONS with the allowed methods', async () => {
    const reply = await api.request('OPTIONS', '/api/v1/users/1/');
    expect(reply.status).toBe(204);
    expect(reply.headers.allow).toBe('GET, PUT, PATCH, DELETE, HEAD, OPTIONS');
  });

  it('answers HEAD like GET without a body', async () => {
    const reply = await api.request('HEAD', '/api/v1/users/', { token: admin.token });
    expect(reply.status).toBe(200);
    expect(reply.body).toBe('');
  });

  it.each(['/api/v1/nothing/', '/api/v1/users/1/extra/', '/nowhere', '/api/v2/users/'])('answers %s with a JSON 404', async (path) => {
    const reply = await api.request('GET', path, { token: admin.token });
    expect(reply.status).toBe(404);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    expect(reply.json).toEqual({ error: 'Not found.', code: 'not_found' });
  });

  it('answers 414 for a request line over 16 KiB', async () => {
    const reply = await api.request('GET', `/api/v1/users/?search=${'a'.repeat(17 * 1024)}`, { token: admin.token });
    expect(reply.status).toBe(414);
    expect(reply.json.code).toBe('uri_too_long');
  });

  it('serves /healthz and /readyz', async () => {
    expect((await api.request('GET', '/healthz')).json).toEqual({ status: 'ok' });
    // On PostgreSQL without Redis the example's live collection listens on a connection of its own, which /readyz reports.
    expect((await api.request('GET', '/readyz')).json).toEqual({ status: 'ok', ...(testDialect === 'postgres' && { listen: 'ok' }) });
  });
});

describe('request ids', () => {
  it('keeps a well-formed incoming X-Request-ID and echoes it', async () => {
    const reply = await api.request('GET', '/healthz', { headers: { 'x-request-id': 'trace-1.2:3_x' } });
    expect(reply.headers['x-request-id']).toBe('trace-1.2:3_x');
  });

  it.each(['', 'has space', 'a'.repeat(201), '<script>'])('replaces a malformed one (%s)', async (incoming) => {
    const reply = await api.request('GET', '/healthz', { headers: { 'x-request-id': incoming } });
    expect(reply.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('token authentication', () => {
  it('obtains a token with a username and password, and revokes it', async () => {
    const obtained = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'admin', password: PASSWORD } });
    expect(obtained.status).toBe(200);
    const token = obtained.json.token as string;
    expect(token).toMatch(/^rf_[A-Za-z0-9_-]{43}$/);
    expect((await api.request('GET', '/api/v1/users/', { token })).status).toBe(200);

    const revoked = await api.request('DELETE', '/api/v1/auth/token/', { token });
    expect(revoked.status).toBe(204);
    const after = await api.request('GET', '/api/v1/users/', { token });
    expect(after.status).toBe(401);
    expect(after.json.code).toBe('authentication_failed');
    expect(after.headers['www-authenticate']).toBe('Bearer');
  });

  it('stores only a hash of each token', async () => {
    const rows = await api.database.db.selectFrom('auth_tokens').select('key_hash').execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key_hash).not.toContain(admin.token.slice(3));
    expect(rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives the same 400 for a wrong password and an unknown user', async () => {
    const wrong = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'admin', password: 'nope' } });
    const unknown = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'ghost', password: 'nope' } });
    expect(wrong.status).toBe(400);
    expect(unknown.status).toBe(400);
    expect(wrong.json).toEqual(unknown.json);
    expect(wrong.json.code).toBe('validation_failed');
  });

  it('requires both fields', async () => {
    const reply = await api.request('POST', '/api/v1/auth/token/', { body: {} });
    expect(reply.status).toBe(400);
    expect(Object.keys(reply.json.details).sort()).toEqual(['password', 'username']);
  });

  it('refuses inactive users, at login and with an existing token', async () => {
    const sleeper = await api.user('sleeper', { active: false });
    expect((await api.request('POST', '/api/v1/auth/token/', { body: { username: 'sleeper', password: PASSWORD } })).status).toBe(400);
    expect((await api.request('GET', '/api/v1/users/', { token: sleeper.token })).status).toBe(401);
  });

  it.each([
    ['Bearer rf_' + 'x'.repeat(43), 'authentication_failed'],
    ['Bearer', 'authentication_failed'],
    ['Bearer not-a-known-kind', 'authentication_failed'],
  ])('answers 401 for the header %s', async (header, code) => {
    const reply = await api.request('GET', '/api/v1/users/', { headers: { authorization: header } });
    expect(reply.status).toBe(401);
    expect(reply.json.code).toBe(code);
    expect(reply.headers['www-authenticate']).toBe('Bearer');
  });

  it('answers 401 not_authenticated without any credential', async () => {
    const reply = await api.request('GET', '/api/v1/users/');
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'Authentication credentials were not provided.', code: 'not_authenticated' });
    expect(reply.headers['www-authenticate']).toBe('Bearer');
  });
});

describe('named permissions on users', () => {
  it('authenticates before checking permissions: 401 without a credential, 403 without the permission', async () => {
    const plain = await api.user('plain');
    const body = { username: 'newbie', password: 'pw' };
    expect((await api.request('POST', '/api/v1/users/', { body })).status).toBe(401);
    const denied = await api.request('POST', '/api/v1/users/', { token: plain.token, body });
    expect(denied.status).toBe(403);
    expect(denied.json).toEqual({ error: 'You do not have permission to perform this action.', code: 'permission_denied' });
  });

  it('grants create, change and delete to users.add, users.change and users.delete', async () => {
    const adder = await api.user('adder', { permissions: ['users.add'] });
    const changer = await api.user('changer', { permissions: ['users.change'] });
    const deleter = await api.user('deleter', { permissions: ['users.delete'] });
    const created = await api.request('POST', '/api/v1/users/', { token: adder.token, body: { username: 'made', password: 'pw' } });
    expect(created.status).toBe(201);
    const url = `/api/v1/users/${created.json.id}/`;
    expect((await api.request('PATCH', url, { token: adder.token, body: { email: 'a@b.co' } })).status).toBe(403);
    expect((await api.request('PATCH', url, { token: changer.token, body: { email: 'a@b.co' } })).status).toBe(200);
    expect((await api.request('DELETE', url, { token: changer.token })).status).toBe(403);
    expect((await api.request('DELETE', url, { token: deleter.token })).status).toBe(204);
  });

  it('lets a user change their own record, not another one', async () => {
    const self = await api.user('self');
    const other = await api.user('other');
    const own = await api.request('PATCH', `/api/v1/users/${self.id}/`, { token: self.token, body: { email: 'me@example.com' } });
    expect(own.status).toBe(200);
    expect(own.json.email).toBe('me@example.com');
    expect((await api.request('PATCH', `/api/v1/users/${other.id}/`, { token: self.token, body: { email: 'x@example.com' } })).status).toBe(403);
    expect((await api.request('DELETE', `/api/v1/users/${self.id}/`, { token: self.token })).status).toBe(403);
    const grant = await api.request('PATCH', `/api/v1/users/${self.id}/`, { token: self.token, body: { is_superuser: true } });
    expect(grant.status).toBe(400);
    expect(grant.json.details).toEqual({ is_superuser: ['Unknown field.'] });
  });
});

describe('server errors', () => {
  const failing = defineApp({
    collections: [
      collection('broken', {
        serializer: serializer(User, {
          fields: ['id', 'username'],
          format: {
            username: () => {
              throw new Error('secret internal detail');
            },
          },
        }),
      }),
    ],
  });

  it('turns a thrown error into a 500 envelope with the request id, and keeps serving', async () => {
    const broken = await startApi({}, failing);
    try {
      const user = await broken.user('someone');
      const reply = await broken.request('GET', '/api/v1/broken/', { token: user.token, headers: { 'x-request-id': 'req-500' } });
      expect(reply.status).toBe(500);
      expect(reply.json).toEqual({ error: 'A server error occurred.', code: 'server_error', request_id: 'req-500' });
      expect(reply.body).not.toContain('secret internal detail');
      expect((await broken.request('GET', '/healthz')).status).toBe(200);
      expect((await broken.request('GET', `/api/v1/broken/${user.id}/`, { token: user.token })).status).toBe(500);
    } finally {
      await broken.close();
    }
  });
});
