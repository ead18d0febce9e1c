import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let admin: TestUser;

beforeEach(async () => {
  // At the default THROTTLE_LOGIN: setting passwords is not a login (password-throttling.test.ts).
  api = await startApi();
  admin = await api.user('admin', { superuser: true });
});
afterEach(() => api.close());

const newUser = { username: 'alice', email: 'alice@example.com', password: 's3cret-pass' };

describe('users: create', () => {
  it('answers 201 with the record, a Location header, and never the password', async () => {
    const reply = await api.request('POST', '/api/v1/users/', { token: admin.token, body: newUser });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.json)).toEqual(['id', 'username', 'email', 'is_active', 'date_joined', 'password']);
    expect(reply.json).toMatchObject({ username: 'alice', email: 'alice@example.com', is_active: true, password: null });
    expect(reply.json.date_joined).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(reply.headers.location).toBe(`http://localhost/api/v1/users/${reply.json.id}/`);
    expect(reply.body).not.toContain('s3cret-pass');
    expect(reply.body).not.toContain('scrypt');

    const detail = await api.request('GET', `/api/v1/users/${reply.json.id}/`, { token: admin.token });
    expect(detail.json).toEqual(reply.json);
  });

  it('stores the password hashed, so the new user can obtain a token with it', async () => {
    await api.request('POST', '/api/v1/users/', { token: admin.token, body: newUser });
    const stored = await api.database.db.selectFrom('users').select('password').where('username', '=', 'alice').executeTakeFirstOrThrow();
    expect(stored.password).toMatch(/^scrypt\$/);
    const login = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'alice', password: 's3cret-pass' } });
    expect(login.status).toBe(200);
    expect(login.json.token).toMatch(/^rf_/);
  });

  it('requires username and password, and names each missing field', async () => {
    const reply = await api.request('POST', '/api/v1/users/', { token: admin.token, body: {} });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({
      error: 'Invalid input.',
      code: 'validation_failed',
      details: { username: ['This field is required.'], password: ['This field is required.'] },
    });
  });

  it('validates username characters and length, and e-mail addresses', async () => {
    const reply = await api.request('POST', '/api/v1/users/', {
      token: admin.token,
      body: { username: 'bad name!', email: 'not-an-email', password: 'x' },
    });
    expect(reply.status).toBe(400);
    expect(Object.keys(reply.json.details).sort()).toEqual(['email', 'username']);
    expect(reply.json.details.email).toEqual(['Enter a valid email address.']);

    const long = await api.request('POST', '/api/v1/users/', { token: admin.token, body: { ...newUser, username: 'a'.repeat(151) } });
    expect(long.json.details.username).toEqual(['Ensure this field has no more than 150 characters.']);
    const exact = await api.request('POST', '/api/v1/users/', { token: admin.token, body: { ...newUser, username: 'a'.repeat(150) } });
    expect(exact.status).toBe(201);
  });

  it('accepts an empty or missing e-mail', async () => {
    const empty = await api.request('POST', '/api/v1/users/', { token: admin.token, body: { ...newUser, email: '' } });
    expect(empty.status).toBe(201);
    expect(empty.json.email).toBe('');
    const missing = await api.request('POST', '/api/v1/users/', { token: admin.token, body: { username: 'bob', password: 'pw' } });
    expect(missing.status).toBe(201);
    expect(missing.json.email).toBe('');
  });

  it('rejects unknown fields and wrong types by name', async () => {
    const reply = await api.request('POST', '/api/v1/users/', {
      token: admin.token,
      body: { ...newUser, is_superuser: true, is_active: 'yes' },
    });
    expect(reply.status).toBe(400);
    expect(reply.json.details).toEqual({ is_superuser: ['Unknown field.'], is_active: ['Must be a valid boolean.'] });
  });

  it('ignores read-only fields, and a hidden field sent as null counts as not sent', async () => {
    const reply = await api.request('POST', '/api/v1/users/', {
      token: admin.token,
      body: { ...newUser, id: 999, date_joined: '2000-01-01T00:00:00Z' },
    });
    expect(reply.status).toBe(201);
    expect(reply.json.id).not.toBe(999);
    expect(reply.json.date_joined.startsWith('2000')).toBe(false);
    const nullPassword = await api.request('POST', '/api/v1/users/', { token: admin.token, body: { ...newUser, password: null } });
    expect(nullPassword.json.details).toEqual({ password: ['This field is required.'] });
  });

  it('turns a duplicate username into a 400 naming the field', async () => {
    await api.request('POST', '/api/v1/users/', { token: admin.token, body: newUser });
    const again = await api.request('POST', '/api/v1/users/', { token: admin.token, body: newUser });
    expect(again.status).toBe(400);
    expect(again.json.code).toBe('validation_failed');
    expect(again.json.details.username).toEqual(['A record with this username already exists.']);
  });

  it('gives exactly one 201 when 20 creates of one username race', async () => {
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => api.request('POST', '/api/v1/users/', { token: admin.token, body: newUser })),
    );
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 400)).toHaveLength(19);
    const count = await api.request('GET', '/api/v1/users/?username=alice', { token: admin.token });
    expect(count.json.count).toBe(1);
  });
});

