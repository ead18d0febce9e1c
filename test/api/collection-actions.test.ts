/**
 * What a collection declares of its built-in actions: which it serves (the others absent: 404 or
 * 405, out of the document, the API root and the browsable forms), a PUT that updates partially,
 * a create answering 200, a serializer per action, and before-hooks that read (and write) through
 * the database of the write.
 */
import { describe, expect, it } from 'vitest';
import {
  collection,
  defineApp,
  fields,
  model,
  permissionDenied,
  recordStore,
  validationFailed,
  serializer,
  User,
  type Action,
  type CollectionOptions,
  type Database,
} from '../../src/framework/index.js';
import { servedWithUser } from '../support/api.js';
import { lintProblems } from '../support/openapi-lint.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const Entry = model('entries', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  body: fields.text(),
  slug: fields.string({ maxLength: 120, unique: true }),
  owner_id: fields.foreignKey('users'),
});
const Line = model('entry_lines', { id: fields.id(), line: fields.string({ maxLength: 200 }) });
const lineSerializer = serializer(Line, { fields: ['id', 'line'] });

const entrySerializer = serializer(Entry, { fields: ['id', 'title', 'body', 'slug', 'owner_id'], readOnly: ['slug', 'owner_id'] });
/** The list's own: no body, the owner nested (one statement per page, whatever its size). */
const entrySummary = serializer(Entry, {
  name: 'EntrySummary',
  fields: ['id', 'title', 'slug', 'owner'],
  nested: { owner: { source: 'owner_id', serializer: serializer(User, { name: 'EntryOwner', fields: ['username'] }) } },
});

const log = (database: Database, line: string) => recordStore(database, lineSerializer, { name: 'line' }).create({ line });

/** "Same title" → "same-title", or "same-title-2" (and so on) when that slug is taken, read through the write's database. */
async function freeSlug(database: Database, title: unknown): Promise<string> {
  const store = recordStore(database, entrySerializer, { name: 'entry' });
  const base = String(title).toLowerCase().replace(/[^a-z0-9]+/g, '-');
  for (let n = 1; ; n += 1) {
    const slug = n === 1 ? base : `${base}-${n}`;
    if ((await store.list({ slug }, ['id'])).length === 0) return slug;
  }
}

const entries = collection('entries', {
  serializer: entrySerializer,
  serializers: { list: entrySummary },
  put: 'partial',
  createStatus: 200,
  hooks: {
    beforeCreate: async ({ user, values, database }) => {
      // Written in the create's transaction (an after-hook opens it): the refusal below rolls it back.
      await log(database, `creating ${String(values.title)}`);
      if (values.title === 'Refused') throw permissionDenied('Not this title.');
      return { owner_id: user!.id, slug: await freeSlug(database, values.title) };
    },
    beforeUpdate: async ({ values, database }) => (values.title === undefined ? undefined : { slug: await freeSlug(database, values.title) }),
    beforeDelete: ({ existing, database }) => log(database, `deleting ${String(existing.title)}`).then(() => undefined),
    afterCreate: ({ record, database }) => log(database, `created ${String(record.slug)}`).then(() => undefined),
  },
});

/** Over the same table, every default: PUT replaces, a create answers 201 with Location. */
const drafts = collection('drafts', {
  serializer: entrySerializer,
  bulkCreate: { max: 3 },
  hooks: {
    beforeCreate: ({ user, values }) => {
      if (values.title === 'Refused') throw validationFailed({ title: ['Not this title.'] });
      return { owner_id: user!.id, slug: `draft-${String(values.title).toLowerCase()}` };
    },
  },
});

/** A ReadOnlyModelViewSet, with custom actions still served. */
const shelf = collection('shelf', {
  serializer: entrySerializer,
  builtInActions: ['list', 'retrieve'],
  permissions: { list: [], retrieve: [] },
  actions: {
    shout: { detail: true, method: 'GET', handler: ({ record }) => ({ shout: String(record!.title).toUpperCase() }) },
    titles: { detail: false, method: 'GET', handler: () => ({ titles: true }) },
  },
});
const lookup = collection('lookup', { serializer: entrySerializer, builtInActions: ['retrieve'] });
const stream = collection('stream', { serializer: entrySerializer, builtInActions: ['list'] });

