/**
 * A collection's record key (`recordKey: 'slug'`): detail paths, updates, deletes, custom detail
 * actions, conditional requests, `Location` and the OpenAPI path parameter name records by it; a
 * value one of the collection's own paths takes (`bulk/`, a list action) is refused on write.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { collection, computed, defineApp, fields, joinTable, model, relations, serializer } from '../../src/framework/index.js';
import { servedWithUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Entry = model('kb_entries', {
  id: fields.id(),
  slug: fields.string({ maxLength: 40, unique: true }),
  title: fields.string({ maxLength: 100 }),
});

/** Looked up by a slug it makes itself and does not show, within a scope (a create is read again through it). */
const Tag = model('kb_tags', {
  id: fields.id(),
  slug: fields.string({ maxLength: 40, unique: true, default: () => `tag-${randomBytes(4).toString('hex')}` }),
  name: fields.string({ maxLength: 40 }),
  hidden: fields.boolean({ default: false }),
});

const entries = serializer(Entry, { fields: ['id', 'slug', 'title'], readOnly: ['id'] });

/** Looked up by slug, with links to entries (a many-to-many) and their count. */
const Shelf = model('kb_shelves', { id: fields.id(), slug: fields.slug({ unique: true }), name: fields.string({ maxLength: 40 }) });
const shelfEntries = joinTable('kb_shelves', 'kb_entries');
const shelves = serializer(Shelf, {
  fields: ['id', 'slug', 'name', 'entries', 'entry_count'],
  readOnly: ['id'],
  relations: { entries: relations.manyToMany(shelfEntries) },
  computed: { entry_count: computed.count(shelfEntries.table, shelfEntries.from) },
});

const Topic = model('kb_topics', { id: fields.id(), name: fields.string({ maxLength: 40, unique: true }) });
/** The same entries, filed under topics by id and by name. */
const filed = serializer(Entry, {
  name: 'FiledEntry',
  fields: ['id', 'slug', 'title', 'topics', 'topic_names'],
  relations: {
    topics: relations.manyToMany(joinTable('kb_entries', 'kb_topics')),
    topic_names: relations.manyToMany(joinTable('kb_entries', 'kb_topics'), { slug: { target: Topic, field: 'name' } }),
  },
});

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('kb', {
        serializer: entries,
        recordKey: 'slug',
        bulkCreate: { max: 5 },
        actions: {
          stats: { detail: false, method: 'GET', handler: () => ({ stats: true }) },
          shout: { detail: true, method: 'GET', handler: ({ record }) => ({ title: String(record!.title).toUpperCase() }) },
        },
      }),
      collection('kb-shelves', { serializer: shelves, recordKey: 'slug' }),
      collection('kb-tags', { serializer: serializer(Tag, { fields: ['id', 'name'] }), recordKey: 'slug', scope: () => ({ hidden: false }) }),
      collection('kb-filed', { serializer: filed, recordKey: 'slug' }),
      collection('kb-topics', { serializer: serializer(Topic, { fields: ['id', 'name'] }) }),
    ],
  }),
);

const served = servedWithUser(app, 'alice');

const create = (body: unknown) => served.api.request('POST', '/api/v1/kb/', { token: served.user.token, body });