describe('users: update, partial update, delete', () => {
  async function created(): Promise<Record<string, unknown>> {
    return (await api.request('POST', '/api/v1/users/', { token: admin.token, body: newUser })).json;
  }

  it('PUT needs every required writable field but keeps the stored password', async () => {
    const user = await created();
    const missing = await api.request('PUT', `/api/v1/users/${user.id}/`, { token: admin.token, body: { email: 'x@example.com' } });
    expect(missing.status).toBe(400);
    expect(missing.json.details).toEqual({ username: ['This field is required.'] });

    const put = await api.request('PUT', `/api/v1/users/${user.id}/`, {
      token: admin.token,
      body: { username: 'alice2', email: 'a2@example.com', is_active: true },
    });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ id: user.id, username: 'alice2', email: 'a2@example.com', password: null });
    const login = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'alice2', password: 's3cret-pass' } });
    expect(login.status).toBe(200);
  });

  it('a GET result can be PUT back unchanged', async () => {
    const user = await created();
    const put = await api.request('PUT', `/api/v1/users/${user.id}/`, { token: admin.token, body: user });
    expect(put.status).toBe(200);
    expect(put.json).toEqual(user);
  });

  it('PATCH changes only what it sends', async () => {
    const user = await created();
    const patch = await api.request('PATCH', `/api/v1/users/${user.id}/`, { token: admin.token, body: { is_active: false } });
    expect(patch.status).toBe(200);
    expect(patch.json).toEqual({ ...user, is_active: false });
    const empty = await api.request('PATCH', `/api/v1/users/${user.id}/`, { token: admin.token, body: {} });
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual({ ...user, is_active: false });
  });

  it('PATCH can change the password', async () => {
    const user = await created();
    await api.request('PATCH', `/api/v1/users/${user.id}/`, { token: admin.token, body: { password: 'another-one' } });
    const old = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'alice', password: 's3cret-pass' } });
    expect(old.status).toBe(400);
    const fresh = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'alice', password: 'another-one' } });
    expect(fresh.status).toBe(200);
  });

  it('DELETE answers 204 with an empty body, then the record is gone', async () => {
    const user = await created();
    const reply = await api.request('DELETE', `/api/v1/users/${user.id}/`, { token: admin.token });
    expect(reply.status).toBe(204);
    expect(reply.body).toBe('');
    expect((await api.request('GET', `/api/v1/users/${user.id}/`, { token: admin.token })).status).toBe(404);
    expect((await api.request('DELETE', `/api/v1/users/${user.id}/`, { token: admin.token })).status).toBe(404);
  });

  it('a unique clash on update is a 400 too', async () => {
    const user = await created();
    const reply = await api.request('PATCH', `/api/v1/users/${user.id}/`, { token: admin.token, body: { username: 'admin' } });
    expect(reply.status).toBe(400);
    expect(reply.json.details.username).toBeDefined();
  });
});

