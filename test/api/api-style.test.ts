/**
 * The API's style chosen by the app (issue 23, docs/api-style.md), here the RealWorld (Conduit)
 * style: collections under /api with bare paths and under /v2 with either spelling, limit/offset
 * pagination by default, `{"note": {...}}` and `{"notes": [...], "notesCount": n}` envelopes,
 * validation failures as 422 `{"errors": {"body": [...]}}`, and `Authorization: Token <credential>`.
 * A second app checks what each choice does alone, in the default style around it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, isAuthenticated, MalformedPathId, model, requirePermissions, serializer, User, type ExceptionHandler, type FastifyInstance } from '../../src/framework/index.js';
import { Note } from '../support/owned-notes.js';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const notes = serializer(Note, { fields: ['id', 'text', 'owner_id'], readOnly: ['owner_id'] });
const people = serializer(User, { fields: ['id', 'username'] });
const Remark = model('note_remarks', { id: fields.id(), text: fields.string({ maxLength: 100 }), note_id: fields.foreignKey('notes') });

const notesCollection = collection('notes', {
  serializer: notes,
  permissions: [isAuthenticated],
  orderingFields: ['text'],
  defaultOrdering: ['text'],
  pageSize: 2,
  bulkCreate: { max: 5 },
  actions: { shout: { detail: true, method: 'GET', envelope: false, handler: ({ record }) => ({ text: String(record!.text).toUpperCase() }) } },
});

/** Conduit's error body: every message, prefixed by its field. (And a bug, for 405s: the default envelope answers.) */
const conduitErrors: ExceptionHandler = (error) => {
  if (error.code === 'method_not_allowed') throw new Error('a bug in the handler');
  if (error instanceof MalformedPathId) return { status: 404, body: { errors: { body: ['Not found.'] } } };
  return error.code === 'validation_failed'
    ? { status: 422, body: { errors: { body: Object.entries(error.details ?? {}).flatMap(([field, messages]) => messages.map((message) => `${field} ${message}`)) } } }
    : undefined;
};

