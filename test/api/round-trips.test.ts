/**
 * The statements a request sends to the database, counted: on PostgreSQL a detail read
 * authenticated by a token finds the token's user and the record in one statement (one round
 * trip), and a list reads its count and its page in one; SQLite, in-process, reads them apart.
 * Either way the answers and refusals, and their order, are the same. Writes are counted too
 * (BEGIN and COMMIT are not statements the app builds, so they are not counted).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import service from '../../src/service/app.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { testDialect } from '../support/database.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
const sent: string[] = [];
/** Statements a plain detail read sends. */
const detailStatements = testDialect === 'postgres' ? 1 : 2;

const Note = model('notes', { id: fields.id(), text: fields.string({ maxLength: 100 }) });
/** The service and a collection whose checks never look at a record (no object permission). */
const withNotes = withGeneratedMigrations(
  defineApp({
    ...service,
    collections: [...service.collections, collection('notes', { serializer: serializer(Note, { fields: ['id', 'text'], readOnly: ['id'] }) })],
  }),
);

beforeAll(async () => {
  // The statements a write needs of itself: the history adds a transaction and its INSERT to each (docs/admin.md).
  api = await startApi({ HISTORY: 'false' }, withNotes, { appDatabase: recording(sent) });
  alice = await api.user('alice');
  bob = await api.user('bob');
});
afterAll(() => api.close());
beforeEach(() => {
  sent.length = 0;
});

describe('a detail read authenticated by a token', () => {
  it('is one statement on PostgreSQL that reads the token and the record (two on SQLite)', async () => {
    const reply = await api.request('GET', `/api/v1/users/${bob.id}/`, { token: alice.token });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ id: bob.id, username: 'bob' });
    expect(sent).toHaveLength(detailStatements);
    expect(sent.join('\n')).toMatch(/"auth_tokens"/);
    expect(sent.at(-1)).toMatch(/"users"\."id" = /);
  });

  it('answers 404 for a missing record, in as many statements', async () => {
    const reply = await api.request('GET', '/api/v1/users/999999/', { token: alice.token });
    expect(reply.status).toBe(404);
    expect(reply.json.code).toBe('not_found');
    expect(sent).toHaveLength(detailStatements);
  });

  it('refuses an unknown token with 401 whether or not the record exists', async () => {
    for (const id of [bob.id, 999999]) {
      const reply = await api.request('GET', `/api/v1/users/${id}/`, { token: `rf_${'Z'.repeat(43)}` });
      expect(reply.status).toBe(401);
      expect(reply.json).toEqual({ error: 'Invalid token.', code: 'authentication_failed' });
    }
  });

  it('refuses the token of a deactivated user with 401', async () => {
    const carol = await api.user('carol');
    expect((await api.request('GET', `/api/v1/users/${bob.id}/`, { token: carol.token })).status).toBe(200);
    await api.database.db.updateTable('users').set({ is_active: 0 }).where('id', '=', carol.id).execute();
    const reply = await api.request('GET', `/api/v1/users/${bob.id}/`, { token: carol.token });
    expect(reply.status).toBe(401);
    expect(reply.json.code).toBe('authentication_failed');
  });

  it('still refuses a bad token before a bad id (401, not 400), reading the id only after authentication', async () => {
    const reply = await api.request('GET', '/api/v1/users/0/', { token: `rf_${'Z'.repeat(43)}` });
    expect(reply.status).toBe(401);
    expect((await api.request('GET', '/api/v1/users/0/', { token: alice.token })).status).toBe(400);
  });

  it('with fields= reads the narrowed record apart: two statements, the chosen fields only', async () => {
    const reply = await api.request('GET', `/api/v1/users/${bob.id}/?fields=id,username`, { token: alice.token });
    expect(reply.json).toEqual({ id: bob.id, username: 'bob' });
    expect(sent).toHaveLength(2);
  });
});

describe('a list', () => {
  /** The token lookup, then the count and the page: one statement on PostgreSQL, two on SQLite. */
  const pageStatements = testDialect === 'postgres' ? 2 : 3;
  const list = (query: string) => api.request('GET', `/api/v1/users/${query}`, { token: alice.token });

  it('reads its count and its page in one statement on PostgreSQL, in order', async () => {
    const reply = await list('?username__in=alice,bob&ordering=-username&page_size=1&page=2');
    expect(reply.status).toBe(200);
    expect(reply.json.count).toBe(2);
    expect(reply.json.results.map((user: { username: string }) => user.username)).toEqual(['alice']);
    expect(reply.json.next).toBeNull();
    expect(sent).toHaveLength(pageStatements);
  });

  it('answers an empty page and a page past the last as before', async () => {
    const empty = await list('?username__in=nobody');
    expect(empty.json).toMatchObject({ count: 0, results: [], next: null, previous: null });
    expect(sent).toHaveLength(2);
    sent.length = 0;
    const past = await list('?username__in=alice,bob&page_size=1&page=3');
    expect(past.status).toBe(404);
    expect(past.json.error).toBe('Invalid page.');
    expect(sent).toHaveLength(2);
  });

  it('reads a search after its count: the page is chosen knowing how many match', async () => {
    const reply = await list('?search=alice');
    expect(reply.json.results.map((user: { username: string }) => user.username)).toEqual(['alice']);
    expect(sent).toHaveLength(3);
  });
});

