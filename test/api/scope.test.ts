/**
 * A collection's scope: each user reaches only their own notes. Another user's note is 404 on
 * detail, update and delete, and absent from lists, counts, cursor pages and nested reads; a bulk
 * create that would store a note outside the scope stores nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, serializer, storeCondition, User } from '../../src/framework/index.js';
import { Note } from '../support/owned-notes.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { testDialect } from '../support/database.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const owner = serializer(User, { fields: ['id', 'username'] });
const noteSerializer = serializer(Note, {
  fields: ['id', 'text', 'owner', 'owner_id'],
  nested: { owner: { source: 'owner_id', serializer: owner } },
});
const mine = ({ user }: { user: { id: number } | null }) => ({ owner_id: user?.id ?? null });

const app = withGeneratedMigrations(defineApp({
  collections: [
    collection('notes', { serializer: noteSerializer, scope: mine, bulkCreate: { max: 10 }, filterFields: ['text'], orderingFields: ['text'] }),
    collection('note-pages', { serializer: noteSerializer, scope: mine, pagination: 'cursor', pageSize: 2, orderingFields: ['text'] }),
    // The escape hatch: a condition the filter vocabulary cannot say (a subquery), in the store's terms.
    collection('long-notes', {
      serializer: noteSerializer,
      scope: ({ user }) => [
        { field: 'owner_id', lookup: 'exact', value: user?.id ?? 0 },
        storeCondition((eb, table) => eb(eb.fn('length', [eb.ref(`${table}.text`)]), '>', 5)),
      ],
    }),
  ],
}));

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let alices: number;
let bobs: number;
const sent: string[] = [];

beforeAll(async () => {
  // The statements a write needs of itself: the history adds a transaction and its INSERT to each (docs/admin.md).
  api = await startApi({ HISTORY: 'false' }, app, { appDatabase: recording(sent) });
  alice = await api.user('alice');
  bob = await api.user('bob');
  alices = (await api.request('POST', '/api/v1/notes/', { token: alice.token, body: { text: 'alice one' } })).json.id;
  await api.request('POST', '/api/v1/notes/', { token: alice.token, body: { text: 'alice two' } });
  await api.request('POST', '/api/v1/notes/', { token: alice.token, body: { text: 'a' } });
  bobs = (await api.request('POST', '/api/v1/notes/', { token: bob.token, body: { text: 'bob one' } })).json.id;
});
afterAll(() => api.close());

const texts = (reply: { json: { results: { text: string }[] } }) => reply.json.results.map((note) => note.text).sort();

describe('a scoped collection', () => {
  it('lists and counts only the requesting user’s records, with their nested owner', async () => {
    const listed = await api.request('GET', '/api/v1/notes/', { token: bob.token });
    expect(listed.json).toMatchObject({ count: 1, results: [{ id: bobs, text: 'bob one', owner: { id: bob.id, username: 'bob' } }] });
    const filtered = await api.request('GET', '/api/v1/notes/?text__startswith=alice&page_size=1', { token: alice.token });
    expect(filtered.json.count).toBe(2);
    const nested = await api.request('GET', '/api/v1/notes/?fields=owner.username', { token: alice.token });
    expect(nested.json.results).toEqual([{ owner: { username: 'alice' } }, { owner: { username: 'alice' } }, { owner: { username: 'alice' } }]);
    const counted = await api.request('GET', '/api/v1/notes/', { token: alice.token, headers: { prefer: 'count=none' } });
    expect(counted.json.results).toHaveLength(3);
  });

  it('pages by cursor through the scope only', async () => {
    const first = await api.request('GET', '/api/v1/note-pages/?ordering=text', { token: alice.token });
    expect(texts(first)).toEqual(['a', 'alice one']);
    const second = await api.request('GET', first.json.next.replace(/^https?:\/\/[^/]+/, ''), { token: alice.token });
    expect(texts(second)).toEqual(['alice two']);
    expect(second.json.next).toBeNull();
    const bobsPage = await api.request('GET', '/api/v1/note-pages/', { token: bob.token });
    expect(texts(bobsPage)).toEqual(['bob one']);
  });

  it('answers 404, never 403, for another user’s record, and leaves it as it was', async () => {
    expect((await api.request('GET', `/api/v1/notes/${alices}/`, { token: bob.token })).status).toBe(404);
    expect((await api.request('PATCH', `/api/v1/notes/${alices}/`, { token: bob.token, body: { text: 'taken' } })).status).toBe(404);
    expect((await api.request('PUT', `/api/v1/notes/${alices}/`, { token: bob.token, body: { text: 'taken' } })).status).toBe(404);
    expect((await api.request('DELETE', `/api/v1/notes/${alices}/`, { token: bob.token })).status).toBe(404);
    const still = await api.request('GET', `/api/v1/notes/${alices}/`, { token: alice.token });
    expect(still.json).toMatchObject({ id: alices, text: 'alice one' });
    const renamed = await api.request('PATCH', `/api/v1/notes/${bobs}/`, { token: bob.token, body: { text: 'bob renamed' } });
    expect(renamed.json).toMatchObject({ id: bobs, text: 'bob renamed' });
  });

  it('updates the user’s own record, on PostgreSQL by one UPDATE conditional on the row as read within the scope', async () => {
    const note = (await api.request('POST', '/api/v1/notes/', { token: alice.token, body: { text: 'draft' } })).json.id;
    sent.length = 0;
    const changed = await api.request('PATCH', `/api/v1/notes/${note}/`, { token: alice.token, body: { text: 'final' } });
    expect(changed.json).toMatchObject({ id: note, text: 'final', owner: { id: alice.id, username: 'alice' } });
    const postgres = testDialect === 'postgres';
    // The token, the record read within the scope, then on PostgreSQL the conditional UPDATE (its nested owner in
    // the same statement); on SQLite the locked read within the scope, the UPDATE and the nested read. Nothing in the
    // transaction asks for a permission, so none is read (docs/authentication.md).
    expect(sent).toHaveLength(postgres ? 3 : 5);
    expect(sent.join('\n')).not.toMatch(/"auth_user_permissions"/);
    const updates = sent.filter((text) => /update "notes"/.test(text));
    expect(updates).toHaveLength(1);
    if (postgres) {
      expect(updates[0]).toMatch(/"xmin"::text = \$/);
      expect(sent.filter((text) => /for update/.test(text))).toEqual([]);
    }
  });

  it('deletes the user’s own record', async () => {
    const note = await api.request('POST', '/api/v1/notes/', { token: bob.token, body: { text: 'short-lived' } });
    expect((await api.request('DELETE', `/api/v1/notes/${note.json.id}/`, { token: bob.token })).status).toBe(204);
    expect((await api.request('GET', `/api/v1/notes/${note.json.id}/`, { token: bob.token })).status).toBe(404);
  });

  it('refuses a bulk create with a record outside the scope, storing none of them', async () => {
    const reply = await api.request('POST', '/api/v1/notes/', {
      token: bob.token,
      body: [{ text: 'mine' }, { text: 'planted', owner_id: alice.id }],
    });
    expect(reply.status).toBe(403);
    const listed = await api.request('GET', '/api/v1/notes/?text=mine', { token: bob.token });
    expect(listed.json.count).toBe(0);
    const created = await api.request('POST', '/api/v1/notes/', { token: bob.token, body: [{ text: 'mine' }, { text: 'also mine' }] });
    expect(created.status).toBe(201);
    expect(created.json.map((note: { owner: unknown }) => note.owner)).toEqual([{ id: bob.id, username: 'bob' }, { id: bob.id, username: 'bob' }]);
  });

  it('takes a store-level condition where the filter vocabulary has no word for it', async () => {
    const listed = await api.request('GET', '/api/v1/long-notes/', { token: alice.token });
    expect(texts(listed)).toEqual(['alice one', 'alice two']);
    const short = (await api.request('GET', '/api/v1/notes/?text=a', { token: alice.token })).json.results[0].id;
    expect((await api.request('GET', `/api/v1/long-notes/${short}/`, { token: alice.token })).status).toBe(404);
  });

  it('shows the browsable page of the scope only', async () => {
    const page = await api.request('GET', '/api/v1/notes/', { token: bob.token, headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('bob renamed');
    expect(page.body).not.toContain('alice one');
  });
});