const app = withGeneratedMigrations(defineApp({ collections: [entries, drafts, shelf, lookup, stream, collection('lines', { serializer: lineSerializer })] }));

const sent: string[] = [];
const served = servedWithUser(app, 'alice', { appDatabase: recording(sent) });

const as = (method: string, url: string, body?: unknown, headers?: Record<string, string>) => served.api.request(method, url, { token: served.user.token, body, headers });
const lines = async (): Promise<string[]> => (await as('GET', '/api/v1/lines/?page_size=100')).json.results.map((row: { line: string }) => row.line);
const browser = { accept: 'text/html' };

describe('the OpenAPI document of these declarations', () => {
  it('passes the Redocly linter with no errors and no warnings', async () => {
    expect(await lintProblems((await as('GET', '/api/v1/schema/')).json)).toEqual([]);
  });
});

describe('builtInActions', () => {
  it('serves the actions named, and custom actions besides', async () => {
    const { id } = (await as('POST', '/api/v1/drafts/', { title: 'Shelved', body: 'b' })).json;
    expect((await as('GET', '/api/v1/shelf/')).json.results).toEqual(expect.arrayContaining([expect.objectContaining({ id, title: 'Shelved' })]));
    expect((await as('GET', `/api/v1/shelf/${id}/`)).json.title).toBe('Shelved');
    expect((await as('GET', `/api/v1/shelf/${id}/shout/`)).json).toEqual({ shout: 'SHELVED' });
    expect((await as('GET', '/api/v1/shelf/titles/')).json).toEqual({ titles: true });
  });

  it('answers 405 with Allow for a method left out where another is served', async () => {
    const { id } = (await as('POST', '/api/v1/drafts/', { title: 'Fixed', body: 'b' })).json;
    const post = await as('POST', '/api/v1/shelf/', { title: 'New', body: 'b' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD, OPTIONS');
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const reply = await as(method, `/api/v1/shelf/${id}/`, method === 'DELETE' ? undefined : { title: 'Changed' });
      expect(reply.status).toBe(405);
      expect(reply.headers.allow).toBe('GET, HEAD, OPTIONS');
    }
    expect((await as('GET', `/api/v1/drafts/${id}/`)).json.title).toBe('Fixed');
  });

  it('answers 404 where no action is served, and leaves the API root without a list or create', async () => {
    const { id } = (await as('POST', '/api/v1/drafts/', { title: 'Looked up', body: 'b' })).json;
    expect((await as('GET', `/api/v1/lookup/${id}/`)).json.title).toBe('Looked up');
    const list = await as('GET', '/api/v1/lookup/');
    expect(list.status).toBe(404);
    expect(list.json.code).toBe('not_found');
    expect((await as('GET', '/api/v1/stream/')).status).toBe(200);
    expect((await as('GET', `/api/v1/stream/${id}/`)).status).toBe(404);
    const root = (await as('GET', '/api/v1/')).json;
    expect(Object.keys(root)).toEqual(expect.arrayContaining(['shelf', 'stream', 'entries']));
    expect(root).not.toHaveProperty('lookup');
  });

  it('documents only the actions served', async () => {
    const { paths } = (await as('GET', '/api/v1/schema/')).json;
    expect(Object.keys(paths['/api/v1/shelf/']).sort()).toEqual(['get']);
    expect(Object.keys(paths['/api/v1/shelf/{id}/']).sort()).toEqual(['get']);
    expect(paths['/api/v1/shelf/{id}/shout/'].get).toBeDefined();
    expect(paths['/api/v1/lookup/']).toBeUndefined();
    expect(paths['/api/v1/stream/{id}/']).toBeUndefined();
  });

  it('shows no form for what is left out on the browsable pages', async () => {
    const { id } = (await as('POST', '/api/v1/drafts/', { title: 'Browsed', body: 'b' })).json;
    const list = await as('GET', '/api/v1/shelf/', undefined, browser);
    expect(list.body).toContain('HTTP 200 OK');
    expect(list.body).not.toContain('data-method="POST"');
    const record = await as('GET', `/api/v1/shelf/${id}/`, undefined, browser);
    expect(record.body).toContain('shout (GET)');
    expect(record.body).not.toContain('class="record-form"');
    expect(record.body).not.toContain('id="delete"');
    const full = await as('GET', `/api/v1/drafts/${id}/`, undefined, browser);
    expect(full.body).toContain('data-method="PUT"');
    expect(full.body).toContain('id="delete"');
  });

  const refused = (options: Partial<CollectionOptions>) => () => collection('bad', { serializer: entrySerializer, ...options });
  it('refuses nonsense at start-up', () => {
    expect(refused({ builtInActions: ['list', 'fetch' as Action] })).toThrow('bad: unknown built-in actions fetch');
    expect(refused({ builtInActions: ['list'], permissions: { list: [], destroy: [] } })).toThrow('bad: permissions for destroy, which the collection does not serve');
    expect(refused({ builtInActions: ['list'], bulkCreate: { max: 2 } })).toThrow('bad: bulkCreate needs the create action');
    expect(refused({ builtInActions: ['list'], createStatus: 200 })).toThrow('bad: createStatus needs the create action');
    expect(refused({ builtInActions: ['list', 'partial_update'], put: 'partial' })).toThrow('bad: put needs the update action');
    expect(refused({ builtInActions: ['list'], serializers: { retrieve: entrySummary } })).toThrow('bad: a serializer for retrieve, which builtInActions leaves out');
    expect(refused({ serializers: { list: lineSerializer } })).toThrow('bad: the serializer for list is over "entry_lines", not "entries"');
    expect(refused({ serializers: { bulk: entrySummary } as CollectionOptions['serializers'] })).toThrow('bad: serializers names "bulk"');
    expect(refused({ put: 'merge' as 'partial' })).toThrow("bad: put must be 'replace' or 'partial'");
    expect(refused({ createStatus: 204 as 200 })).toThrow('bad: createStatus must be 200 or 201');
  });
});

describe('put: partial', () => {
  it('updates the fields sent and keeps the others; PUT elsewhere still replaces', async () => {
    const { slug } = (await as('POST', '/api/v1/entries/', { title: 'Partly', body: 'kept' })).json;
    const id = (await as('GET', `/api/v1/entries/?page_size=100`)).json.results.find((row: { slug: string }) => row.slug === slug).id;
    const put = await as('PUT', `/api/v1/entries/${id}/`, { body: 'changed' });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ title: 'Partly', body: 'changed' });
    expect((await as('PUT', `/api/v1/entries/${id}/`, { title: 'x'.repeat(101) })).status).toBe(400);
    const draft = (await as('POST', '/api/v1/drafts/', { title: 'Whole', body: 'b' })).json;
    const replace = await as('PUT', `/api/v1/drafts/${draft.id}/`, { body: 'only' });
    expect(replace.status).toBe(400);
    expect(replace.json.details).toHaveProperty('title');
  });

  it('marks no field required in the PUT body it documents', async () => {
    const document = (await as('GET', '/api/v1/schema/')).json;
    const body = (path: string) => {
      const schema = document.paths[path].put.requestBody.content['application/json'].schema;
      return schema.$ref ? document.components.schemas[schema.$ref.split('/').at(-1)] : schema;
    };
    expect(body('/api/v1/entries/{id}/').required).toEqual([]);
    expect(body('/api/v1/drafts/{id}/').required).toEqual(expect.arrayContaining(['title', 'body']));
  });
});

