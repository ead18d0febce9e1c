import type { KyselyPlugin } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp, loadConfig } from '../../src/framework/index.js';
import service from '../../src/service/app.js';
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

async function write(user: TestUser, title: string, extra: Record<string, unknown> = {}) {
  return api.request('POST', '/api/v1/articles/', { token: user.token, body: { title, body: `About ${title}`, ...extra } });
}

describe('articles', () => {
  it('renders the author nested, and defaults author_id to the requesting user', async () => {
    const reply = await write(alice, 'First');
    expect(reply.status).toBe(201);
    expect(reply.json).toEqual({
      id: reply.json.id,
      title: 'First',
      body: 'About First',
      author: { id: alice.id, username: 'alice' },
      author_id: alice.id,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    const listed = await api.request('GET', '/api/v1/articles/', { token: bob.token });
    expect(listed.json.results).toEqual([reply.json]);
  });

  it('writes the author through author_id, which must name an existing user', async () => {
    const editor = await api.user('editor', { permissions: ['articles.change'] });
    const forBob = await write(editor, 'For Bob', { author_id: bob.id });
    expect(forBob.json.author).toEqual({ id: bob.id, username: 'bob' });
    const missing = await write(editor, 'Ghost', { author_id: 999 });
    expect(missing.status).toBe(400);
    expect(missing.json.details.author_id).toEqual(['Invalid id "999": object does not exist.']);
    const wrongType = await write(alice, 'Typed', { author_id: 'bob' });
    expect(wrongType.json.details.author_id).toEqual(['A valid integer is required.']);
  });

  it('ignores the nested author object in a body (it is read-only)', async () => {
    const reply = await write(alice, 'Nested', { author: { id: bob.id, username: 'bob' } });
    expect(reply.status).toBe(201);
    expect(reply.json.author_id).toBe(alice.id);
  });

  it('validates the title', async () => {
    expect((await write(alice, '')).json.details.title).toEqual(['This field may not be blank.']);
    expect((await write(alice, 'x'.repeat(201))).json.details.title).toEqual(['Ensure this field has no more than 200 characters.']);
    expect((await write(alice, '€'.repeat(200))).status).toBe(201);
    const noTitle = await api.request('POST', '/api/v1/articles/', { token: alice.token, body: { body: 'b' } });
    expect(noTitle.json.details).toEqual({ title: ['This field is required.'] });
  });

  it('filters on author_id, title and created_at; searches title and body; orders by created_at and title', async () => {
    const created = [await write(alice, 'Banana bread'), await write(bob, 'apple pie'), await write(alice, 'Cherry tart', { body: 'with apples' })];
    const today = new Date().toISOString().slice(0, 10);
    for (const [index, reply] of created.entries()) {
      // Distinct instants, so the order does not rest on the clock's resolution.
      const createdAt = `${today}T0${index}:00:00.000Z`;
      await api.database.db.updateTable('articles').set({ created_at: createdAt }).where('id', '=', reply.json.id).execute();
    }
    const titles = async (query: string) =>
      (await api.request('GET', `/api/v1/articles/${query}`, { token: alice.token })).json.results.map((a: { title: string }) => a.title);
    expect(await titles(`?author_id=${alice.id}`)).toEqual(['Banana bread', 'Cherry tart']);
    expect(await titles('?title__icontains=BREAD')).toEqual(['Banana bread']);
    expect(await titles('?search=apple')).toEqual(['apple pie', 'Cherry tart']);
    const searched = await api.request('GET', '/api/v1/articles/?search=apple&ordering=-created_at', { token: alice.token });
    expect(searched.json.results.map((a: { title: string; author: { username: string } }) => [a.title, a.author.username])).toEqual([
      ['Cherry tart', 'alice'],
      ['apple pie', 'bob'],
    ]);
    expect(await titles('?ordering=title')).toEqual(['Banana bread', 'Cherry tart', 'apple pie']);
    expect(await titles('?ordering=-created_at')).toEqual(['Cherry tart', 'apple pie', 'Banana bread']);
    expect(await titles(`?created_at=${today}`)).toHaveLength(3);
    expect(await titles(`?created_at__gte=${today}T01:00:00Z`)).toEqual(['apple pie', 'Cherry tart']);
    const bad = await api.request('GET', '/api/v1/articles/?body=x', { token: alice.token });
    expect(bad.status).toBe(400);
    expect(bad.json.details.body[0]).toContain('Allowed: author_id, title, created_at');
  });

  it('lets only the author, or a holder of articles.change / articles.delete, change or delete', async () => {
    const article = (await write(alice, 'Mine')).json;
    const url = `/api/v1/articles/${article.id}/`;
    expect((await api.request('PATCH', url, { token: bob.token, body: { title: 'Stolen' } })).status).toBe(403);
    expect((await api.request('PUT', url, { token: bob.token, body: { title: 'Stolen' } })).status).toBe(403);
    expect((await api.request('DELETE', url, { token: bob.token })).status).toBe(403);
    expect((await api.request('GET', url, { token: bob.token })).json.title).toBe('Mine');

    expect((await api.request('PATCH', url, { token: alice.token, body: { title: 'Still mine' } })).json.title).toBe('Still mine');

    const editor = await api.user('editor', { permissions: ['articles.change'] });
    expect((await api.request('PATCH', url, { token: editor.token, body: { title: 'Edited' } })).status).toBe(200);
    expect((await api.request('DELETE', url, { token: editor.token })).status).toBe(403);
    const janitor = await api.user('janitor', { permissions: ['articles.delete'] });
    expect((await api.request('DELETE', url, { token: janitor.token })).status).toBe(204);
  });

  it('needs authentication for every action', async () => {
    const article = (await write(alice, 'Private')).json;
    for (const [method, url] of [
      ['GET', '/api/v1/articles/'],
      ['POST', '/api/v1/articles/'],
      ['GET', `/api/v1/articles/${article.id}/`],
      ['PATCH', `/api/v1/articles/${article.id}/`],
      ['DELETE', `/api/v1/articles/${article.id}/`],
    ] as const) {
      const reply = await api.request(method, url, { body: method === 'PATCH' || method === 'POST' ? { title: 'x' } : undefined });
      expect(reply.status, `${method} ${url}`).toBe(401);
      expect(reply.headers['www-authenticate']).toBe('Bearer');
    }
  });
});

describe('articles list cost', () => {
  it('runs the same number of queries whatever the page size (no N+1)', async () => {
    for (let i = 0; i < 30; i++) await write(i % 2 ? alice : bob, `Article ${i}`);
    let queries = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        queries += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const counted = { ...api.database, db: api.database.db.withPlugin(counting) };
    const app = await buildApp(service, { database: counted, config: loadConfig({ THROTTLE_USER: 'off', LOG_LEVEL: 'silent' }) });
    const costOf = async (pageSize: number): Promise<number> => {
      queries = 0;
      const reply = await app.inject({
        url: `/api/v1/articles/?page_size=${pageSize}`,
        headers: { authorization: `Bearer ${alice.token}` },
      });
      expect(reply.json().results).toHaveLength(pageSize);
      return queries;
    };
    const small = await costOf(1);
    expect(small).toBeLessThanOrEqual(3);
    expect(await costOf(10)).toBe(small);
    expect(await costOf(30)).toBe(small);
    await app.close();
  });
});