const conduit = withGeneratedMigrations(
  defineApp({
    routers: [
      { prefix: '/api', trailingSlash: 'absent' },
      { prefix: '/v2', trailingSlash: 'optional', collections: ['notes'] },
      // Under the notes, as Conduit's /api/articles/feed: no API root to claim /api/notes/more.
      { prefix: '/api/notes/more', trailingSlash: 'absent', collections: ['pages'], root: false },
    ],
    pagination: 'limit_offset',
    envelope: (name) => (name === 'notes' ? { record: 'note', list: 'notes', count: 'notesCount' } : undefined),
    exceptionHandler: conduitErrors,
    credentialKeywords: ['Token'],
    // Outside every router's prefix.
    routes: (routes: FastifyInstance) => {
      routes.get('/me', async (request) => {
        await requirePermissions(request, [isAuthenticated]);
        return { me: request.user!.username };
      });
    },
    collections: [
      notesCollection,
      // Under a note: /api/notes/{parent}/remarks.
      collection('remarks', {
        serializer: serializer(Remark, { fields: ['id', 'text', 'note_id'], readOnly: ['note_id'] }),
        parent: { collection: notesCollection, field: 'note_id' },
        permissions: [isAuthenticated],
      }),
      collection('people', { serializer: people, permissions: [isAuthenticated], orderingFields: ['username'], defaultOrdering: ['username'], pageSize: 2 }),
      collection('pages', { serializer: people, permissions: [isAuthenticated], pagination: 'page', pageSize: 2 }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;
const token = () => ({ headers: { authorization: `Token ${alice.token}` } });
const path = (url: string) => new URL(url).pathname + new URL(url).search;

beforeAll(async () => {
  api = await startApi({}, conduit);
  alice = await api.user('alice');
  for (const name of ['bo', 'cy', 'di', 'ed']) await api.user(name);
});
afterAll(() => api.close());

describe('routers', () => {
  it('serves bare paths under /api, redirects the slashed ones, and builds every URL bare', async () => {
    const created = await api.request('POST', '/api/notes', { ...token(), body: { note: { text: 'first' } } });
    expect(created.status).toBe(201);
    const id = created.json.note.id as number;
    expect(path(created.headers.location as string)).toBe(`/api/notes/${id}`);
    expect((await api.request('GET', `/api/notes/${id}`, token())).json.note.text).toBe('first');
    expect((await api.request('GET', `/api/notes/${id}/shout`, token())).json).toEqual({ text: 'FIRST' });

    const slashed = await api.request('GET', '/api/notes/?ordering=text', token());
    expect(slashed.status).toBe(308);
    expect(slashed.headers.location).toBe('/api/notes?ordering=text');

    const root = await api.request('GET', '/api', token());
    expect(Object.fromEntries(Object.entries(root.json as Record<string, string>).map(([name, url]) => [name, path(url)]))).toEqual({
      notes: '/api/notes',
      people: '/api/people',
      pages: '/api/pages',
    });
    expect((await api.request('GET', '/api/v1/notes/', token())).status).toBe(404);
  });

  it('links the browsable page the router\'s way', async () => {
    const page = await api.request('GET', '/api/notes', { headers: { ...token().headers, accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('href="/api"');
    expect(page.body).toContain('href="/api/notes"');
    expect(page.body).not.toContain('href="/api/notes/"');
  });

  it('links an error page under the second router to that router\'s root', async () => {
    const html = { headers: { ...token().headers, accept: 'text/html' } };
    for (const url of ['/v2/notes/999999/', '/v2/people/']) {
      const page = await api.request('GET', url, html);
      expect(page.status, url).toBe(404);
      expect(page.body, url).toMatch(/<a href="\/v2\/">API root<\/a>/);
    }
    expect((await api.request('GET', '/api/notes/999999', html)).body).toMatch(/<a href="\/api">API root<\/a>/);
  });

  it('mounts a second router with optional slashes and only the collections it names', async () => {
    for (const url of ['/v2/notes', '/v2/notes/']) expect((await api.request('GET', url, token())).status, url).toBe(200);
    const missing = await api.request('GET', '/v2/people/', token());
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe('not_found');
    const refused = await api.request('DELETE', '/v2/notes', token());
    expect(refused.status).toBe(405);
    // The exception handler throws for a 405 (above): the default envelope answers instead.
    expect(refused.json).toMatchObject({ code: 'method_not_allowed' });
    expect(refused.headers.allow).toBe('GET, POST, HEAD, OPTIONS');
  });

  it('mounts a router without an API root under another router\'s collection', async () => {
    const pages = await api.request('GET', '/api/notes/more/pages', token());
    expect(pages).toMatchObject({ status: 200, json: { count: 5 } });
    // The path a root would take is the notes' detail path: a record id, not a list of collections.
    const notRoot = await api.request('GET', '/api/notes/more', token());
    expect(notRoot.status).not.toBe(200);
    expect(notRoot.json).not.toHaveProperty('pages');
    expect((await api.request('GET', '/api', token())).json).toHaveProperty('pages');
  });

  it('puts every router path in the OpenAPI document, the optional spelling once', async () => {
    const document = (await api.request('GET', '/api/schema')).json;
    const paths = Object.keys(document.paths);
    expect(paths).toEqual(expect.arrayContaining(['/api/notes', '/api/notes/{id}', '/api/notes/{id}/shout', '/api/notes/bulk', '/api/auth/token', '/v2/notes/', '/v2/notes/{id}/']));
    expect(paths.filter((name) => name.startsWith('/api/v1') || name === '/v2/notes' || name === '/api/notes/')).toEqual([]);
  });
});

describe('limit/offset pagination', () => {
  it('pages by limit and offset, with links that move the offset by the limit', async () => {
    const page = await api.request('GET', '/api/people?limit=2&offset=1', token());
    expect(page.status).toBe(200);
    expect(page.json.count).toBe(5);
    expect(page.json.results.map((person: { username: string }) => person.username)).toEqual(['bo', 'cy']);
    expect(path(page.json.next)).toBe('/api/people?limit=2&offset=3');
    expect(path(page.json.previous)).toBe('/api/people?limit=2');
    const last = await api.request('GET', path(page.json.next), token());
    expect(last.json.results.map((person: { username: string }) => person.username)).toEqual(['di', 'ed']);
    expect(last.json.next).toBeNull();
    const first = await api.request('GET', '/api/people', token());
    expect(first.json.results).toHaveLength(2);
    expect(first.json.previous).toBeNull();
  });

  it('answers past the end with no results and the count, and refuses a bad limit or offset', async () => {
    const past = await api.request('GET', '/api/people?offset=50', token());
    expect(past.status).toBe(200);
    expect(past.json).toMatchObject({ count: 5, next: null, results: [] });
    expect(path(past.json.previous)).toBe('/api/people?offset=48&limit=2');
    for (const query of ['limit=0', 'limit=x', 'offset=-1', 'offset=99999999999999999999']) {
      const reply = await api.request('GET', `/api/people?${query}`, token());
      expect(reply.status, query).toBe(422);
      expect(reply.json.errors.body[0], query).toMatch(/^(limit|offset) A (positive|non-negative) integer is required\.$/);
    }
  });

  it('leaves a collection that names page pagination to pages', async () => {
    const page = await api.request('GET', '/api/pages?page=2', token());
    expect(page.json.count).toBe(5);
    expect(path(page.json.previous)).toBe('/api/pages');
    expect((await api.request('GET', '/api/pages?limit=2', token())).status).toBe(422);
  });
});

describe('envelopes', () => {
  it('wraps a record in and out, and a list with its count', async () => {
    const created = await api.request('POST', '/api/notes', { ...token(), body: { note: { text: 'second' } } });
    expect(created.json).toEqual({ note: { id: expect.any(Number), text: 'second', owner_id: alice.id } });
    const id = created.json.note.id as number;
    const changed = await api.request('PATCH', `/api/notes/${id}`, { ...token(), body: { note: { text: 'changed' } } });
    expect(changed.json).toEqual({ note: { id, text: 'changed', owner_id: alice.id } });
    const list = await api.request('GET', '/api/notes?limit=50', token());
    expect(Object.keys(list.json).sort()).toEqual(['notes', 'notesCount']);
    expect(list.json.notesCount).toBe(list.json.notes.length);
    expect(list.json.notes.map((note: { text: string }) => note.text)).toContain('changed');
  });

  it('keeps ETags working through the envelope', async () => {
    const created = await api.request('POST', '/api/notes', { ...token(), body: { note: { text: 'tagged' } } });
    const url = `/api/notes/${created.json.note.id}`;
    const read = await api.request('GET', url, token());
    const unchanged = await api.request('GET', url, { headers: { ...token().headers, 'if-none-match': read.headers.etag as string } });
    expect(unchanged.status).toBe(304);
    const conditional = { ...token().headers, 'if-match': read.headers.etag as string };
    expect((await api.request('PATCH', url, { headers: conditional, body: { note: { text: 'once' } } })).status).toBe(200);
    expect((await api.request('PATCH', url, { headers: conditional, body: { note: { text: 'twice' } } })).status).toBe(412);
  });

  it('wraps a bulk create in the list key', async () => {
    const created = await api.request('POST', '/api/notes/bulk', { ...token(), body: { notes: [{ text: 'b1' }, { text: 'b2' }] } });
    expect(created.status).toBe(201);
    expect(created.json.notes.map((note: { text: string }) => note.text)).toEqual(['b1', 'b2']);
  });

  it('refuses a body outside the envelope, naming the key', async () => {
    const bare = await api.request('POST', '/api/notes', { ...token(), body: { text: 'bare' } });
    expect(bare.status).toBe(422);
    expect(bare.json).toEqual({ errors: { body: ['note This field is required.'] } });
  });

  it('documents the envelopes and the limit/offset parameters', async () => {
    const document = (await api.request('GET', '/api/schema')).json;
    const create = document.paths['/api/notes'].post;
    // One record under its key; several (bulk create) under the list's.
    expect(create.requestBody.content['application/json'].schema).toMatchObject({ required: ['note'], properties: { note: expect.anything() } });
    expect(create.responses['201'].content['application/json'].schema).toMatchObject({ required: ['note'] });
    const bulk = document.paths['/api/notes/bulk'].post;
    expect(bulk.requestBody.content['application/json'].schema).toMatchObject({ required: ['notes'], properties: { notes: { type: 'array' } } });
    expect(bulk.responses['201'].content['application/json'].schema).toMatchObject({ required: ['notes'] });
    expect(document.paths['/api/notes'].get.responses['200'].content['application/json'].schema).toMatchObject({
      required: ['notes', 'notesCount'],
      properties: { notes: { type: 'array' }, notesCount: expect.anything() },
    });
    const parameters = document.paths['/api/people'].get.parameters.map((parameter: { name: string }) => parameter.name);
    expect(parameters).toEqual(expect.arrayContaining(['limit', 'offset']));
    expect(parameters).not.toContain('page');
  });
});

describe('the exception handler', () => {
  it('answers validation failures its way, and leaves the errors it passes over in the default envelope', async () => {
    const invalid = await api.request('POST', '/api/notes', { ...token(), body: { note: { text: 'x'.repeat(101) } } });
    expect(invalid.status).toBe(422);
    expect(invalid.json.errors.body).toEqual([expect.stringMatching(/^text /)]);
    const missing = await api.request('GET', '/api/notes/999999', token());
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ code: 'not_found', error: 'Not found.' });
  });

  it('tells a path naming no possible record apart from other validation failures (DRF answers it 404)', async () => {
    const malformed = await api.request('GET', '/api/notes/first', token());
    expect(malformed.status).toBe(404);
    expect(malformed.json).toEqual({ errors: { body: ['Not found.'] } });
    // A nested collection's parent, named by a malformed id, is answered as the parent's detail path is.
    for (const [method, url] of [['GET', '/api/notes/first/remarks'], ['POST', '/api/notes/first/remarks'], ['GET', '/api/notes/0/remarks/1']] as const) {
      const underMalformed = await api.request(method, url, { ...token(), ...(method === 'POST' && { body: { remark: { text: 'lost' } } }) });
      expect([underMalformed.status, underMalformed.json], `${method} ${url}`).toEqual([404, { errors: { body: ['Not found.'] } }]);
    }
  });
});

describe('credential keywords', () => {
  it('takes Token, in any case, for every kind of credential', async () => {
    const credentials = { username: 'alice', password: PASSWORD };
    const access = (await api.request('POST', '/api/auth/jwt', { body: credentials })).json.access as string;
    const session = (await api.request('POST', '/api/auth/login', { body: credentials })).json.session as string;
    for (const credential of [alice.token, access, session]) {
      for (const keyword of ['Token', 'token', 'TOKEN']) {
        const reply = await api.request('GET', '/api/people', { headers: { authorization: `${keyword} ${credential}` } });
        expect(reply.status, `${keyword} ${credential.slice(0, 4)}`).toBe(200);
      }
    }
  });

  it('treats Bearer as a scheme it does not know, and challenges with Token', async () => {
    const bearer = await api.request('GET', '/api/people', { token: alice.token });
    expect(bearer.status).toBe(401);
    expect(bearer.json).toMatchObject({ code: 'not_authenticated' });
    expect(bearer.headers['www-authenticate']).toBe('Token');
    const bad = await api.request('GET', '/api/people', { headers: { authorization: 'Token rf_not-a-token' } });
    expect(bad.status).toBe(401);
    expect(bad.headers['www-authenticate']).toBe('Token');
  });

  it('challenges with Token outside the routers too (the app\'s own routes)', async () => {
    const anonymous = await api.request('GET', '/me');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Token');
    const bad = await api.request('GET', '/me', { headers: { authorization: 'Token rf_not-a-token' } });
    expect(bad.status).toBe(401);
    expect(bad.headers['www-authenticate']).toBe('Token');
    expect((await api.request('GET', '/me', token())).json).toEqual({ me: 'alice' });
  });

  it('revokes the token it names, and documents the keyword', async () => {
    const created = (await api.request('POST', '/api/auth/token', { body: { username: 'alice', password: PASSWORD } })).json.token as string;
    expect((await api.request('DELETE', '/api/auth/token', { headers: { authorization: `Token ${created}` } })).status).toBe(204);
    expect((await api.request('GET', '/api/people', { headers: { authorization: `Token ${created}` } })).status).toBe(401);
    const { token: scheme } = (await api.request('GET', '/api/schema')).json.components.securitySchemes;
    expect(scheme).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
    expect(scheme.description).toContain('Authorization: Token <credential>');
  });
});

describe('each choice alone, in the default style', () => {
  let plain: TestApi;
  let bo: TestUser;
  beforeAll(async () => {
    plain = await startApi(
      {},
      withGeneratedMigrations(
        defineApp({
          collections: [
            collection('people', { serializer: people, pagination: 'limit_offset', orderingFields: ['username'], defaultOrdering: ['username'] }),
            collection('notes', { serializer: notes, envelope: { record: 'note', list: 'notes', next: 'next' } }),
          ],
        }),
      ),
    );
    bo = await plain.user('bo');
  });
  afterAll(() => plain.close());

  it('keeps /api/v1 with slashes, the error envelope and Bearer', async () => {
    const bad = await plain.request('GET', '/api/v1/people/?limit=0', { token: bo.token });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 'validation_failed', details: { limit: ['A positive integer is required.'] } });
    expect((await plain.request('GET', '/api/v1/people', { token: bo.token })).status).toBe(308);
    const malformed = await plain.request('GET', '/api/v1/people/first/', { token: bo.token });
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ code: 'validation_failed', details: { id: [expect.any(String)] } });
    const anonymous = await plain.request('POST', '/api/v1/notes/', { body: { note: { text: 'x' } } });
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
  });

  it('wraps a collection of its own envelope, with only the list keys it names', async () => {
    const created = await plain.request('POST', '/api/v1/notes/', { token: bo.token, body: { note: { text: 'mine' } } });
    expect(path(created.headers.location as string)).toBe(`/api/v1/notes/${created.json.note.id}/`);
    const list = await plain.request('GET', '/api/v1/notes/', { token: bo.token });
    expect(list.json).toEqual({ notes: [created.json.note], next: null });
  });
});