describe('createStatus: 200', () => {
  it('answers the record with 200 and no Location; the default stays 201 with one', async () => {
    const reply = await as('POST', '/api/v1/entries/', { title: 'Counted', body: 'b' });
    expect(reply.status).toBe(200);
    expect(reply.headers.location).toBeUndefined();
    expect(reply.json).toMatchObject({ title: 'Counted', body: 'b', owner_id: served.user.id });
    const created = await as('POST', '/api/v1/drafts/', { title: 'Located', body: 'b' });
    expect(created.status).toBe(201);
    expect(created.headers.location).toMatch(new RegExp(`/api/v1/drafts/${created.json.id}/$`));
  });

  it('documents the status it answers', async () => {
    const { paths } = (await as('GET', '/api/v1/schema/')).json;
    expect(Object.keys(paths['/api/v1/entries/'].post.responses)).toContain('200');
    expect(Object.keys(paths['/api/v1/entries/'].post.responses)).not.toContain('201');
    expect(paths['/api/v1/entries/'].post.responses['200'].headers).not.toHaveProperty('Location');
    expect(paths['/api/v1/drafts/'].post.responses['201'].headers).toHaveProperty('Location');
  });
});

describe('serializers per action', () => {
  it('renders the list with its own serializer, and a record with the collection\'s', async () => {
    const created = (await as('POST', '/api/v1/entries/', { title: 'Summarised', body: 'long text' })).json;
    const listed = (await as('GET', '/api/v1/entries/?page_size=100')).json.results.find((row: { slug: string }) => row.slug === created.slug);
    expect(listed).toEqual({ id: listed.id, title: 'Summarised', slug: created.slug, owner: { username: 'alice' } });
    expect((await as('GET', `/api/v1/entries/${listed.id}/`)).json).toEqual({ ...created, id: listed.id });
    expect(created).toHaveProperty('body', 'long text');
  });

  it('reads a page in as many statements whatever it holds', async () => {
    const counted = async (size: number) => {
      sent.length = 0;
      const reply = await as('GET', `/api/v1/entries/?page_size=${size}`);
      expect(reply.json.results).toHaveLength(size);
      return sent.length;
    };
    while ((await as('GET', '/api/v1/entries/')).json.count < 3) await as('POST', '/api/v1/entries/', { title: 'Filler', body: 'b' });
    expect(await counted(3)).toBe(await counted(1));
  });

  it('documents each action with its serializer\'s schema', async () => {
    const document = (await as('GET', '/api/v1/schema/')).json;
    const list = document.paths['/api/v1/entries/'].get.responses['200'].content['application/json'].schema;
    const retrieve = document.paths['/api/v1/entries/{id}/'].get.responses['200'].content['application/json'].schema;
    // The whole record first; the other is what ?fields= or ?omit= may leave of it.
    expect(list.properties.results.items.anyOf[0].$ref).toBe('#/components/schemas/EntrySummary');
    expect(retrieve.anyOf[0].$ref).not.toBe('#/components/schemas/EntrySummary');
    expect(Object.keys(document.components.schemas.EntrySummary.properties)).toEqual(['id', 'title', 'slug', 'owner']);
  });
});

