/**
 * The example service's records are the contract's, key for key and in its order, in every answer
 * that carries one: a list page, a detail, a create (one record or a bulk of them), a PUT and a
 * PATCH. A user is exactly `id, username, email, is_active, date_joined, password` (always null);
 * an article exactly `id, title, body, author, author_id, created_at`, its author exactly `{id,
 * username}`. No relation or addition of the service's shows in them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';

const USER_KEYS = ['id', 'username', 'email', 'is_active', 'date_joined', 'password'];
const ARTICLE_KEYS = ['id', 'title', 'body', 'author', 'author_id', 'created_at'];

let api: TestApi;
let admin: TestUser;

beforeAll(async () => {
  api = await startApi();
  admin = await api.user('admin', { superuser: true });
});
afterAll(() => api.close());

const send = (method: string, url: string, body?: unknown) => api.request(method, url, { token: admin.token, body });

/** The one record of `reply` (status `status`), checked as a user record. */
function expectUser(reply: Reply, status: number): Record<string, unknown> {
  expect({ status: reply.status, body: reply.json }).toMatchObject({ status });
  expect(Object.keys(reply.json)).toStrictEqual(USER_KEYS);
  expect(reply.json.password).toBeNull();
  return reply.json;
}

function expectArticle(record: Record<string, unknown>): void {
  expect(Object.keys(record)).toStrictEqual(ARTICLE_KEYS);
  expect(Object.keys(record.author as object)).toStrictEqual(['id', 'username']);
}

describe('a users record', () => {
  it('is exactly the contract’s fields in a create, detail, list, PUT and PATCH answer', async () => {
    const created = expectUser(await send('POST', '/api/v1/users/', { username: 'keyset', email: 'keyset@example.com', password: 'a-long-password-1' }), 201);
    const url = `/api/v1/users/${created.id}/`;
    expectUser(await send('GET', url), 200);
    expectUser(await send('PUT', url, { username: 'keyset', email: '', is_active: true }), 200);
    expectUser(await send('PATCH', url, { email: 'keyset@example.org' }), 200);

    const page = await send('GET', '/api/v1/users/?page_size=100');
    expect(page.status).toBe(200);
    expect(page.json.results.length).toBeGreaterThanOrEqual(2);
    for (const record of page.json.results) expect(Object.keys(record)).toStrictEqual(USER_KEYS);
  });
});

describe('an articles record', () => {
  it('is exactly the contract’s fields in a create, bulk create, detail, list, PUT and PATCH answer', async () => {
    const created = await send('POST', '/api/v1/articles/', { title: 'Key set', body: 'Counted keys.' });
    expect(created.status).toBe(201);
    expectArticle(created.json);
    const bulk = await send('POST', '/api/v1/articles/', [{ title: 'Bulk one' }, { title: 'Bulk two', body: 'two' }]);
    expect(bulk.status).toBe(201);
    for (const record of bulk.json) expectArticle(record);

    const url = `/api/v1/articles/${created.json.id}/`;
    for (const [method, body] of [['GET'], ['PUT', { title: 'Key set, put', body: 'Again.' }], ['PATCH', { title: 'Key set, patched' }]] as const) {
      const reply = await send(method, url, body);
      expect(reply.status, method).toBe(200);
      expectArticle(reply.json);
    }

    const page = await send('GET', '/api/v1/articles/?page_size=100');
    expect(page.status).toBe(200);
    expect(page.json.results).toHaveLength(3);
    for (const record of page.json.results) expectArticle(record);
  });
});
