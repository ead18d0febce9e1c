import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collection, defineApp } from '../../src/framework/index.js';
import { articles } from '../../src/service/articles.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

let api: TestApi;
let alice: TestUser;

beforeEach(async () => {
  api = await startApi();
  alice = await api.user('alice', { superuser: true });
});
afterEach(() => api.close());

const post = (url: string, body: unknown) => api.request('POST', url, { token: alice.token, body });
const countArticles = async () => (await api.request('GET', '/api/v1/articles/', { token: alice.token })).json.count;

describe('bulk create', () => {
  it('creates every record of an array in one request, in order', async () => {
    const reply = await post('/api/v1/articles/', [{ title: 'One' }, { title: 'Two', body: 'b' }, { title: 'Three' }]);
    expect(reply.status).toBe(201);
    expect(reply.json.map((article: { title: string }) => article.title)).toEqual(['One', 'Two', 'Three']);
    expect(reply.json[1]).toMatchObject({ body: 'b', author: { id: alice.id, username: 'alice' } });
    expect(await countArticles()).toBe(3);
  });

  it('is all or nothing, with errors keyed by index', async () => {
    const reply = await post('/api/v1/articles/', [{ title: 'Fine' }, { body: 'no title' }, { title: 'x'.repeat(201) }, 'nope']);
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('validation_failed');
    expect(reply.json.details).toEqual({
      '1.title': ['This field is required.'],
      '2.title': ['Ensure this field has no more than 200 characters.'],
      '3.non_field_errors': ['Expected a JSON object.'],
    });
    expect(await countArticles()).toBe(0);
  });

  it('rolls back the records already stored when a later one fails in the database', async () => {
    const db = api.database.db;
    // A storage failure on the third record only, after two were inserted in the same transaction.
    if (api.database.dialect === 'postgres') {
      await sql`CREATE FUNCTION refuse_boom() RETURNS trigger AS $$ BEGIN IF NEW.title = 'boom' THEN RAISE EXCEPTION 'disk fault'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`.execute(db);
      await sql`CREATE TRIGGER refuse_boom BEFORE INSERT ON articles FOR EACH ROW EXECUTE FUNCTION refuse_boom()`.execute(db);
    } else {
      await sql`CREATE TRIGGER refuse_boom BEFORE INSERT ON articles WHEN NEW.title = 'boom' BEGIN SELECT RAISE(ABORT, 'disk fault'); END`.execute(db);
    }
    const reply = await post('/api/v1/articles/', [{ title: 'A' }, { title: 'B' }, { title: 'boom' }]);
    expect(reply.status).toBe(500);
    expect(await countArticles()).toBe(0);
  });

  it('answers 413 above the maximum, and 400 for an empty array', async () => {
    const tooMany = await post('/api/v1/articles/', Array.from({ length: 101 }, (_, i) => ({ title: `T${i}` })));
    expect(tooMany.status).toBe(413);
    expect(tooMany.json.code).toBe('payload_too_large');
    expect((await post('/api/v1/articles/', [])).status).toBe(400);
    expect(await countArticles()).toBe(0);
    expect((await post('/api/v1/articles/', Array.from({ length: 100 }, (_, i) => ({ title: `T${i}` })))).status).toBe(201);
  });

  it('stays a parse_error on collections without bulk create', async () => {
    const reply = await post('/api/v1/users/', [{ username: 'x', password: 'y' }]);
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('parse_error');
  });
});

describe('Prefer: count', () => {
  beforeEach(async () => {
    await post('/api/v1/articles/', Array.from({ length: 5 }, (_, i) => ({ title: `T${i}` })));
  });
  const list = (query: string, prefer?: string) =>
    api.request('GET', `/api/v1/articles/${query}`, { token: alice.token, headers: prefer ? { prefer } : {} });

  it('counts exactly by default, without Preference-Applied', async () => {
    const reply = await list('?page_size=2');
    expect(reply.json.count).toBe(5);
    expect(reply.headers['preference-applied']).toBeUndefined();
  });

  it('answers count=none with a null count and still-right links', async () => {
    const first = await list('?page_size=2', 'count=none');
    expect(first.headers['preference-applied']).toBe('count=none');
    expect(first.json.count).toBeNull();
    expect(first.json.next).toContain('page=2');
    const last = await list('?page_size=2&page=3', 'count=none');
    expect(last.json.results).toHaveLength(1);
    expect(last.json.next).toBeNull();
    expect(last.json.previous).toContain('page=2');
    const exact = await list('?page_size=5', 'count=none');
    expect(exact.json.next).toBeNull();
    expect((await list('?page_size=2&page=4', 'count=none')).status).toBe(404);
  });

  it('answers count=estimated, exactly below the threshold', async () => {
    const reply = await list('?page_size=2', 'count=estimated');
    expect(reply.headers['preference-applied']).toBe('count=estimated');
    expect(reply.json.count).toBe(5);
    expect(reply.json.next).toContain('page=2');
  });

  it('takes the planner estimate above the threshold on PostgreSQL (SQLite has none, so counts exactly)', async () => {
    const eager = withGeneratedMigrations(
      defineApp({ collections: [collection('articles', { serializer: articles.serializer, countModes: ['estimated'], estimateThreshold: 1 })] }),
    );
    const estimating = await startApi({}, eager);
    try {
      const user = await estimating.user('reader');
      const reply = await estimating.request('GET', '/api/v1/articles/', { token: user.token, headers: { prefer: 'count=estimated' } });
      expect(reply.headers['preference-applied']).toBe('count=estimated');
      if (estimating.database.dialect === 'sqlite') expect(reply.json.count).toBe(0);
      else expect(reply.json.count).toBeGreaterThanOrEqual(1); // an empty, never-analysed table is estimated from its size
    } finally {
      await estimating.close();
    }
  });

  it('ignores a preference the collection does not allow, or does not know', async () => {
    const users = await api.request('GET', '/api/v1/users/', { token: alice.token, headers: { prefer: 'count=bogus' } });
    expect(users.json.count).toBe(1);
    expect(users.headers['preference-applied']).toBeUndefined();
  });
});
