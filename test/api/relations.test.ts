/**
 * Relations through HTTP, in a test app over the example service's tables (whose own records show
 * none: the contract fixes them): articles filed under tags (`tags`, a many-to-many through the
 * framework's join table, written and shown as tag ids, filtered by tag), users listing their
 * articles (`articles`, a reverse relation, read-only), and a filter across the nested author
 * (`author__username`).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { User, anyOf, collection, defineApp, hasPermission, isAuthenticated, isOwner, joinTable, relations, serializer } from '../../src/framework/index.js';
import service from '../../src/service/app.js';
import { Article } from '../../src/service/articles.js';
import { tags } from '../../src/service/tags.js';
import { userSummarySerializer } from '../../src/service/users.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const authorOr = (permission: string) => [anyOf(hasPermission(permission), isOwner('author_id'))];
const filedUnderTags = collection('articles', {
  serializer: serializer(Article, {
    fields: ['id', 'title', 'body', 'author', 'author_id', 'tags', 'created_at'],
    readOnly: ['id', 'created_at'],
    search: ['title', 'body'],
    nested: { author: { source: 'author_id', serializer: userSummarySerializer } },
    relations: { tags: relations.manyToMany(joinTable('articles', 'tags')) },
  }),
  filterFields: ['author_id', 'author__username', 'tags', 'title'],
  orderingFields: ['title'],
  bulkCreate: { max: 100 },
  permissions: { create: [isAuthenticated], update: authorOr('articles.change'), partial_update: authorOr('articles.change'), destroy: authorOr('articles.delete') },
});
const listingTheirArticles = collection('users', {
  serializer: serializer(User, {
    fields: ['id', 'username', 'email', 'is_active', 'date_joined', 'password', 'articles'],
    readOnly: ['id', 'date_joined'],
    hidden: ['password'],
    relations: { articles: relations.reverse('articles', 'author_id') },
  }),
  filterFields: ['username'],
  permissions: { partial_update: [anyOf(hasPermission('users.change'), isOwner('id'))] },
});
const app = withGeneratedMigrations(defineApp({ ...service, collections: [listingTheirArticles, filedUnderTags, tags] }));

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
const sent: string[] = [];
let tagCount = 0;

beforeAll(async () => {
  api = await startApi({}, app, { appDatabase: recording(sent) });
  alice = await api.user('alice');
  bob = await api.user('bob');
});
afterAll(() => api.close());
beforeEach(() => {
  sent.length = 0;
});

async function tag(name = `tag-${++tagCount}`): Promise<number> {
  const reply = await api.request('POST', '/api/v1/tags/', { token: alice.token, body: { name } });
  expect(reply.status).toBe(201);
  return reply.json.id;
}

async function article(body: Record<string, unknown>, user = alice) {
  return api.request('POST', '/api/v1/articles/', { token: user.token, body: { title: 'An article', ...body } });
}

const articles = async (query: string) => (await api.request('GET', `/api/v1/articles/${query}`, { token: bob.token })).json;
const titles = async (query: string) => (await articles(query)).results.map((record: { title: string }) => record.title);

describe('tags', () => {
  it('are created by any authenticated user, with unique names', async () => {
    const reply = await api.request('POST', '/api/v1/tags/', { token: bob.token, body: { name: 'dragons' } });
    expect(reply.status).toBe(201);
    expect(reply.json).toEqual({ id: reply.json.id, name: 'dragons' });
    const again = await api.request('POST', '/api/v1/tags/', { token: bob.token, body: { name: 'dragons' } });
    expect(again.status).toBe(400);
    expect(Object.keys(again.json.details)).toEqual(['name']);
    expect((await api.request('GET', '/api/v1/tags/?name=dragons', { token: bob.token })).json.results).toEqual([reply.json]);
  });
});

describe("articles' tags (many-to-many)", () => {
  it('are written as a list of ids and shown as the ids, ascending and each once', async () => {
    const [first, second] = [await tag(), await tag()];
    const reply = await article({ tags: [second, first, second] });
    expect(reply.status).toBe(201);
    expect(reply.json.tags).toEqual([first, second]);
    const read = await api.request('GET', `/api/v1/articles/${reply.json.id}/`, { token: bob.token });
    expect(read.json.tags).toEqual([first, second]);
    expect((await articles(`?tags=${first}`)).results).toEqual([read.json]);
  });

  it('are empty when not sent on create, kept when left out of a PUT or PATCH, replaced when sent, cleared by []', async () => {
    const [first, second, third] = [await tag(), await tag(), await tag()];
    const created = await article({});
    expect(created.json.tags).toEqual([]);
    const url = `/api/v1/articles/${created.json.id}/`;
    const patch = (body: Record<string, unknown>) => api.request('PATCH', url, { token: alice.token, body });
    expect((await patch({ tags: [first, second] })).json.tags).toEqual([first, second]);
    expect((await patch({ title: 'Renamed' })).json).toMatchObject({ title: 'Renamed', tags: [first, second] });
    const put = await api.request('PUT', url, { token: alice.token, body: { title: 'Put' } });
    expect(put.json).toMatchObject({ title: 'Put', tags: [first, second] });
    expect((await patch({ tags: [third] })).json.tags).toEqual([third]);
    expect((await patch({ tags: [] })).json.tags).toEqual([]);
    expect((await api.request('GET', url, { token: alice.token })).json.tags).toEqual([]);
  });

  it('refuses ids of no tag with a 400 naming them, and stores nothing of the write', async () => {
    const known = await tag();
    const before = (await articles('')).count;
    const refused = await article({ title: 'Refused', tags: [known, 999_998, 999_999] });
    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe('validation_failed');
    expect(refused.json.details).toEqual({ tags: ['Invalid ids 999998, 999999: no such tags.'] });
    expect((await articles('')).count).toBe(before);

    const created = (await article({ title: 'Kept', tags: [known] })).json;
    const url = `/api/v1/articles/${created.id}/`;
    const patched = await api.request('PATCH', url, { token: alice.token, body: { title: 'Changed', tags: [999_999] } });
    expect(patched.status).toBe(400);
    expect(patched.json.details).toEqual({ tags: ['Invalid id 999999: no such tags.'] });
    expect((await api.request('GET', url, { token: alice.token })).json).toMatchObject({ title: 'Kept', tags: [known] });
  });

  it('refuses what is no list of ids, by field', async () => {
    for (const tags of ['1', 1, null, { id: 1 }, [1.5], ['1'], [null], [true], Array.from({ length: 1001 }, (_, index) => index + 1)]) {
      const reply = await article({ tags });
      expect(reply.status, JSON.stringify(tags).slice(0, 40)).toBe(400);
      expect(Object.keys(reply.json.details)).toEqual(['tags']);
    }
  });

  it('are written with each record of a bulk create, all or nothing', async () => {
    const [first, second] = [await tag(), await tag()];
    const bulk = (body: unknown) => api.request('POST', '/api/v1/articles/', { token: alice.token, body });
    const created = await bulk([
      { title: 'Bulk one', tags: [first] },
      { title: 'Bulk two', tags: [first, second] },
    ]);
    expect(created.status).toBe(201);
    expect(created.json.map((record: { tags: number[] }) => record.tags)).toEqual([[first], [first, second]]);
    const refused = await bulk([
      { title: 'Bulk three', tags: [first] },
      { title: 'Bulk four', tags: [999_999] },
    ]);
    expect(refused.status).toBe(400);
    expect(refused.json.details).toEqual({ '1.tags': ['Invalid id 999999: no such tags.'] });
    expect(await titles('?search=Bulk&ordering=title')).toEqual(['Bulk one', 'Bulk two']);
  });

  it('lose a tag when it is deleted', async () => {
    const [kept, removed] = [await tag(), await tag()];
    const created = (await article({ tags: [kept, removed] })).json;
    const admin = await api.user('tag-admin', { permissions: ['tags.delete'] });
    expect((await api.request('DELETE', `/api/v1/tags/${removed}/`, { token: bob.token })).status).toBe(403);
    expect((await api.request('DELETE', `/api/v1/tags/${removed}/`, { token: admin.token })).status).toBe(204);
    expect((await api.request('GET', `/api/v1/articles/${created.id}/`, { token: bob.token })).json.tags).toEqual([kept]);
  });

  it('filter as tags=<id> and tags__in=, each article once; other lookups and bad ids are 400', async () => {
    const [red, blue, green] = [await tag(), await tag(), await tag()];
    await article({ title: 'Red', tags: [red] });
    await article({ title: 'Red and blue', tags: [red, blue] });
    await article({ title: 'Green', tags: [green] });
    expect(await titles(`?tags=${red}&ordering=title`)).toEqual(['Red', 'Red and blue']);
    expect(await titles(`?tags=${red}&tags__in=${blue}`)).toEqual(['Red and blue']);
    const either = await articles(`?tags__in=${red},${blue}&ordering=title`);
    expect(either.count).toBe(2);
    expect(either.results.map((record: { title: string }) => record.title)).toEqual(['Red', 'Red and blue']);
    expect(await titles(`?tags__in=${green},999999`)).toEqual(['Green']);
    expect(await titles('?tags=999999')).toEqual([]);
    for (const [query, field] of [
      ['tags=red', 'tags'],
      ['tags__in=1,x', 'tags__in'],
      ['tags__gt=1', 'tags__gt'],
      ['tags__isnull=true', 'tags__isnull'],
    ]) {
      const reply = await api.request('GET', `/api/v1/articles/?${query}`, { token: bob.token });
      expect(reply.status, query).toBe(400);
      expect(Object.keys(reply.json.details)).toEqual([field]);
    }
  });
});

describe('a many-to-many bounded by maxItems', () => {
  it('is declared from 1 to 1000 items (the default), or refused at once', () => {
    for (const maxItems of [0, 1001, 2.5]) {
      expect(() => relations.manyToMany(joinTable('articles', 'tags'), { maxItems })).toThrow(/maxItems from 1 to 1000/);
    }
  });
});

describe("users' articles (reverse)", () => {
  it('are the ids of the articles the user wrote, ascending, and read-only', async () => {
    const carol = await api.user('carol');
    const url = `/api/v1/users/${carol.id}/`;
    expect((await api.request('GET', url, { token: bob.token })).json.articles).toEqual([]);
    const first = (await article({ title: 'By carol' }, carol)).json.id;
    const second = (await article({ title: 'By carol again' }, carol)).json.id;
    await article({ title: 'By alice' });
    expect((await api.request('GET', url, { token: bob.token })).json.articles).toEqual([first, second]);
    const listed = await api.request('GET', `/api/v1/users/?username=carol`, { token: bob.token });
    expect(listed.json.results[0].articles).toEqual([first, second]);
    // Read-only: ignored when sent, as `id` is.
    const patched = await api.request('PATCH', url, { token: carol.token, body: { articles: [1], email: 'carol@example.com' } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ email: 'carol@example.com', articles: [first, second] });
    expect((await api.request('DELETE', `/api/v1/articles/${first}/`, { token: carol.token })).status).toBe(204);
    expect((await api.request('GET', url, { token: bob.token })).json.articles).toEqual([second]);
  });
});

describe('filters across the nested author', () => {
  it('match author__username with its lookups, through EXISTS, bound', async () => {
    const dave = await api.user('dave');
    await article({ title: 'Dave writes' }, dave);
    expect(await titles('?author__username=dave')).toEqual(['Dave writes']);
    expect(await titles('?author__username__iexact=DAVE')).toEqual(['Dave writes']);
    expect(await titles('?author__username__in=dave,nobody')).toEqual(['Dave writes']);
    expect(await titles("?author__username=dave' or '1'='1")).toEqual([]);
    expect(sent.some((statement) => /exists \(select 1 from "users" as "across_author__username"/.test(statement))).toBe(true);
    const unknown = await api.request('GET', '/api/v1/articles/?author__email=dave@example.com', { token: bob.token });
    expect(unknown.status).toBe(400);
    expect(unknown.json.details.author__email[0]).toContain('Unknown filter field');
  });
});

describe('the OpenAPI document', () => {
  it('types tags and articles as lists of ids, tags writable, and documents the relation filters', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    const schemas = document.components.schemas;
    const ids = { type: 'array', items: { type: 'integer', format: 'int64' }, maxItems: 1000 };
    expect(schemas.Article.properties.tags).toEqual(ids);
    expect(schemas.ArticleCreate.properties.tags).toEqual(ids);
    expect(schemas.ArticleCreate.required).not.toContain('tags');
    expect(schemas.ArticlePartialUpdate.properties.tags).toEqual(ids);
    expect(schemas.User.properties.articles).toEqual({ ...ids, readOnly: true });
    expect(schemas.UserCreate.properties.articles).toEqual({ description: 'Read-only: ignored when sent.' });
    const parameters = document.paths['/api/v1/articles/'].get.parameters.map((parameter: { name: string }) => parameter.name);
    expect(parameters).toEqual(expect.arrayContaining(['tags', 'tags__in', 'author__username', 'author__username__icontains']));
    expect(parameters).not.toContain('tags__gt');
  });
});

describe('a list of records with 100 related rows each way', () => {
  it('is read in as many statements as a list of one', async () => {
    const erin = await api.user('erin');
    const [first, second] = [await tag(), await tag()];
    const records = Array.from({ length: 100 }, (_, index) => ({ title: `Erin ${index}`, tags: [first, second] }));
    expect((await api.request('POST', '/api/v1/articles/', { token: erin.token, body: records })).status).toBe(201);
    const statementsOf = async (url: string) => {
      sent.length = 0;
      const reply = await api.request('GET', url, { token: bob.token });
      expect(reply.status).toBe(200);
      return { reply, statements: sent.length };
    };
    const one = await statementsOf(`/api/v1/articles/?author_id=${erin.id}&page_size=1`);
    const hundred = await statementsOf(`/api/v1/articles/?author_id=${erin.id}&page_size=100`);
    expect(hundred.reply.json.results).toHaveLength(100);
    expect(hundred.reply.json.results.every((record: { tags: number[] }) => record.tags.join() === `${first},${second}`)).toBe(true);
    expect(hundred.statements).toBe(one.statements);

    const byTag = await statementsOf(`/api/v1/articles/?tags=${first}&page_size=100`);
    expect(byTag.reply.json.count).toBe(100);
    expect(byTag.statements).toBe(one.statements);

    const user = await statementsOf(`/api/v1/users/?username=erin`);
    expect(user.reply.json.results[0].articles).toHaveLength(100);
    const someUsers = await statementsOf(`/api/v1/users/?page_size=100`);
    expect(someUsers.statements).toBe(user.statements);
  });
});