describe('a collection looked up by slug', () => {
  it('creates a record whose Location and detail path name it by its slug', async () => {
    const created = await create({ slug: 'hello-world', title: 'Hello' });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe('http://localhost/api/v1/kb/hello-world/');
    const read = await served.api.request('GET', '/api/v1/kb/hello-world/', { token: served.user.token });
    expect(read.status).toBe(200);
    expect(read.json).toEqual({ id: created.json.id, slug: 'hello-world', title: 'Hello' });
    // The id is no longer a path: no record has the slug "<id>".
    expect((await served.api.request('GET', `/api/v1/kb/${created.json.id}/`, { token: served.user.token })).status).toBe(404);
  });

  it('percent-encodes the slug in Location, and decodes it in the path', async () => {
    const created = await create({ slug: 'café au lait', title: 'Coffee' });
    expect(created.headers.location).toBe('http://localhost/api/v1/kb/caf%C3%A9%20au%20lait/');
    const read = await served.api.request('GET', '/api/v1/kb/caf%C3%A9%20au%20lait/', { token: served.user.token });
    expect(read.json.title).toBe('Coffee');
  });

  it('answers 404 for a path no slug can be (longer than the field allows)', async () => {
    const reply = await served.api.request('GET', `/api/v1/kb/${'x'.repeat(41)}/`, { token: served.user.token });
    expect(reply.status).toBe(404);
    expect(reply.json.code).toBe('not_found');
  });

  it('updates by slug, honouring If-Match and If-None-Match, and may change the slug itself', async () => {
    await create({ slug: 'draft', title: 'Draft' });
    const read = await served.api.request('GET', '/api/v1/kb/draft/', { token: served.user.token });
    const etag = String(read.headers.etag);
    const unchanged = await served.api.request('GET', '/api/v1/kb/draft/', { token: served.user.token, headers: { 'If-None-Match': etag } });
    expect(unchanged.status).toBe(304);
    const stale = await served.api.request('PATCH', '/api/v1/kb/draft/', { token: served.user.token, body: { title: 'x' }, headers: { 'If-Match': '"stale"' } });
    expect(stale.status).toBe(412);
    const renamed = await served.api.request('PATCH', '/api/v1/kb/draft/', { token: served.user.token, body: { slug: 'final' }, headers: { 'If-Match': etag } });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({ slug: 'final', title: 'Draft' });
    expect((await served.api.request('GET', '/api/v1/kb/draft/', { token: served.user.token })).status).toBe(404);
    const replaced = await served.api.request('PUT', '/api/v1/kb/final/', { token: served.user.token, body: { slug: 'final', title: 'Final' } });
    expect(replaced.json.title).toBe('Final');
  });

  it('runs custom detail actions on the record the slug names', async () => {
    await create({ slug: 'loud', title: 'quiet words' });
    const reply = await served.api.request('GET', '/api/v1/kb/loud/shout/', { token: served.user.token });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ title: 'QUIET WORDS' });
    expect((await served.api.request('GET', '/api/v1/kb/nobody/shout/', { token: served.user.token })).status).toBe(404);
  });

  it('deletes by slug', async () => {
    await create({ slug: 'gone', title: 'Gone' });
    expect((await served.api.request('DELETE', '/api/v1/kb/gone/', { token: served.user.token })).status).toBe(204);
    expect((await served.api.request('GET', '/api/v1/kb/gone/', { token: served.user.token })).status).toBe(404);
    expect((await served.api.request('DELETE', '/api/v1/kb/gone/', { token: served.user.token })).status).toBe(404);
  });

  it('refuses a slug that one of the collection’s own paths takes, on create, bulk create and update', async () => {
    for (const slug of ['bulk', 'stats']) {
      const reply = await create({ slug, title: 'Shadowed' });
      expect(reply.status).toBe(400);
      expect(reply.json.code).toBe('validation_failed');
      expect(reply.json.details.slug[0]).toContain(`/kb/${slug}/`);
    }
    const bulk = await served.api.request('POST', '/api/v1/kb/bulk/', { token: served.user.token, body: [{ slug: 'fine', title: 'Fine' }, { slug: 'stats', title: 'No' }] });
    expect(bulk.status).toBe(400);
    expect(Object.keys(bulk.json.details)).toEqual(['1.slug']);
    expect((await served.api.request('GET', '/api/v1/kb/fine/', { token: served.user.token })).status).toBe(404);
    await create({ slug: 'movable', title: 'Movable' });
    const moved = await served.api.request('PATCH', '/api/v1/kb/movable/', { token: served.user.token, body: { slug: 'bulk' } });
    expect(moved.status).toBe(400);
    expect(moved.json.details.slug).toHaveLength(1);
    // The paths themselves still answer as before.
    expect((await served.api.request('GET', '/api/v1/kb/stats/', { token: served.user.token })).json).toEqual({ stats: true });
    expect((await served.api.request('POST', '/api/v1/kb/bulk/', { token: served.user.token, body: [{ slug: 'b1', title: 'B' }] })).status).toBe(201);
  });

  it('names the path parameter after the record key in the OpenAPI document', async () => {
    const { paths } = (await served.api.request('GET', '/api/v1/schema/')).json;
    expect(paths['/api/v1/kb/{id}/']).toBeUndefined();
    for (const path of ['/api/v1/kb/{slug}/', '/api/v1/kb/{slug}/shout/']) {
      const [parameter] = paths[path].get.parameters.filter((p: { in: string }) => p.in === 'path');
      expect(parameter).toMatchObject({ name: 'slug', required: true, schema: { type: 'string', maxLength: 40 } });
    }
  });

  it('names a record by a record key its serializer does not show, within a scope', async () => {
    const created = await served.api.request('POST', '/api/v1/kb-tags/', { token: served.user.token, body: { name: 'red' } });
    expect(created.status).toBe(201);
    const location = String(created.headers.location);
    expect(location).toMatch(/^http:\/\/localhost\/api\/v1\/kb-tags\/tag-[0-9a-f]{8}\/$/);
    const read = await served.api.request('GET', location.replace('http://localhost', ''), { token: served.user.token });
    expect(read.json).toEqual({ id: created.json.id, name: 'red' });
  });

  it('answers a create and an update with the record as stored: its links and their count after the write, and an ETag If-Match accepts', async () => {
    const token = served.user.token;
    const ids: number[] = [];
    for (const slug of ['shelved-1', 'shelved-2', 'shelved-3']) ids.push((await create({ slug, title: slug })).json.id);
    const [first, second, third] = ids as [number, number, number];

    const created = await served.api.request('POST', '/api/v1/kb-shelves/', { token, body: { slug: 'top', name: 'Top', entries: [second, first] } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ slug: 'top', entries: [first, second], entry_count: 2 });
    const read = await served.api.request('GET', '/api/v1/kb-shelves/top/', { token });
    expect(read.json).toEqual(created.json);
    expect(created.headers.etag).toBe(read.headers.etag);

    // Each write's ETag is the record's: the next write may name it in If-Match.
    let [slug, etag] = ['top', String(created.headers.etag)];
    for (const [method, body, entries] of [
      ['PATCH', { entries: [third] }, [third]],
      ['PUT', { slug: 'top', name: 'Top', entries: [first, third] }, [first, third]],
      ['PATCH', { slug: 'moved', entries: [] }, []],
    ] as const) {
      const written = await served.api.request(method, `/api/v1/kb-shelves/${slug}/`, { token, body, headers: { 'If-Match': etag } });
      expect(written.status, JSON.stringify(written.json)).toBe(200);
      expect(written.json).toMatchObject({ entries, entry_count: entries.length });
      const again = await served.api.request('GET', `/api/v1/kb-shelves/${written.json.slug}/`, { token });
      expect(again.json).toEqual(written.json);
      expect(written.headers.etag).toBe(again.headers.etag);
      [slug, etag] = [written.json.slug, String(written.headers.etag)];
    }
    expect((await served.api.request('PATCH', '/api/v1/kb-shelves/moved/', { token, body: { name: 'Stale' }, headers: { 'If-Match': String(created.headers.etag) } })).status).toBe(412);
  });

  it('shows the slug in the browsable page’s title', async () => {
    await create({ slug: 'titled', title: 'Titled' });
    const page = await served.api.request('GET', '/api/v1/kb/titled/', { token: served.user.token, headers: { Accept: 'text/html' } });
    expect(page.body).toContain('<title>kb titled');
  });
});