describe('users: ids in the path', () => {
  it.each(['abc', '0', '-1', '1.5', '1e3', '01', '9223372036854775808', '99999999999999999999999'])(
    'a malformed id %s is 400 validation_failed',
    async (id) => {
      const reply = await api.request('GET', `/api/v1/users/${id}/`, { token: admin.token });
      expect(reply.status).toBe(400);
      expect(reply.json.code).toBe('validation_failed');
      expect(reply.json.details.id).toBeDefined();
    },
  );

  it.each(['12345', '9223372036854775807'])('a well-formed unknown id %s is 404', async (id) => {
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const reply = await api.request(method, `/api/v1/users/${id}/`, {
        token: admin.token,
        body: method === 'PUT' || method === 'PATCH' ? { username: 'x' } : undefined,
      });
      expect(reply.status, method).toBe(404);
      expect(reply.json).toEqual({ error: 'Not found.', code: 'not_found' });
    }
  });
});

describe('users: bodies', () => {
  it.each([
    ['not JSON', '{"username": '],
    ['an array', '[{"username":"a"}]'],
    ['a string', '"hello"'],
    ['null', 'null'],
  ])('a body that is %s is 400 parse_error', async (_name, body) => {
    const reply = await api.request('POST', '/api/v1/users/', { token: admin.token, body });
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('parse_error');
    expect(reply.json.details.non_field_errors).toHaveLength(1);
  });

  it('a non-JSON content type is 415', async () => {
    const reply = await api.request('POST', '/api/v1/users/', {
      token: admin.token,
      body: 'username=a',
      headers: { 'content-type': 'text/plain' },
    });
    expect(reply.status).toBe(415);
    expect(reply.json.code).toBe('unsupported_media_type');
  });

  it('JSON with a charset is accepted', async () => {
    const reply = await api.request('POST', '/api/v1/users/', {
      token: admin.token,
      body: newUser,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(reply.status).toBe(201);
  });

  it('invalid UTF-8 is 400 parse_error', async () => {
    const response = await api.app.inject({
      method: 'POST',
      url: '/api/v1/users/',
      headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' },
      payload: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('parse_error');
  });

  it('NUL characters and lone surrogates in strings are refused, not stored', async () => {
    const nul = await api.request('POST', '/api/v1/users/', { token: admin.token, body: { ...newUser, email: 'a\u0000@example.com' } });
    expect(nul.status).toBe(400);
    const surrogate = await api.request('POST', '/api/v1/users/', {
      token: admin.token,
      body: '{"username":"ab\\ud800","password":"x"}',
    });
    expect(surrogate.status).toBe(400);
    expect(surrogate.json.details.username).toBeDefined();
  });

  it('__proto__ and constructor keys are unknown fields, not prototype changes', async () => {
    const reply = await api.request('POST', '/api/v1/users/', {
      token: admin.token,
      body: '{"username":"p","password":"x","__proto__":{"is_superuser":true},"constructor":1}',
    });
    expect(reply.status).toBe(400);
    // A `__proto__` key in an object literal would set its prototype; these entries are own keys.
    expect(reply.json.details).toEqual(Object.fromEntries([['__proto__', ['Unknown field.']], ['constructor', ['Unknown field.']]]));
  });
});

it('the password hash never appears in any response', async () => {
  const created = await api.request('POST', '/api/v1/users/', { token: admin.token, body: newUser });
  const replies = [
    created,
    await api.request('GET', '/api/v1/users/', { token: admin.token }),
    await api.request('GET', `/api/v1/users/${created.json.id}/`, { token: admin.token }),
    await api.request('PATCH', `/api/v1/users/${created.json.id}/`, { token: admin.token, body: { password: PASSWORD } }),
    await api.request('PUT', `/api/v1/users/${created.json.id}/`, { token: admin.token, body: { username: 'alice' } }),
    await api.request('GET', '/api/v1/users/?search=alice', { token: admin.token }),
  ];
  for (const reply of replies) {
    expect(reply.body).not.toMatch(/scrypt|s3cret-pass|correct-horse/);
  }
  for (const record of replies[1]!.json.results) expect(record.password).toBeNull();
});
