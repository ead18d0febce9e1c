import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { PASSWORD, startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

function expectStatus(reply: Reply, status: number, code?: string): void {
  expect({ status: reply.status, code: reply.json?.code }).toEqual({ status, code: code ?? reply.json?.code });
}

const login = (api: TestApi, username: string, password = PASSWORD) =>
  api.request('POST', '/api/v1/auth/token/', { body: { username, password } });

describe('users: per-action and per-object permissions', () => {
  let api: TestApi;
  let alice: TestUser;
  let bob: TestUser;

  beforeEach(async () => {
    api = await startApi();
    alice = await api.user('alice');
    bob = await api.user('bob');
  });
  afterEach(() => api.close());

  it('anonymous requests get 401 not_authenticated (with WWW-Authenticate) for every action, before any 403', async () => {
    const requests: [string, string, unknown?][] = [
      ['GET', '/api/v1/users/'],
      ['GET', `/api/v1/users/${alice.id}/`],
      ['POST', '/api/v1/users/', { username: 'x', password: 'y' }],
      ['PUT', `/api/v1/users/${alice.id}/`, { username: 'x' }],
      ['PATCH', `/api/v1/users/${alice.id}/`, {}],
      ['DELETE', `/api/v1/users/${alice.id}/`],
    ];
    for (const [method, url, body] of requests) {
      const reply = await api.request(method, url, { body });
      expectStatus(reply, 401, 'not_authenticated');
      expect(reply.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('any authenticated user may list and retrieve', async () => {
    expectStatus(await api.request('GET', '/api/v1/users/', { token: alice.token }), 200);
    expectStatus(await api.request('GET', `/api/v1/users/${bob.id}/`, { token: alice.token }), 200);
  });

  it('create needs users.add: 403 without it, 201 with it', async () => {
    const body = { username: 'carol', password: 'pw-carol' };
    expectStatus(await api.request('POST', '/api/v1/users/', { token: alice.token, body }), 403, 'permission_denied');
    const adder = await api.user('adder', { permissions: ['users.add'] });
    expectStatus(await api.request('POST', '/api/v1/users/', { token: adder.token, body }), 201);
  });

  it('a user may PATCH their own e-mail and password', async () => {
    const email = await api.request('PATCH', `/api/v1/users/${alice.id}/`, { token: alice.token, body: { email: 'new@example.com' } });
    expectStatus(email, 200);
    expect(email.json.email).toBe('new@example.com');
    expectStatus(await api.request('PATCH', `/api/v1/users/${alice.id}/`, { token: alice.token, body: { password: 'brand-new-pw', current_password: PASSWORD } }), 200);
    expectStatus(await login(api, 'alice'), 400);
    expectStatus(await login(api, 'alice', 'brand-new-pw'), 200);
  });

  it('a user may PUT their own record', async () => {
    const reply = await api.request('PUT', `/api/v1/users/${alice.id}/`, {
      token: alice.token,
      body: { username: 'alice', email: 'a@example.org', is_active: true },
    });
    expectStatus(reply, 200);
  });

  it('a user may not change or delete another user: 403, and nothing changes', async () => {
    expectStatus(await api.request('PATCH', `/api/v1/users/${bob.id}/`, { token: alice.token, body: { email: 'x@example.com' } }), 403, 'permission_denied');
    expectStatus(await api.request('PATCH', `/api/v1/users/${bob.id}/`, { token: alice.token, body: { password: 'taken-over' } }), 403);
    expectStatus(await api.request('PUT', `/api/v1/users/${bob.id}/`, { token: alice.token, body: { username: 'bob' } }), 403);
    expectStatus(await api.request('DELETE', `/api/v1/users/${bob.id}/`, { token: alice.token }), 403);
    expectStatus(await login(api, 'bob'), 200);
    expect((await api.request('GET', `/api/v1/users/${bob.id}/`, { token: alice.token })).json.email).toBe('bob@example.com');
  });

  it('deleting, even oneself, needs users.delete', async () => {
    expectStatus(await api.request('DELETE', `/api/v1/users/${alice.id}/`, { token: alice.token }), 403);
    const deleter = await api.user('deleter', { permissions: ['users.delete'] });
    expectStatus(await api.request('DELETE', `/api/v1/users/${bob.id}/`, { token: deleter.token }), 204);
  });

  it('users.change lets one change others; a superuser holds every permission', async () => {
    const changer = await api.user('changer', { permissions: ['users.change'] });
    expectStatus(await api.request('PATCH', `/api/v1/users/${bob.id}/`, { token: changer.token, body: { email: 'c@example.com' } }), 200);
    expectStatus(await api.request('DELETE', `/api/v1/users/${bob.id}/`, { token: changer.token }), 403);
    const root = await api.user('root', { superuser: true });
    expectStatus(await api.request('DELETE', `/api/v1/users/${bob.id}/`, { token: root.token }), 204);
  });

  it('a user cannot grant themselves anything: is_superuser and permissions are unknown fields', async () => {
    for (const body of [{ is_superuser: true }, { permissions: ['users.add'] }, { is_staff: true }]) {
      const reply = await api.request('PATCH', `/api/v1/users/${alice.id}/`, { token: alice.token, body });
      expectStatus(reply, 400, 'validation_failed');
      expect(reply.json.details).toEqual({ [Object.keys(body)[0]!]: ['Unknown field.'] });
    }
    const put = await api.request('PUT', `/api/v1/users/${alice.id}/`, { token: alice.token, body: { username: 'alice', is_superuser: true } });
    expect(put.json.details).toEqual({ is_superuser: ['Unknown field.'] });
    expectStatus(await api.request('POST', '/api/v1/users/', { token: alice.token, body: { username: 'x', password: 'y' } }), 403);
  });

  it('an unknown id is 404 for an authenticated user, whatever their permissions', async () => {
    expectStatus(await api.request('PATCH', '/api/v1/users/999999/', { token: alice.token, body: {} }), 404, 'not_found');
  });
});

describe('articles: only the author or a permission holder may change or delete', () => {
  let api: TestApi;
  let author: TestUser;
  let other: TestUser;
  let articleId: number;

  beforeEach(async () => {
    api = await startApi();
    author = await api.user('author');
    other = await api.user('other');
    const created = await api.request('POST', '/api/v1/articles/', { token: author.token, body: { title: 'Mine', body: 'text' } });
    expectStatus(created, 201);
    articleId = created.json.id;
  });
  afterEach(() => api.close());

  const url = () => `/api/v1/articles/${articleId}/`;

  it('any authenticated user may list, read and create; anonymous gets 401', async () => {
    expectStatus(await api.request('GET', '/api/v1/articles/', { token: other.token }), 200);
    expectStatus(await api.request('GET', url(), { token: other.token }), 200);
    expectStatus(await api.request('POST', '/api/v1/articles/', { token: other.token, body: { title: 'Theirs' } }), 201);
    expectStatus(await api.request('GET', '/api/v1/articles/'), 401, 'not_authenticated');
    expectStatus(await api.request('PATCH', url(), { body: { title: 'x' } }), 401, 'not_authenticated');
  });

  it('the author may update, partially update and delete', async () => {
    expectStatus(await api.request('PUT', url(), { token: author.token, body: { title: 'Renamed', body: 'b' } }), 200);
    expectStatus(await api.request('PATCH', url(), { token: author.token, body: { title: 'Again' } }), 200);
    expectStatus(await api.request('DELETE', url(), { token: author.token }), 204);
  });

  it('another user gets 403 on update, partial update and delete', async () => {
    expectStatus(await api.request('PUT', url(), { token: other.token, body: { title: 'Stolen', body: '' } }), 403, 'permission_denied');
    expectStatus(await api.request('PATCH', url(), { token: other.token, body: { title: 'Stolen' } }), 403, 'permission_denied');
    expectStatus(await api.request('DELETE', url(), { token: other.token }), 403, 'permission_denied');
    expect((await api.request('GET', url(), { token: other.token })).json.title).toBe('Mine');
  });

  it('articles.change allows changing but not deleting; articles.delete allows deleting but not changing', async () => {
    const editor = await api.user('editor', { permissions: ['articles.change'] });
    const remover = await api.user('remover', { permissions: ['articles.delete'] });
    expectStatus(await api.request('PATCH', url(), { token: editor.token, body: { title: 'Edited' } }), 200);
    expectStatus(await api.request('DELETE', url(), { token: editor.token }), 403);
    expectStatus(await api.request('PATCH', url(), { token: remover.token, body: { title: 'No' } }), 403);
    expectStatus(await api.request('DELETE', url(), { token: remover.token }), 204);
  });

  it('a superuser may change and delete anyone\'s article', async () => {
    const root = await api.user('root', { superuser: true });
    expectStatus(await api.request('PATCH', url(), { token: root.token, body: { title: 'Root' } }), 200);
    expectStatus(await api.request('DELETE', url(), { token: root.token }), 204);
  });
});

const Note = model('notes', { id: fields.id(), text: fields.string({ maxLength: 100 }) });
const notesApp = withGeneratedMigrations(
  defineApp({ collections: [collection('notes', { serializer: serializer(Note, { fields: ['id', 'text'], readOnly: ['id'] }) })] }),
);

describe('API_REQUIRE_AUTH on a collection that sets no checks of its own', () => {
  let api: TestApi;
  afterEach(() => api.close());

  async function withNote(env: Record<string, string>): Promise<{ writer: TestUser; id: number }> {
    api = await startApi(env, notesApp);
    const writer = await api.user('writer');
    const created = await api.request('POST', '/api/v1/notes/', { token: writer.token, body: { text: 'hi' } });
    expectStatus(created, 201);
    return { writer, id: created.json.id };
  }

  it('true (the default): every action needs authentication', async () => {
    const { id } = await withNote({});
    expectStatus(await api.request('GET', '/api/v1/notes/'), 401, 'not_authenticated');
    expectStatus(await api.request('GET', `/api/v1/notes/${id}/`), 401, 'not_authenticated');
  });

  it('false: anonymous list and retrieve are open, writes still need authentication', async () => {
    const { writer, id } = await withNote({ API_REQUIRE_AUTH: 'false' });
    const list = await api.request('GET', '/api/v1/notes/');
    expectStatus(list, 200);
    expect(list.json.results).toEqual([{ id, text: 'hi' }]);
    expectStatus(await api.request('GET', `/api/v1/notes/${id}/`), 200);
    expectStatus(await api.request('POST', '/api/v1/notes/', { body: { text: 'anon' } }), 401, 'not_authenticated');
    expectStatus(await api.request('PATCH', `/api/v1/notes/${id}/`, { body: { text: 'anon' } }), 401);
    expectStatus(await api.request('DELETE', `/api/v1/notes/${id}/`), 401);
    expectStatus(await api.request('PATCH', `/api/v1/notes/${id}/`, { token: writer.token, body: { text: 'ok' } }), 200);
  });

  it('false: a bad credential is still 401, not treated as anonymous', async () => {
    await withNote({ API_REQUIRE_AUTH: 'false' });
    expectStatus(await api.request('GET', '/api/v1/notes/', { token: `rf_${'x'.repeat(43)}` }), 401, 'authentication_failed');
  });

  it('false does not open collections that set their own checks (users)', async () => {
    api = await startApi({ API_REQUIRE_AUTH: 'false' });
    expectStatus(await api.request('GET', '/api/v1/users/'), 401, 'not_authenticated');
    expectStatus(await api.request('GET', '/api/v1/articles/'), 401, 'not_authenticated');
  });
});
