/**
 * Nested collections: comments mounted under one article (`/articles/{parent}/comments/`), scoped
 * to it in every read and write, the article set from the path on create, and 404 for an article
 * that does not exist, lies outside the requester's scope, or is not the comment's (400 for a
 * malformed article id, as the article's own path answers it).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allowAny, collection, defineApp, fields, isAuthenticated, model, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { testDialect } from '../support/database.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const Article = model('articles', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const Comment = model('comments', {
  id: fields.id(),
  body: fields.string({ maxLength: 100 }),
  article_id: fields.foreignKey('articles'),
});

// Each user reaches only their own articles (as drafts would be), so another's is out of scope.
const articles = collection('articles', {
  serializer: serializer(Article, { fields: ['id', 'title', 'owner_id'], readOnly: ['owner_id'] }),
  scope: ({ user }) => ({ owner_id: user?.id ?? null }),
});
const commentSerializer = serializer(Comment, { fields: ['id', 'body', 'article_id'], readOnly: ['article_id'] });
const comments = collection('comments', {
  serializer: commentSerializer,
  parent: { collection: articles, field: 'article_id' },
  permissions: [isAuthenticated],
  bulkCreate: { max: 10 },
  actions: {
    shout: { detail: true, method: 'GET', permissions: [allowAny], handler: ({ record, parent }) => ({ body: String(record!.body).toUpperCase(), parent }) },
  },
});
const commentPages = collection('comment-pages', {
  serializer: commentSerializer,
  parent: { collection: articles, field: 'article_id' },
  pagination: 'cursor',
  pageSize: 2,
  permissions: { list: [allowAny] },
});

const app = withGeneratedMigrations(defineApp({ collections: [articles, comments, commentPages] }));

const sent: string[] = [];
let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let first: number;
let second: number;
let bobs: number;
let comment: number;

const under = (article: number, rest = '') => `/api/v1/articles/${article}/comments/${rest}`;

beforeAll(async () => {
  api = await startApi({}, app, { appDatabase: recording(sent) });
  alice = await api.user('alice');
  bob = await api.user('bob');
  const article = async (user: TestUser, title: string) => (await api.request('POST', '/api/v1/articles/', { token: user.token, body: { title } })).json.id as number;
  first = await article(alice, 'First');
  second = await article(alice, 'Second');
  bobs = await article(bob, 'Bob’s');
  comment = (await api.request('POST', under(first), { token: alice.token, body: { body: 'one' } })).json.id;
  await api.request('POST', under(first, 'bulk/'), { token: alice.token, body: [{ body: 'two' }, { body: 'three' }] });
  await api.request('POST', under(second), { token: alice.token, body: { body: 'elsewhere' } });
});
afterAll(() => api.close());
beforeEach(() => {
  sent.length = 0;
});

const bodies = (reply: { json: { results: { body: string }[] } }) => reply.json.results.map(({ body }) => body).sort();

describe('a nested collection', () => {
  it('creates under the article in the path, whatever the body says of it, with a Location under it', async () => {
    const created = await api.request('POST', under(second), { token: alice.token, body: { body: 'four', article_id: first } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ id: expect.any(Number), body: 'four', article_id: second });
    expect(created.headers.location).toMatch(new RegExp(`/api/v1/articles/${second}/comments/${created.json.id}/$`));
    const again = await api.request('GET', new URL(String(created.headers.location)).pathname, { token: alice.token });
    expect(again.json).toEqual(created.json);
    const bulk = await api.request('POST', under(second, 'bulk/'), { token: alice.token, body: [{ body: 'five' }] });
    expect(bulk.json).toEqual([{ id: expect.any(Number), body: 'five', article_id: second }]);
    await api.request('DELETE', under(second, `${created.json.id}/`), { token: alice.token });
    await api.request('DELETE', under(second, `${bulk.json[0].id}/`), { token: alice.token });
  });

  it('lists and counts only the article’s comments, with page links under it', async () => {
    const listed = await api.request('GET', `${under(first)}?ordering=id&page_size=2`, { token: alice.token });
    expect(listed.json.count).toBe(3);
    expect(bodies(listed)).toEqual(['one', 'two']);
    expect(listed.json.next).toMatch(new RegExp(`/api/v1/articles/${first}/comments/\\?ordering=id&page_size=2&page=2$`));
    const next = await api.request('GET', new URL(listed.json.next).pathname + new URL(listed.json.next).search, { token: alice.token });
    expect(bodies(next)).toEqual(['three']);
    expect(bodies(await api.request('GET', under(second), { token: alice.token }))).toEqual(['elsewhere']);
  });

  it('pages by cursor within the article', async () => {
    const page = await api.request('GET', `/api/v1/articles/${first}/comment-pages/?ordering=id`, { token: alice.token });
    expect(bodies(page)).toEqual(['one', 'two']);
    expect(page.json.next).toContain(`/api/v1/articles/${first}/comment-pages/?`);
    const next = new URL(page.json.next);
    expect(bodies(await api.request('GET', next.pathname + next.search, { token: alice.token }))).toEqual(['three']);
  });

  it('keeps a fixed number of statements per list, however many comments the page holds', async () => {
    await api.request('GET', `${under(first)}?page_size=1`, { token: alice.token });
    const one = sent.length;
    sent.length = 0;
    const reply = await api.request('GET', `${under(first)}?page_size=3`, { token: alice.token });
    expect(reply.json.results).toHaveLength(3);
    expect(sent).toHaveLength(one);
    // The token, the article (its id alone, within its scope), then the count and the page: one statement on PostgreSQL, two on SQLite.
    expect(sent).toHaveLength(testDialect === 'postgres' ? 3 : 4);
    expect(sent[1]).toMatch(/^select "articles"."id" as "id"(, [^,]+)? from "articles" where/);
  });

  it('reads, updates and deletes a comment under its own article only: 404 under another, the comment unchanged', async () => {
    expect((await api.request('GET', under(first, `${comment}/`), { token: alice.token })).json.body).toBe('one');
    expect((await api.request('GET', under(second, `${comment}/`), { token: alice.token })).status).toBe(404);
    expect((await api.request('PATCH', under(second, `${comment}/`), { token: alice.token, body: { body: 'moved' } })).status).toBe(404);
    expect((await api.request('DELETE', under(second, `${comment}/`), { token: alice.token })).status).toBe(404);
    expect((await api.request('GET', under(second, `${comment}/shout/`), { token: alice.token })).status).toBe(404);
    expect((await api.request('GET', under(first, `${comment}/shout/`), { token: alice.token })).json).toEqual({ body: 'ONE', parent: first });
    const patched = await api.request('PATCH', under(first, `${comment}/`), { token: alice.token, body: { body: 'one', article_id: second } });
    expect(patched.json).toEqual({ id: comment, body: 'one', article_id: first });
  });

  it('answers 404 for an article that does not exist, 400 for a malformed article id as the article\'s own path does, and stores nothing', async () => {
    const missing = '999999';
    expect((await api.request('GET', `/api/v1/articles/${missing}/comments/`, { token: alice.token })).status).toBe(404);
    const post = await api.request('POST', `/api/v1/articles/${missing}/comments/`, { token: alice.token, body: { body: 'lost' } });
    expect(post.status).toBe(404);
    expect(post.json).toEqual({ error: 'Not found.', code: 'not_found' });
    expect((await api.request('GET', under(999999, `${comment}/`), { token: alice.token })).status).toBe(404);

    for (const malformed of ['0', 'abc', '-1', '99999999999999999999']) {
      const detail = await api.request('GET', `/api/v1/articles/${malformed}/`, { token: alice.token });
      expect(detail.status).toBe(400);
      // The same answer, its details under the nested path's parameter.
      const answer = { ...detail.json, details: { parent: detail.json.details.id } };
      for (const [method, rest] of [['GET', ''], ['POST', ''], ['POST', 'bulk/'], ['GET', `${comment}/`], ['PATCH', `${comment}/`], ['DELETE', `${comment}/`], ['GET', `${comment}/shout/`]] as const) {
        const body = method === 'GET' || method === 'DELETE' ? undefined : rest === 'bulk/' ? [{ body: 'lost' }] : { body: 'lost' };
        const reply = await api.request(method, `/api/v1/articles/${malformed}/comments/${rest}`, { token: alice.token, body });
        expect([reply.status, reply.json], `${method} ${malformed}/comments/${rest}`).toEqual([400, answer]);
      }
    }
    const stored = await api.database.db.selectFrom('comments').select('body').where('body', '=', 'lost').execute();
    expect(stored).toEqual([]);
    expect((await api.request('GET', under(first, `${comment}/`), { token: alice.token })).json.body).toBe('one');
  });

  it('answers 404 for an article outside the requester’s scope, and 401 before it to an anonymous caller', async () => {
    expect((await api.request('GET', under(first), { token: bob.token })).status).toBe(404);
    expect((await api.request('GET', under(first, `${comment}/`), { token: bob.token })).status).toBe(404);
    expect((await api.request('POST', under(first), { token: bob.token, body: { body: 'intruder' } })).status).toBe(404);
    expect((await api.request('GET', under(bobs), { token: bob.token })).json.count).toBe(0);
    expect((await api.request('GET', under(first))).status).toBe(401);
    // The cursor collection lets anonymous callers read: the scoped article is then simply not found.
    expect((await api.request('GET', `/api/v1/articles/${first}/comment-pages/`)).status).toBe(404);
  });

  it('exists only under its parent: not at the root, nor listed by it', async () => {
    expect((await api.request('GET', '/api/v1/comments/', { token: alice.token })).status).toBe(404);
    const root = await api.request('GET', '/api/v1/', { token: alice.token });
    expect(Object.keys(root.json)).toEqual(['articles']);
    const unslashed = await api.request('GET', `/api/v1/articles/${first}/comments?page=2`, { token: alice.token });
    expect(unslashed.status).toBe(308);
    expect(unslashed.headers.location).toBe(`/api/v1/articles/${first}/comments/?page=2`);
  });

  it('is documented with the parent’s path parameter', async () => {
    const { paths } = (await api.request('GET', '/api/v1/schema/')).json;
    const parentParameter = { name: 'parent', in: 'path', required: true, schema: { type: 'integer', minimum: 1 }, description: expect.stringContaining('articles') };
    for (const path of ['/api/v1/articles/{parent}/comments/', '/api/v1/articles/{parent}/comments/bulk/']) {
      expect(paths[path].post.parameters).toEqual([parentParameter]);
    }
    const detail = paths['/api/v1/articles/{parent}/comments/{id}/'];
    for (const method of ['get', 'put', 'patch', 'delete']) {
      expect(detail[method].parameters.filter((parameter: { in: string }) => parameter.in === 'path').map(({ name }: { name: string }) => name)).toEqual(['parent', 'id']);
    }
    expect(paths['/api/v1/articles/{parent}/comments/{id}/shout/'].get.parameters.map(({ name }: { name: string }) => name)).toEqual(['parent', 'id']);
    expect(paths['/api/v1/articles/{parent}/comments/'].get.responses['404']).toBeDefined();
    expect(paths['/api/v1/comments/']).toBeUndefined();
  });

  it('shows the browsable page under the parent, with breadcrumbs through it, linked from the parent record’s page', async () => {
    const page = await api.request('GET', under(first), { token: alice.token, headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.body).toContain(`href="/api/v1/articles/${first}/"`);
    expect(page.body).toContain(`data-url="/api/v1/articles/${first}/comments/"`);
    const article = await api.request('GET', `/api/v1/articles/${first}/`, { token: alice.token, headers: { accept: 'text/html' } });
    expect(article.body).toContain(`<a href="/api/v1/articles/${first}/comments/">comments</a>`);
    expect(article.body).toContain(`<a href="/api/v1/articles/${first}/comment-pages/">comment-pages</a>`);
    const list = await api.request('GET', '/api/v1/articles/', { token: alice.token, headers: { accept: 'text/html' } });
    expect(list.body).not.toContain('Nested:');
  });
});

describe('declaring a nested collection', () => {
  it('refuses a parent field the body could write, one that is no foreign key to the parent, and a parent nested itself', () => {
    const parent = { collection: articles, field: 'article_id' };
    expect(() => collection('writable', { serializer: serializer(Comment, { fields: ['id', 'body', 'article_id'] }), parent })).toThrow(/readOnly/);
    expect(() => collection('unrelated', { serializer: commentSerializer, parent: { collection: articles, field: 'body' } })).toThrow(/foreign key to articles/);
    expect(() => collection('deeper', { serializer: commentSerializer, parent: { collection: comments, field: 'article_id' } })).toThrow(/nest one level only/);
  });

  it('refuses an app that does not mount the parent', async () => {
    await expect(startApi({}, withGeneratedMigrations(defineApp({ collections: [comments], models: [Article] })))).rejects.toThrow(/not among the app's collections/);
  });
});