describe('relations of a collection looked up by slug', () => {
  it('answer a create and an update with the links they wrote, by id and by name', async () => {
    const send = (method: string, url: string, body?: unknown) => served.api.request(method, url, { token: served.user.token, body });
    const [news, sport] = [(await send('POST', '/api/v1/kb-topics/', { name: 'news' })).json, (await send('POST', '/api/v1/kb-topics/', { name: 'sport' })).json];
    const created = await send('POST', '/api/v1/kb-filed/', { slug: 'filed', title: 'Filed', topics: [news.id] });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ topics: [news.id], topic_names: ['news'] });
    const renamed = await send('PATCH', '/api/v1/kb-filed/filed/', { topic_names: ['sport'] });
    expect(renamed.json).toMatchObject({ topics: [sport.id], topic_names: ['sport'] });
    const moved = await send('PATCH', '/api/v1/kb-filed/filed/', { slug: 'moved', topics: [news.id, sport.id] });
    expect(moved.json).toMatchObject({ slug: 'moved', topics: [news.id, sport.id], topic_names: ['news', 'sport'] });
    expect((await send('GET', '/api/v1/kb-filed/moved/')).json).toEqual(moved.json);
  });
});

describe('declaring a record key', () => {
  it('refuses at start-up a field that is not unique, or no field', () => {
    expect(() => collection('kb2', { serializer: entries, recordKey: 'title' })).toThrow(/must be a unique, not nullable/);
    expect(() => collection('kb2', { serializer: entries, recordKey: 'nope' })).toThrow(/no field/);
  });
});
