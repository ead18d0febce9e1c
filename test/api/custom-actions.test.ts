/**
 * Custom actions and the app's own routes go through the API's stages: a detail action refuses
 * anonymous callers (401) and other users' records (404, through the scope), checks its own
 * permissions, negotiates its media type, and is in the OpenAPI document and the browsable page;
 * an app route sees the authenticated user and may use the same checks and throttles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collection,
  defineApp,
  fields,
  hasPermission,
  requirePermissions,
  serializer,
  throttleRequest,
  type CustomAction,
  type FastifyInstance,
} from '../../src/framework/index.js';
import { Note } from '../support/owned-notes.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { lintProblems } from '../support/openapi-lint.js';

const escaped = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const app = withGeneratedMigrations(defineApp({
  collections: [
    collection('notes', {
      serializer: serializer(Note, { fields: ['id', 'text', 'owner_id'], readOnly: ['owner_id'] }),
      scope: ({ user }) => ({ owner_id: user?.id ?? null }),
      actions: {
        highlight: { detail: true, method: 'GET', mediaType: 'text/html', summary: 'The note as HTML', handler: ({ record }) => `<pre>${escaped(String(record!.text))}</pre>` },
        publish: {
          detail: true,
          method: 'POST',
          permissions: [hasPermission('notes.publish')],
          handler: ({ record, body, reply }) => {
            reply.status(202);
            return { published: record!.id, channel: (body as { channel: string }).channel };
          },
        },
        // A second action at `publish/`, answering another method: its own name, its own operation.
        unpublish: {
          detail: true,
          method: 'DELETE',
          path: 'publish',
          permissions: [hasPermission('notes.publish')],
          handler: ({ record }) => ({ unpublished: record!.id }),
        },
        // Takes no body: a POST with none is answered, not refused.
        pin: {
          detail: true,
          method: 'POST',
          body: false,
          handler: ({ record, body }) => ({ pinned: record!.id, body: body ?? null }),
        },
        mine: { detail: false, method: 'GET', handler: ({ user }) => ({ owner: user!.username }) },
        // A body of its own fields, validated before the handler sees it.
        schedule: {
          detail: true,
          method: 'POST',
          body: { at: fields.timestamp(), channel: fields.string({ maxLength: 10 }), repeat: fields.integer({ default: 1 }) },
          handler: ({ record, body }) => ({ scheduled: record!.id, body }),
        },
        // A serializer's fields, as its create takes them; fields it does not know left out.
        copy: {
          detail: false,
          method: 'POST',
          body: serializer(Note, { name: 'NoteText', fields: ['text'], validate: ({ text }) => (text === 'nope' ? { text: ['Not that one.'] } : undefined) }),
          unknownFields: 'ignore',
          handler: ({ body }) => ({ body }),
        },
      },
    }),
  ],
  throttles: { notes: { anonymous: '1000/min', user: '1000/min' } },
  routes: (routes: FastifyInstance) => {
    routes.get('/whoami', async (request) => ({ user: request.user?.username ?? null }));
    routes.get('/audit', async (request) => {
      await requirePermissions(request, [hasPermission('notes.audit')]);
      return { audited: true };
    });
    routes.get('/limited', async (request, reply) => {
      await throttleRequest(request, reply, 'limited');
      return { ok: true };
    });
  },
}));

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let publisher: TestUser;
let note: number;

beforeAll(async () => {
  api = await startApi({ THROTTLE_USER: '2/min' }, app);
  alice = await api.user('alice');
  bob = await api.user('bob');
  publisher = await api.user('publisher', { permissions: ['notes.publish', 'notes.audit'] });
  note = (await api.request('POST', '/api/v1/notes/', { token: alice.token, body: { text: '<b>bold</b>' } })).json.id;
});
afterAll(() => api.close());

describe('a custom detail action', () => {
  it('answers its own media type for the record’s owner', async () => {
    const reply = await api.request('GET', `/api/v1/notes/${note}/highlight/`, { token: alice.token });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.body).toBe('<pre>&#60;b&#62;bold&#60;/b&#62;</pre>');
  });

  it('refuses anonymous callers, other users’ records, and media types it cannot answer', async () => {
    expect((await api.request('GET', `/api/v1/notes/${note}/highlight/`)).status).toBe(401);
    expect((await api.request('GET', `/api/v1/notes/${note}/highlight/`, { token: bob.token })).status).toBe(404);
    const json = await api.request('GET', `/api/v1/notes/${note}/highlight/`, { token: alice.token, headers: { accept: 'application/json' } });
    expect(json.status).toBe(406);
    expect((await api.request('GET', `/api/v1/notes/999999/highlight/`, { token: alice.token })).status).toBe(404);
  });

  it('checks its own permissions, and parses its body', async () => {
    const denied = await api.request('POST', `/api/v1/notes/${note}/publish/`, { token: alice.token, body: { channel: 'news' } });
    expect(denied.status).toBe(403);
    const own = (await api.request('POST', '/api/v1/notes/', { token: publisher.token, body: { text: 'hello' } })).json.id;
    const published = await api.request('POST', `/api/v1/notes/${own}/publish/`, { token: publisher.token, body: { channel: 'news' } });
    expect(published).toMatchObject({ status: 202, json: { published: own, channel: 'news' } });
    const broken = await api.request('POST', `/api/v1/notes/${own}/publish/`, { token: publisher.token, body: '{' });
    expect(broken.status).toBe(400);
    expect((await api.request('GET', `/api/v1/notes/${own}/publish/`, { token: publisher.token })).status).toBe(405);
  });

  it('shares a path with another action when it names it, each answering its own method', async () => {
    const own = (await api.request('POST', '/api/v1/notes/', { token: publisher.token, body: { text: 'twice' } })).json.id;
    expect(await api.request('DELETE', `/api/v1/notes/${own}/publish/`, { token: publisher.token })).toMatchObject({ status: 200, json: { unpublished: own } });
    expect(await api.request('POST', `/api/v1/notes/${own}/publish/`, { token: publisher.token, body: { channel: 'news' } })).toMatchObject({ status: 202 });
    // Its own permissions, as the action sharing its path has them.
    expect((await api.request('DELETE', `/api/v1/notes/${own}/publish/`, { token: alice.token })).status).toBe(403);
    expect((await api.request('DELETE', `/api/v1/notes/${own}/unpublish/`, { token: publisher.token })).status).toBe(404);
  });

  it('takes no body when it declares none', async () => {
    expect(await api.request('POST', `/api/v1/notes/${note}/pin/`, { token: alice.token })).toMatchObject({ status: 200, json: { pinned: note, body: null } });
    const own = (await api.request('POST', '/api/v1/notes/', { token: publisher.token, body: { text: 'unsent' } })).json.id;
    expect((await api.request('POST', `/api/v1/notes/${own}/publish/`, { token: publisher.token })).status).toBe(400);
  });
});

describe('a custom action’s declared body', () => {
  const schedule = (id: number, body: unknown, token = alice.token, headers?: Record<string, string>) =>
    api.request('POST', `/api/v1/notes/${id}/schedule/`, { token, body, headers });

  it('hands the handler its fields parsed, defaults filled in', async () => {
    const reply = await schedule(note, { at: '2031-05-06T07:08:09+02:00', channel: 'news' });
    expect(reply).toMatchObject({ status: 200, json: { scheduled: note, body: { at: '2031-05-06T05:08:09.000Z', channel: 'news', repeat: 1 } } });
  });

  it('refuses it as a collection refuses a write body: by field, unknown fields included; not JSON; not an object', async () => {
    const invalid = await schedule(note, { channel: 'x'.repeat(11), repeat: 'often', extra: true });
    expect(invalid.status).toBe(400);
    expect(invalid.json).toEqual({
      error: expect.any(String),
      code: 'validation_failed',
      details: { at: ['This field is required.'], channel: [expect.stringContaining('10')], repeat: [expect.any(String)], extra: ['Unknown field.'] },
    });
    const text = await schedule(note, 'at=2031-01-01', alice.token, { 'content-type': 'text/plain' });
    expect(text).toMatchObject({ status: 415, json: { code: 'unsupported_media_type' } });
    // An HTML form's fields are read by the declared fields' kinds, as a collection's are.
    const form = await schedule(note, 'at=2031-01-01T00:00:00Z&channel=news&repeat=3', alice.token, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form).toMatchObject({ status: 200, json: { body: { at: '2031-01-01T00:00:00.000Z', channel: 'news', repeat: 3 } } });
    expect(await schedule(note, [{ channel: 'news' }])).toMatchObject({ status: 400, json: { code: 'parse_error' } });
    expect(await schedule(note, '{')).toMatchObject({ status: 400, json: { code: 'parse_error' } });
  });

  it('is judged after the record: 404 for a record out of scope, whatever the body', async () => {
    expect((await schedule(note, { channel: 'x'.repeat(11) }, bob.token)).status).toBe(404);
  });

  it('validates a serializer’s fields, the object as a whole too, and leaves out unknown fields when told to', async () => {
    const copied = await api.request('POST', '/api/v1/notes/copy/', { token: alice.token, body: { text: 'again', stray: 1 } });
    // The values a create would store: the model's defaults (the owner) filled in.
    expect(copied).toMatchObject({ status: 200, json: { body: { text: 'again', owner_id: alice.id } } });
    const refused = await api.request('POST', '/api/v1/notes/copy/', { token: alice.token, body: { text: 'nope' } });
    expect(refused).toMatchObject({ status: 400, json: { code: 'validation_failed', details: { text: ['Not that one.'] } } });
    expect((await api.request('POST', '/api/v1/notes/copy/', { token: alice.token, body: {} })).json.details).toEqual({ text: ['This field is required.'] });
  });

  it('refuses declarations that could never apply', () => {
    const declare = (actions: Record<string, CustomAction>) => () => collection('notes', { serializer: serializer(Note, { fields: ['id', 'text'] }), actions });
    const handler = () => null;
    expect(declare({ read: { detail: true, method: 'GET', body: { q: fields.string() }, handler } })).toThrow('answers GET, which takes no body');
    expect(declare({ send: { detail: true, method: 'POST', unknownFields: 'ignore', handler } })).toThrow('unknownFields but declares no body');
    expect(declare({ send: { detail: true, method: 'POST', body: { id: fields.integer() }, handler } })).toThrow('body field "id"');
  });
});

describe('a custom list action', () => {
  it('answers JSON, or the browsable page', async () => {
    const reply = await api.request('GET', '/api/v1/notes/mine/', { token: bob.token });
    expect(reply).toMatchObject({ status: 200, json: { owner: 'bob' } });
    const page = await api.request('GET', '/api/v1/notes/mine/', { token: bob.token, headers: { accept: 'text/html' } });
    expect(page.body).toContain('&quot;owner&quot;: &quot;bob&quot;');
  });
});

describe('custom actions in the documents', () => {
  it('are in the OpenAPI document', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    expect(document.paths['/api/v1/notes/{id}/highlight/'].get).toMatchObject({ summary: 'The note as HTML', tags: ['notes'] });
    expect(document.paths['/api/v1/notes/{id}/highlight/'].get.responses['200'].content).toHaveProperty(['text/html']);
    expect(document.paths['/api/v1/notes/{id}/publish/']).toMatchObject({ post: { operationId: expect.any(String) }, delete: { operationId: expect.any(String) } });
    expect(document.paths['/api/v1/notes/{id}/publish/'].post.operationId).not.toBe(document.paths['/api/v1/notes/{id}/publish/'].delete.operationId);
    expect(document.paths).not.toHaveProperty(['/api/v1/notes/{id}/unpublish/']);
    expect(document.paths['/api/v1/notes/mine/']).toHaveProperty('get');
  });

  it('document their bodies: a declared one as a schema named after the action, any JSON otherwise, none where none is taken', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    const body = (path: string) => document.paths[path].post.requestBody;
    // As JSON or as an HTML form's fields, which the parser reads alike.
    const scheduleBody = { schema: { $ref: '#/components/schemas/NotesScheduleBody' } };
    expect(body('/api/v1/notes/{id}/schedule/')).toEqual({ required: true, content: { 'application/json': scheduleBody, 'application/x-www-form-urlencoded': scheduleBody } });
    expect(document.components.schemas.NotesScheduleBody).toMatchObject({
      type: 'object',
      properties: { at: { type: 'string', format: 'date-time' }, channel: { type: 'string', maxLength: 10 }, repeat: { type: 'integer' } },
      required: ['at', 'channel'],
      additionalProperties: false,
    });
    expect(body('/api/v1/notes/copy/').content['application/json'].schema.$ref).toBe('#/components/schemas/NotesCopyBody');
    expect(document.components.schemas.NotesCopyBody).toMatchObject({ required: ['text'], additionalProperties: true });
    expect(body('/api/v1/notes/{id}/publish/')).toMatchObject({ required: true, content: { 'application/json': { schema: { description: expect.any(String) } } } });
    expect(body('/api/v1/notes/{id}/pin/')).toBeUndefined();
    expect(document.paths['/api/v1/notes/{id}/schedule/'].post.responses).toHaveProperty('415');
    // The app's own routes here declare no schema; the rest lints clean.
    const ownRoutes = /#\/paths\/~1(whoami|audit|limited)\//;
    expect((await lintProblems(document)).filter((problem) => !ownRoutes.test(problem))).toEqual([]);
  });

  it('are listed on the browsable page', async () => {
    const detail = await api.request('GET', `/api/v1/notes/${note}/`, { token: alice.token, headers: { accept: 'text/html' } });
    expect(detail.body).toContain(`href="/api/v1/notes/${note}/highlight/"`);
    expect(detail.body).not.toContain('href="/api/v1/notes/mine/"');
    const list = await api.request('GET', '/api/v1/notes/', { token: alice.token, headers: { accept: 'text/html' } });
    expect(list.body).toContain('href="/api/v1/notes/mine/"');
  });
});

describe('the app’s own routes', () => {
  it('see the authenticated user, and refuse a bad credential as the API does', async () => {
    expect((await api.request('GET', '/whoami', { token: alice.token })).json).toEqual({ user: 'alice' });
    expect((await api.request('GET', '/whoami')).json).toEqual({ user: null });
    const bad = await api.request('GET', '/whoami', { token: 'not-a-token' });
    expect(bad.status).toBe(401);
  });

  it('check permissions: 401 anonymous, 403 without, 200 with', async () => {
    expect((await api.request('GET', '/audit')).status).toBe(401);
    expect((await api.request('GET', '/audit', { token: alice.token })).status).toBe(403);
    expect((await api.request('GET', '/audit', { token: publisher.token })).json).toEqual({ audited: true });
  });

  it('count in a throttle bucket', async () => {
    for (let request = 0; request < 2; request += 1) expect((await api.request('GET', '/limited', { token: bob.token })).status).toBe(200);
    const limited = await api.request('GET', '/limited', { token: bob.token });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
  });
});
