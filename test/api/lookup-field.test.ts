/**
 * A collection's lookup field (`lookupField: 'slug'`): detail paths, updates, deletes, custom detail
 * actions, conditional requests, `Location` and the OpenAPI path parameter name records by it; a
 * value one of the collection's own paths takes (`bulk/`, a list action) is refused on write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Entry = model('kb_entries', {
  id: fields.id(),
  slug: fields.string({ maxLength: 40, unique: true }),
  title: fields.string({ maxLength: 100 }),
});

const entries = serializer(Entry, { fields: ['id', 'slug', 'title'], readOnly: ['id'] });

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('kb', {
        serializer: entries,
        lookupField: 'slug',
        bulkCreate: { max: 5 },
        actions: {
          stats: { detail: false, method: 'GET', handler: () => ({ stats: true }) },
          shout: { detail: true, method: 'GET', handler: ({ record }) => ({ title: String(record!.title).toUpperCase() }) },
        },
      }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;

beforeAll(async () => {
  api = await startApi({}, app);
  alice = await api.user('alice');
});
afterAll(() => api.close());

const create = (body: unknown) => api.request('POST', '/api/v1/kb/', { token: alice.token, body });

describe('a collection looked up by slug', () => {
  it('creates a record whose Location and detail path name it by its slug', async () => {
    const created = await create({ slug: 'hello-world', title: 'Hello' });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe('http://localhost/api/v1/kb/hello-world/');
    const read = await api.request('GET', '/api/v1/kb/hello-world/', { token: alice.token });
    expect(read.status).toBe(200);
    expect(read.json).toEqual({ id: created.json.id, slug: 'hello-world', title: 'Hello' });
    // The id is no longer a path: no record has the slug "<id>".
    expect((await api.request('GET', `/api/v1/kb/${created.json.id}/`, { token: alice.token })).status).toBe(404);
  });

  it('percent-encodes the slug in Location, and decodes it in the path', async () => {
    const created = await create({ slug: 'café au lait', title: 'Coffee' });
    expect(created.headers.location).toBe('http://localhost/api/v1/kb/caf%C3%A9%20au%20lait/');
    const read = await api.request('GET', '/api/v1/kb/caf%C3%A9%20au%20lait/', { token: alice.token });
    expect(read.json.title).toBe('Coffee');
  });

  it('answers 404 for a path no slug can be (longer than the field allows)', async () => {
    const reply = await api.request('GET', `/api/v1/kb/${'x'.repeat(41)}/`, { token: alice.token });
    expect(reply.status).toBe(404);
    expect(reply.json.code).toBe('not_found');
  });

  it('updates by slug, honouring If-Match and If-None-Match, and may change the slug itself', async () => {
    await create({ slug: 'draft', title: 'Draft' });
    const read = await api.request('GET', '/api/v1/kb/draft/', { token: alice.token });
    const etag = String(read.headers.etag);
    const unchanged = await api.request('GET', '/api/v1/kb/draft/', { token: alice.token, headers: { 'If-None-Match': etag } });
    expect(unchanged.status).toBe(304);
    const stale = await api.request('PATCH', '/api/v1/kb/draft/', { token: alice.token, body: { title: 'x' }, headers: { 'If-Match': '"stale"' } });
    expect(stale.status).toBe(412);
    const renamed = await api.request('PATCH', '/api/v1/kb/draft/', { token: alice.token, body: { slug: 'final' }, headers: { 'If-Match': etag } });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({ slug: 'final', title: 'Draft' });
    expect((await api.request('GET', '/api/v1/kb/draft/', { token: alice.token })).status).toBe(404);
    const replaced = await api.request('PUT', '/api/v1/kb/final/', { token: alice.token, body: { slug: 'final', title: 'Final' } });
    expect(replaced.json.title).toBe('Final');
  });

  it('runs custom detail actions on the record the slug names', async () => {
    await create({ slug: 'loud', title: 'quiet words' });
    const reply = await api.request('GET', '/api/v1/kb/loud/shout/', { token: alice.token });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ title: 'QUIET WORDS' });
    expect((await api.request('GET', '/api/v1/kb/nobody/shout/', { token: alice.token })).status).toBe(404);
  });

  it('deletes by slug', async () => {
    await create({ slug: 'gone', title: 'Gone' });
    expect((await api.request('DELETE', '/api/v1/kb/gone/', { token: alice.token })).status).toBe(204);
    expect((await api.request('GET', '/api/v1/kb/gone/', { token: alice.token })).status).toBe(404);
    expect((await api.request('DELETE', '/api/v1/kb/gone/', { token: alice.token })).status).toBe(404);
  });

  it('refuses a slug that one of the collection’s own paths takes, on create, bulk create and update', async () => {
    for (const slug of ['bulk', 'stats']) {
      const reply = await create({ slug, title: 'Shadowed' });
      expect(reply.status).toBe(400);
      expect(reply.json.code).toBe('validation_failed');
      expect(reply.json.details.slug[0]).toContain(`/kb/${slug}/`);
    }
    const bulk = await api.request('POST', '/api/v1/kb/bulk/', { token: alice.token, body: [{ slug: 'fine', title: 'Fine' }, { slug: 'stats', title: 'No' }] });
    expect(bulk.status).toBe(400);
    expect(Object.keys(bulk.json.details)).toEqual(['1.slug']);
    expect((await api.request('GET', '/api/v1/kb/fine/', { token: alice.token })).status).toBe(404);
    await create({ slug: 'movable', title: 'Movable' });
    const moved = await api.request('PATCH', '/api/v1/kb/movable/', { token: alice.token, body: { slug: 'bulk' } });
    expect(moved.status).toBe(400);
    expect(moved.json.details.slug).toHaveLength(1);
    // The paths themselves still answer as before.
    expect((await api.request('GET', '/api/v1/kb/stats/', { token: alice.token })).json).toEqual({ stats: true });
    expect((await api.request('POST', '/api/v1/kb/bulk/', { token: alice.token, body: [{ slug: 'b1', title: 'B' }] })).status).toBe(201);
  });

  it('names the path parameter after the lookup field in the OpenAPI document', async () => {
    const { paths } = (await api.request('GET', '/api/v1/schema/')).json;
    expect(paths['/api/v1/kb/{id}/']).toBeUndefined();
    for (const path of ['/api/v1/kb/{slug}/', '/api/v1/kb/{slug}/shout/']) {
      const [parameter] = paths[path].get.parameters.filter((p: { in: string }) => p.in === 'path');
      expect(parameter).toMatchObject({ name: 'slug', required: true, schema: { type: 'string', maxLength: 40 } });
    }
  });

  it('shows the slug in the browsable page’s title', async () => {
    await create({ slug: 'titled', title: 'Titled' });
    const page = await api.request('GET', '/api/v1/kb/titled/', { token: alice.token, headers: { Accept: 'text/html' } });
    expect(page.body).toContain('<title>kb titled');
  });
});

describe('declaring a lookup field', () => {
  it('refuses at start-up a field that is not unique, or no field', () => {
    expect(() => collection('kb2', { serializer: entries, lookupField: 'title' })).toThrow(/must be a unique, not nullable/);
    expect(() => collection('kb2', { serializer: entries, lookupField: 'nope' })).toThrow(/no field/);
  });
});