describe('a write', () => {
  const postgres = testDialect === 'postgres';
  const article = async (title: string) => {
    const reply = await api.request('POST', '/api/v1/articles/', { token: alice.token, body: { title } });
    expect(reply.status).toBe(201);
    sent.length = 0;
    return reply.json as { id: number };
  };

  it('creates a record with its nested fields in one statement after the token on PostgreSQL (the nested read apart on SQLite)', async () => {
    const reply = await api.request('POST', '/api/v1/articles/', { token: alice.token, body: { title: 'Counted', author_id: alice.id } });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ title: 'Counted', author: { id: alice.id, username: 'alice' }, author_id: alice.id });
    expect(reply.headers.location).toMatch(new RegExp(`/api/v1/articles/${reply.json.id}/$`));
    // The token, then the INSERT … RETURNING (with the author joined, on PostgreSQL): no existence check first.
    expect(sent).toHaveLength(postgres ? 2 : 3);
    expect(sent[1]).toMatch(/^(with "written" as \()?insert into "articles"/);
    expect(sent.join('\n')).not.toMatch(/select 1 as "found"/);
  });

  it('leaves a missing author to the foreign key, answering the same 400 under author_id, in as many statements', async () => {
    const editor = await api.user('editor', { permissions: ['articles.change'] });
    sent.length = 0;
    const reply = await api.request('POST', '/api/v1/articles/', { token: editor.token, body: { title: 'Ghost', author_id: 999999 } });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({
      error: 'Invalid input.',
      code: 'validation_failed',
      details: { author_id: ['Invalid id "999999": object does not exist.'] },
    });
    // SQLite's constraint does not say which key failed: the record's references are read after it.
    expect(sent).toHaveLength(postgres ? 2 : 3);
  });

  it('creates a bulk of records in one INSERT after the token, in the order sent (each nested read apart on SQLite)', async () => {
    const titles = ['First', 'Second', 'Third', 'Fourth'];
    const reply = await api.request('POST', '/api/v1/articles/', { token: alice.token, body: titles.map((title) => ({ title })) });
    expect(reply.status).toBe(201);
    expect(reply.json.map((record: { title: string }) => record.title)).toEqual(titles);
    expect(reply.json[3]).toMatchObject({ author: { id: alice.id, username: 'alice' } });
    expect(sent.filter((statement) => /insert into "articles"/.test(statement))).toHaveLength(1);
    expect(sent).toHaveLength(postgres ? 2 : 2 + titles.length);
  });

  it('refuses a bulk create whole when one record names a missing author, the error under its index', async () => {
    const editor = await api.user('editor3', { permissions: ['articles.change'] });
    const before = (await api.request('GET', '/api/v1/articles/', { token: alice.token })).json.count;
    const body = [{ title: 'Fine', author_id: bob.id }, { title: 'Ghost', author_id: 999999 }, { title: 'Also fine' }];
    const reply = await api.request('POST', '/api/v1/articles/', { token: editor.token, body });
    expect(reply.status).toBe(400);
    expect(reply.json.details).toEqual({ '1.author_id': ['Invalid id "999999": object does not exist.'] });
    expect((await api.request('GET', '/api/v1/articles/', { token: alice.token })).json.count).toBe(before);
  });

  it('refuses an update naming a missing author, and keeps the record', async () => {
    const editor = await api.user('editor2', { permissions: ['articles.change'] });
    const { id } = await article('Kept');
    const reply = await api.request('PATCH', `/api/v1/articles/${id}/`, { token: editor.token, body: { author_id: 999999 } });
    expect(reply.status).toBe(400);
    expect(reply.json.details).toEqual({ author_id: ['Invalid id "999999": object does not exist.'] });
    const read = await api.request('GET', `/api/v1/articles/${id}/`, { token: alice.token });
    expect(read.json).toMatchObject({ title: 'Kept', author_id: alice.id });
  });

  it('updates with the token and record read together, then one UPDATE … RETURNING conditional on the row as read, on PostgreSQL', async () => {
    const { id } = await article('Before');
    const reply = await api.request('PATCH', `/api/v1/articles/${id}/`, { token: alice.token, body: { title: 'After' } });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ id, title: 'After', author: { id: alice.id, username: 'alice' } });
    // The article's update permission (articles.change, or its author) passes its author without reading their permissions.
    // PostgreSQL: the token with the record, the UPDATE … RETURNING (no locked read: the row is unchanged since).
    // SQLite: the token and the record apart, the locked read, the UPDATE … RETURNING and the nested read.
    expect(sent).toHaveLength(postgres ? 2 : 5);
    expect(sent.join('\n')).not.toMatch(/"auth_user_permissions"/);
    const updates = sent.filter((text) => /update "articles"/.test(text));
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatch(postgres ? /^with "written" as \(update "articles" .* returning / : /^update "articles" .* returning /);

    const note = await api.request('POST', '/api/v1/notes/', { token: alice.token, body: { text: 'draft' } });
    sent.length = 0;
    const changed = await api.request('PATCH', `/api/v1/notes/${note.json.id}/`, { token: alice.token, body: { text: 'final' } });
    expect(changed.json).toEqual({ id: note.json.id, text: 'final' });
    // The token with the record and the conditional UPDATE … RETURNING (PostgreSQL); the token, the record, the locked
    // read and the UPDATE (SQLite). Nothing asks for a permission, so none is read, in the transaction or before it.
    expect(sent).toHaveLength(postgres ? 2 : 4);
    expect(sent.join('\n')).not.toMatch(/"auth_user_permissions"/);
  });

  it('checks If-Match on the locked record: a stale ETag is 412 and stores nothing', async () => {
    const { id } = await article('Tagged');
    const etag = (await api.request('GET', `/api/v1/articles/${id}/`, { token: alice.token })).headers.etag as string;
    expect((await api.request('PATCH', `/api/v1/articles/${id}/`, { token: alice.token, body: { title: 'One' }, headers: { 'if-match': etag } })).status).toBe(200);
    const stale = await api.request('PATCH', `/api/v1/articles/${id}/`, { token: alice.token, body: { title: 'Two' }, headers: { 'if-match': etag } });
    expect(stale.status).toBe(412);
    expect((await api.request('GET', `/api/v1/articles/${id}/`, { token: alice.token })).json.title).toBe('One');
  });

  it('deletes in one statement after the token when nothing needs the record first', async () => {
    const created = await api.request('POST', '/api/v1/notes/', { token: alice.token, body: { text: 'gone soon' } });
    sent.length = 0;
    const reply = await api.request('DELETE', `/api/v1/notes/${created.json.id}/`, { token: alice.token });
    expect(reply.status).toBe(204);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatch(/^delete from "notes"/);
    sent.length = 0;
    const again = await api.request('DELETE', `/api/v1/notes/${created.json.id}/`, { token: alice.token });
    expect(again.status).toBe(404);
    expect(again.json.code).toBe('not_found');
    expect(sent).toHaveLength(2);
  });

  it('reads and locks the record first when a delete has an If-Match, or an object permission it cannot carry', async () => {
    const note = await api.request('POST', '/api/v1/notes/', { token: alice.token, body: { text: 'tagged' } });
    const stale = await api.request('DELETE', `/api/v1/notes/${note.json.id}/`, { token: alice.token, headers: { 'if-match': '"stale"' } });
    expect(stale.status).toBe(412);
    const current = (await api.request('GET', `/api/v1/notes/${note.json.id}/`, { token: alice.token })).headers.etag as string;
    sent.length = 0;
    expect((await api.request('DELETE', `/api/v1/notes/${note.json.id}/`, { token: alice.token, headers: { 'if-match': current } })).status).toBe(204);
    // The token, the locked read, the DELETE: nothing asks for a permission, so none is read (one asked in the
    // transaction would be read through it: permissions-in-transaction.test.ts).
    expect(sent).toHaveLength(3);
    expect(sent.join('\n')).not.toMatch(/"auth_user_permissions"/);

    // The author check is carried in the DELETE (delete-conditions.test.ts): read only when it deletes nothing.
    const { id } = await article('Owned');
    sent.length = 0;
    expect((await api.request('DELETE', `/api/v1/articles/${id}/`, { token: bob.token })).status).toBe(403);
    // The token, the user's permissions (articles.delete, or the author), the DELETE, then the record read to tell 403 from 404.
    expect(sent).toHaveLength(4);
    expect((await api.request('GET', `/api/v1/articles/${id}/`, { token: alice.token })).status).toBe(200);
    sent.length = 0;
    expect((await api.request('DELETE', `/api/v1/articles/${id}/`, { token: alice.token })).status).toBe(204);
    // The token, the user's permissions, the DELETE naming the author.
    expect(sent).toHaveLength(3);
    expect(sent[2]).toMatch(/^delete .*"author_id" = /);
  });
});