describe('before-hooks with the database', () => {
  it('choose a slug not yet taken, on create and on update', async () => {
    const first = await as('POST', '/api/v1/entries/', { title: 'Same Title', body: 'b' });
    const second = await as('POST', '/api/v1/entries/', { title: 'Same Title', body: 'b' });
    expect([first.json.slug, second.json.slug]).toEqual(['same-title', 'same-title-2']);
    const other = (await as('POST', '/api/v1/entries/', { title: 'Other', body: 'b' })).json;
    const id = (await as('GET', '/api/v1/entries/?page_size=100')).json.results.find((row: { slug: string }) => row.slug === other.slug).id;
    expect((await as('PATCH', `/api/v1/entries/${id}/`, { title: 'Same Title' })).json.slug).toBe('same-title-3');
  });

  it('run in the write\'s transaction when it has one: a refusal rolls back what the hook wrote', async () => {
    const refused = await as('POST', '/api/v1/entries/', { title: 'Refused', body: 'b' });
    expect(refused.status).toBe(403);
    const accepted = await as('POST', '/api/v1/entries/', { title: 'Accepted', body: 'b' });
    expect(await lines()).toEqual(expect.arrayContaining(['creating Accepted', `created ${String(accepted.json.slug)}`]));
    expect(await lines()).not.toContain('creating Refused');
  });

  it('refuse a record of a bulk create under its index, and nothing is stored', async () => {
    const reply = await as('POST', '/api/v1/drafts/bulk/', [{ title: 'Bulk fine', body: 'b' }, { title: 'Refused', body: 'b' }]);
    expect(reply.status).toBe(400);
    expect(reply.json.details).toEqual({ '1.title': ['Not this title.'] });
    const stored = (await as('GET', '/api/v1/drafts/?page_size=100')).json.results.map((row: { title: string }) => row.title);
    expect(stored).not.toContain('Bulk fine');
  });

  it('see the record a delete is about to remove', async () => {
    const created = (await as('POST', '/api/v1/entries/', { title: 'Doomed', body: 'b' })).json;
    const id = (await as('GET', '/api/v1/entries/?page_size=100')).json.results.find((row: { slug: string }) => row.slug === created.slug).id;
    expect((await as('DELETE', `/api/v1/entries/${id}/`)).status).toBe(204);
    expect(await lines()).toContain('deleting Doomed');
  });

});
