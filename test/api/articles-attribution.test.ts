/**
 * Attribution (issue 18, item 7): without `articles.change`, `author_id` may name only the
 * requesting user, on create, bulk create, PUT and PATCH; holders and superusers may name anyone.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let alice: TestUser;
let bob: TestUser;

beforeEach(async () => {
  api = await startApi();
  alice = await api.user('alice');
  bob = await api.user('bob');
});
afterEach(() => api.close());

const ARTICLES = '/api/v1/articles/';
const REFUSED = ['You may only name yourself here, unless you hold the permission "articles.change".'];

const create = (user: TestUser, body: unknown) => api.request('POST', ARTICLES, { token: user.token, body });
const authors = async (): Promise<unknown[]> =>
  (await api.database.db.selectFrom('articles').select('author_id').orderBy('id').execute()).map((row) => Number(row.author_id));

describe('articles: author_id names the requesting user unless they hold articles.change', () => {
  it('refuses a create under another user (or an unknown one) with 400 on author_id, and stores nothing', async () => {
    for (const author_id of [bob.id, 999_999]) {
      const reply = await create(alice, { title: 'Forged', author_id });
      expect(reply.status).toBe(400);
      expect(reply.json.code).toBe('validation_failed');
      expect(reply.json.details).toEqual({ author_id: REFUSED });
    }
    expect(await authors()).toEqual([]);
  });

  it('accepts the requesting user named or left to the default', async () => {
    expect((await create(alice, { title: 'Named', author_id: alice.id })).json.author_id).toBe(alice.id);
    expect((await create(alice, { title: 'Default' })).json.author_id).toBe(alice.id);
  });

  it('refuses a bulk create with one forged record, storing none of them', async () => {
    const reply = await create(alice, [{ title: 'Mine' }, { title: 'Forged', author_id: bob.id }]);
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('validation_failed');
    expect(reply.json.details).toEqual({ '1.author_id': REFUSED });
    expect(await authors()).toEqual([]);
  });

  it('refuses moving an article to another user by PUT or PATCH, and keeps it', async () => {
    const article = (await create(alice, { title: 'Mine' })).json;
    const put = await api.request('PUT', `${ARTICLES}${article.id}/`, { token: alice.token, body: { ...article, author_id: bob.id } });
    expect(put.status).toBe(400);
    expect(put.json.details).toEqual({ author_id: REFUSED });
    const patch = await api.request('PATCH', `${ARTICLES}${article.id}/`, { token: alice.token, body: { author_id: bob.id } });
    expect(patch.status).toBe(400);
    expect(patch.json.details).toEqual({ author_id: REFUSED });
    expect(await authors()).toEqual([alice.id]);
    const kept = await api.request('PATCH', `${ARTICLES}${article.id}/`, { token: alice.token, body: { title: 'Still mine', author_id: alice.id } });
    expect(kept.status).toBe(200);
  });

  it('lets a holder of articles.change, or a superuser, name anyone on every write', async () => {
    const editor = await api.user('editor', { permissions: ['articles.change'] });
    const admin = await api.user('admin', { superuser: true });
    for (const user of [editor, admin]) {
      const created = await create(user, { title: 'For Bob', author_id: bob.id });
      expect(created.status).toBe(201);
      expect(created.json.author).toEqual({ id: bob.id, username: 'bob' });
      const bulk = await create(user, [{ title: 'For Alice', author_id: alice.id }]);
      expect(bulk.status).toBe(201);
      const moved = await api.request('PATCH', `${ARTICLES}${created.json.id}/`, { token: user.token, body: { author_id: alice.id } });
      expect(moved.status).toBe(200);
      expect(moved.json.author_id).toBe(alice.id);
      const put = await api.request('PUT', `${ARTICLES}${created.json.id}/`, { token: user.token, body: { title: 'Back', author_id: bob.id } });
      expect(put.status).toBe(200);
      expect(put.json.author_id).toBe(bob.id);
    }
  });
});
