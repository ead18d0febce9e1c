/**
 * A custom action passes through every stage its built-in action of the same shape does (views.ts's
 * one pipeline): the collection's envelope in and out (or neither, with `envelope: false`), the
 * password-hash throttle for a declared body with a password, the record read announced so that a
 * token lookup and the record are one statement on PostgreSQL, and the ordinary order of refusals.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allowAny, collection, defineApp, fields, hasPermission, isAuthenticated, model, serializer, User } from '../../src/framework/index.js';
import service from '../../src/service/app.js';
import { Note } from '../support/owned-notes.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { testDialect } from '../support/database.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const notes = serializer(Note, { fields: ['id', 'text', 'owner_id'], readOnly: ['owner_id'] });

const enveloped = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('notes', {
        serializer: notes,
        permissions: [isAuthenticated],
        scope: ({ user }) => ({ owner_id: user?.id ?? null }),
        envelope: { record: 'note', list: 'notes', count: 'notesCount' },
        actions: {
          // Stands for partial_update: its body and answer travel under `note`.
          retitle: {
            detail: true,
            method: 'POST',
            permissions: [hasPermission('notes.retitle')],
            body: { text: fields.string({ maxLength: 10 }) },
            response: { type: 'object', properties: { id: { type: 'integer' }, text: { type: 'string' } } },
            handler: ({ record, body }) => ({ id: record!.id, text: (body as { text: string }).text }),
          },
          // Stands for create: any JSON, handed over as it was inside the envelope.
          echo: { detail: false, method: 'POST', handler: ({ body }) => ({ received: body }) },
          // Stands for list: an array answers under the list key, with the count.
          texts: {
            detail: false,
            method: 'GET',
            response: { type: 'array', items: { type: 'object', properties: { text: { type: 'string' } } } },
            handler: () => [{ text: 'a' }, { text: 'b' }],
          },
          // Also stands for list, but answers one object (its answer undeclared): under the record key.
          tally: { detail: false, method: 'GET', handler: () => ({ total: 2 }) },
          // Takes and answers something other than a note.
          raw: { detail: true, method: 'POST', envelope: false, handler: ({ record, body }) => ({ id: record!.id, received: body }) },
          // Text of its own media type, sent as written.
          plain: { detail: true, method: 'GET', mediaType: 'text/plain', handler: ({ record }) => `note ${String(record!.id)}` },
        },
      }),
    ],
  }),
);

describe('on a collection with an envelope', () => {
  let api: TestApi;
  let alice: TestUser;
  let bob: TestUser;
  let editor: TestUser;
  let mine: number;
  let others: number;

  beforeAll(async () => {
    api = await startApi({}, enveloped);
    alice = await api.user('alice');
    bob = await api.user('bob');
    editor = await api.user('editor', { permissions: ['notes.retitle'] });
    mine = (await api.request('POST', '/api/v1/notes/', { token: editor.token, body: { note: { text: 'mine' } } })).json.note.id;
    others = (await api.request('POST', '/api/v1/notes/', { token: bob.token, body: { note: { text: 'bob' } } })).json.note.id;
  });
  afterAll(() => api.close());

  const retitle = (id: number, body: unknown, token?: string) => api.request('POST', `/api/v1/notes/${id}/retitle/`, { token, body });

  it('hands the handler the body from inside the envelope, and wraps a record’s answer in the record key', async () => {
    expect(await retitle(mine, { note: { text: 'new' } }, editor.token)).toMatchObject({ status: 200, json: { note: { id: mine, text: 'new' } } });
    const echoed = await api.request('POST', '/api/v1/notes/echo/', { token: alice.token, body: { note: { any: ['json'] } } });
    expect(echoed).toMatchObject({ status: 200, json: { note: { received: { any: ['json'] } } } });
  });

  it('refuses a body outside the envelope with 400 naming the key', async () => {
    const bare = await retitle(mine, { text: 'bare' }, editor.token);
    expect(bare.status).toBe(400);
    expect(bare.json).toMatchObject({ code: 'validation_failed', details: { note: ['This field is required.'] } });
    expect((await api.request('POST', '/api/v1/notes/echo/', { token: alice.token, body: { any: 1 } })).json).toMatchObject({ details: { note: [expect.any(String)] } });
  });

  it('wraps an array in the list key, with the count, as a list is', async () => {
    expect(await api.request('GET', '/api/v1/notes/texts/', { token: alice.token })).toMatchObject({
      status: 200,
      json: { notes: [{ text: 'a' }, { text: 'b' }], notesCount: 2 },
    });
    expect((await api.request('GET', '/api/v1/notes/tally/', { token: alice.token })).json).toEqual({ note: { total: 2 } });
  });

  it('leaves the body and the answer alone with `envelope: false`, where an action of the same shape has them wrapped', async () => {
    const raw = await api.request('POST', `/api/v1/notes/${mine}/raw/`, { token: editor.token, body: { text: 'bare' } });
    expect(raw).toMatchObject({ status: 200, json: { id: mine, received: { text: 'bare' } } });
    const inside = await api.request('POST', `/api/v1/notes/${mine}/raw/`, { token: editor.token, body: { note: { text: 'x' } } });
    expect(inside.json).toEqual({ id: mine, received: { note: { text: 'x' } } });
    expect((await retitle(mine, { note: { text: 'x' } }, editor.token)).json).toEqual({ note: { id: mine, text: 'x' } });
  });

  it('sends text of its own media type as written, where the JSON answers of the same collection are wrapped', async () => {
    const plain = await api.request('GET', `/api/v1/notes/${mine}/plain/`, { token: editor.token });
    expect(plain).toMatchObject({ status: 200, body: `note ${mine}` });
    expect(plain.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect((await api.request('GET', '/api/v1/notes/tally/', { token: alice.token })).json).toEqual({ note: { total: 2 } });
  });

  it('documents the wrapped body and answer, and the bare ones of `envelope: false`', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    const operation = document.paths['/api/v1/notes/{id}/retitle/'].post;
    expect(operation.requestBody.content['application/json'].schema).toEqual({
      type: 'object',
      required: ['note'],
      properties: { note: { $ref: '#/components/schemas/NotesRetitleBody' } },
    });
    expect(operation.responses['200'].content['application/json'].schema).toMatchObject({ required: ['note'], properties: { note: { properties: { text: { type: 'string' } } } } });
    expect(document.paths['/api/v1/notes/texts/'].get.responses['200'].content['application/json'].schema).toMatchObject({
      required: ['notes', 'notesCount'],
      properties: { notes: { type: 'array' } },
    });
    expect(document.paths['/api/v1/notes/tally/'].get.responses['200'].content['application/json'].schema).toMatchObject({ required: ['note'] });
    const raw = document.paths['/api/v1/notes/{id}/raw/'].post;
    expect(raw.requestBody.content['application/json'].schema).not.toHaveProperty('required');
    expect(document.paths['/api/v1/notes/{id}/plain/'].get.responses['200'].content).toEqual({ 'text/plain': { schema: { type: 'string' } } });
  });

  it('refuses in the built-in order: 401, 403, then 404 for a record out of reach before judging the fields inside the envelope', async () => {
    // Refused before the envelope is looked at.
    expect((await retitle(mine, { text: 'bare' })).status).toBe(401);
    expect((await retitle(mine, { text: 'bare' }, alice.token)).status).toBe(403);
    const tooLong = { note: { text: 'x'.repeat(11) } };
    expect((await retitle(others, tooLong, editor.token)).status).toBe(404);
    expect((await retitle(999999, tooLong, editor.token)).status).toBe(404);
    const invalid = await retitle(mine, tooLong, editor.token);
    expect(invalid).toMatchObject({ status: 400, json: { code: 'validation_failed', details: { text: [expect.stringContaining('10')] } } });
  });

  it('answers 406 for a media type it cannot answer, JSON or its own', async () => {
    expect((await api.request('GET', '/api/v1/notes/texts/', { token: alice.token, headers: { accept: 'text/csv' } })).status).toBe(406);
    expect((await api.request('GET', `/api/v1/notes/${mine}/plain/`, { token: editor.token, headers: { accept: 'application/json' } })).status).toBe(406);
    const page = await api.request('GET', '/api/v1/notes/texts/', { token: alice.token, headers: { accept: 'text/html' } });
    expect(page.body).toContain('&quot;notesCount&quot;: 2');
  });
});

const Memo = model('memos', { id: fields.id(), text: fields.string({ maxLength: 100 }) });
const person = serializer(User, { name: 'Person', fields: ['id', 'username', 'password'], writeOnly: ['password'] });

const withActions = withGeneratedMigrations(
  defineApp({
    ...service,
    collections: [
      ...service.collections,
      // No scope and no object permission: a detail read can be announced before authentication.
      collection('memos', {
        serializer: serializer(Memo, { fields: ['id', 'text'], readOnly: ['id'] }),
        actions: { shout: { detail: true, method: 'GET', handler: ({ record }) => ({ text: String(record!.text).toUpperCase() }) } },
      }),
      collection('signups', {
        serializer: person,
        permissions: [allowAny],
        // Hashes the password as the built-in create does, without storing anyone.
        actions: { check: { detail: false, method: 'POST', body: person, handler: ({ body }) => ({ username: (body as { username: string }).username }) } },
      }),
    ],
  }),
);

describe('a detail action on an unscoped collection, authenticated by a token', () => {
  const sent: string[] = [];
  let api: TestApi;
  let alice: TestUser;
  let memo: number;

  beforeAll(async () => {
    api = await startApi({}, withActions, { appDatabase: recording(sent) });
    alice = await api.user('alice');
    memo = Number((await api.database.db.insertInto('memos').values({ text: 'quiet' }).returning('id').executeTakeFirstOrThrow()).id);
  });
  afterAll(() => api.close());
  beforeEach(() => {
    sent.length = 0;
  });

  it('reads the token and the record in as many statements as a retrieve: one on PostgreSQL', async () => {
    expect(await api.request('GET', `/api/v1/memos/${memo}/`, { token: alice.token })).toMatchObject({ status: 200, json: { text: 'quiet' } });
    const retrieve = sent.length;
    sent.length = 0;
    expect(await api.request('GET', `/api/v1/memos/${memo}/shout/`, { token: alice.token })).toMatchObject({ status: 200, json: { text: 'QUIET' } });
    expect(sent).toHaveLength(retrieve);
    expect(sent).toHaveLength(testDialect === 'postgres' ? 1 : 2);
    expect(sent.join('\n')).toMatch(/"auth_tokens"/);
    expect(sent.join('\n')).toMatch(/"memos"/);
  });

  it('still refuses a bad token with 401 and a missing record with 404, in as many statements as a retrieve', async () => {
    expect((await api.request('GET', `/api/v1/memos/${memo}/shout/`, { token: `rf_${'Z'.repeat(43)}` })).status).toBe(401);
    sent.length = 0;
    expect((await api.request('GET', '/api/v1/memos/999999/', { token: alice.token })).status).toBe(404);
    const retrieve = sent.length;
    sent.length = 0;
    expect((await api.request('GET', '/api/v1/memos/999999/shout/', { token: alice.token })).status).toBe(404);
    expect(sent).toHaveLength(retrieve);
  });
});

describe('a declared body with a password', () => {
  let api: TestApi | undefined;
  afterAll(() => api?.close());

  /** A request from `address` with no credential (inject's default address is 127.0.0.1). */
  const from = async (address: string, url: string, body: unknown) => {
    const response = await api!.app.inject({ method: 'POST', url, remoteAddress: address, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    return { status: response.statusCode, headers: response.headers, json: response.json() as Record<string, unknown> };
  };
  const credentials = (username: string) => ({ username, password: `${username}-password` });

  it('counts its hash against THROTTLE_SIGNUP for an anonymous caller, in the bucket the built-in create counts in', async () => {
    api = await startApi({ THROTTLE_SIGNUP: '2/min' }, withActions);
    const checked = await from('10.0.0.1', '/api/v1/signups/check/', credentials('ann'));
    expect(checked).toMatchObject({ status: 200, json: { username: 'ann' } });
    expect(checked.headers['ratelimit-limit']).toBe('2');
    expect(checked.headers['ratelimit-remaining']).toBe('1');
    expect((await from('10.0.0.1', '/api/v1/signups/', credentials('ben'))).headers['ratelimit-remaining']).toBe('0');
    const limited = await from('10.0.0.1', '/api/v1/signups/check/', credentials('cat'));
    expect(limited).toMatchObject({ status: 429, json: { code: 'throttled' } });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await from('10.0.0.1', '/api/v1/signups/', credentials('cat'))).status).toBe(429);
    // Another address has its own bucket; a body without a password hashes nothing, so is judged, not throttled.
    expect((await from('10.0.0.2', '/api/v1/signups/check/', credentials('cat'))).status).toBe(200);
    const unhashed = await from('10.0.0.1', '/api/v1/signups/check/', { username: 'dan' });
    expect(unhashed).toMatchObject({ status: 400, json: { code: 'validation_failed', details: { password: [expect.any(String)] } } });
  });
});
