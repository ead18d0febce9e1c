/**
 * The history (Django's LogEntry): with HISTORY=true every write through the API and through the
 * admin is logged in its own transaction (by default the admin's only) (who, which record, how, the fields changed, never their values); a write a
 * hook or a constraint refuses leaves no entry; the admin's history page shows it, escaped, to
 * those who may view the collection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, permissionDenied, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { loggedIn, makeStaff } from '../support/admin-client.js';
import { testDialect } from '../support/database.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Note = model('notes', {
  id: fields.id(),
  title: fields.string({ maxLength: 100, unique: true }),
  body: fields.string({ maxLength: 200, default: '' }),
  secret: fields.string({ maxLength: 100, default: '' }),
});

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('notes', {
        serializer: serializer(Note, { fields: ['id', 'title', 'body', 'secret'] }),
        bulkCreate: { max: 5 },
        bulkDelete: 'filtered',
        filterFields: ['title'],
        hooks: {
          // Refused after the row is written: the write and its entry roll back together.
          afterUpdate: ({ record }) => {
            if (record.title === 'Doomed') throw permissionDenied('Not this title.');
          },
        },
      }),
    ],
  }),
);

let api: TestApi;
let boss: TestUser;
let stranger: TestUser;

interface Entry {
  user_id: unknown;
  collection: string;
  record_id: string;
  action: string;
  changed: string;
}

const entries = async (recordId?: string): Promise<Entry[]> => {
  let query = api.database.db.selectFrom('admin_log_entries').select(['user_id', 'collection', 'record_id', 'action', 'changed']).orderBy('id');
  if (recordId !== undefined) query = query.where('record_id', '=', recordId);
  return (await query.execute()) as Entry[];
};

beforeAll(async () => {
  api = await startApi({ THROTTLE_LOGIN: 'off', HISTORY: 'true' }, app);
  boss = await api.user('boss', { superuser: true });
  stranger = await api.user('stranger', { permissions: ['notes.add'] });
  for (const user of [boss, stranger]) await makeStaff(api, user.id);
});
afterAll(() => api.close());

describe('the history of writes', () => {
  it('logs API creates, changes and deletes with who, what and the fields changed, never values', async () => {
    const created = await api.request('POST', '/api/v1/notes/', { token: boss.token, body: { title: 'first', secret: 'hunter2' } });
    expect(created.status).toBe(201);
    const id = String((created.json as { id: number }).id);
    expect((await api.request('PATCH', `/api/v1/notes/${id}/`, { token: boss.token, body: { body: 'more', title: 'first' } })).status).toBe(200);
    expect((await api.request('DELETE', `/api/v1/notes/${id}/`, { token: boss.token })).status).toBe(204);
    const logged = await entries(id);
    expect(logged.map(({ action, collection, user_id }) => ({ action, collection, user: Number(user_id) }))).toEqual([
      { action: 'add', collection: 'notes', user: boss.id },
      { action: 'change', collection: 'notes', user: boss.id },
      { action: 'delete', collection: 'notes', user: boss.id },
    ]);
    expect(JSON.parse(logged[0]!.changed)).toEqual(expect.arrayContaining(['title', 'secret']));
    // Only the field whose value differs: the title was sent as it was.
    expect(JSON.parse(logged[1]!.changed)).toEqual(['body']);
    expect(JSON.stringify(await entries())).not.toContain('hunter2');
  });

  it('logs each record of a bulk create and of a bulk delete', async () => {
    const made = await api.request('POST', '/api/v1/notes/', { token: boss.token, body: [{ title: 'bulk-a' }, { title: 'bulk-b' }] });
    expect(made.status).toBe(201);
    const ids = (made.json as { id: number }[]).map((note) => String(note.id));
    expect((await api.request('DELETE', '/api/v1/notes/?title__startswith=bulk-', { token: boss.token })).status).toBe(204);
    for (const id of ids) expect((await entries(id)).map((entry) => entry.action)).toEqual(['add', 'delete']);
  });

  it('leaves no entry for a write a hook or a constraint refuses', async () => {
    const created = await api.request('POST', '/api/v1/notes/', { token: boss.token, body: { title: 'kept' } });
    const id = String((created.json as { id: number }).id);
    const before = (await entries()).length;
    const hooked = await api.request('PATCH', `/api/v1/notes/${id}/`, { token: boss.token, body: { title: 'Doomed' } });
    expect(hooked.status).toBe(403);
    const clash = await api.request('POST', '/api/v1/notes/', { token: boss.token, body: [{ title: 'fresh' }, { title: 'kept' }] });
    expect(clash.status).toBe(400);
    expect((await entries()).length).toBe(before);
    expect((await api.request('GET', `/api/v1/notes/${id}/`, { token: boss.token })).json).toMatchObject({ title: 'kept' });
  });

  it('logs the admin’s adds and changes, and shows them on the history page, escaped', async () => {
    const client = await loggedIn(api, 'boss');
    await client.get('/admin/notes/add/');
    const added = await client.post('/admin/notes/add/', { title: '<script>x</script>', body: 'b', secret: 'x', _continue: '' });
    expect(added.status, added.body.slice(-3000)).toBe(302);
    const id = /\/admin\/notes\/(\d+)\/change\//.exec(added.location!)![1]!;
    const form = await client.get(added.location!);
    expect(form.body).toContain(`href="/admin/notes/${id}/history/"`);
    expect((await client.post(`/admin/notes/${id}/change/`, { title: '<script>x</script>', body: 'changed', secret: 's3cret' })).status).toBe(302);
    expect((await entries(id)).map((entry) => [entry.action, Number(entry.user_id)])).toEqual([
      ['add', boss.id],
      ['change', boss.id],
    ]);
    const page = await client.get(`/admin/notes/${id}/history/`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('<script>x');
    expect(page.body).toContain('&lt;script>x&lt;/script>');
    expect(page.body).toContain('Changed body and secret.');
    expect(page.body).not.toContain('s3cret');
    expect(page.body).toMatch(/<td>boss<\/td>\s*<td>Added\.<\/td>/);
  });

  it('refuses the history page to a staff user without view, and answers 404 for no record', async () => {
    const created = await api.request('POST', '/api/v1/notes/', { token: boss.token, body: { title: 'hidden' } });
    const id = String((created.json as { id: number }).id);
    expect((await (await loggedIn(api, 'stranger')).get(`/admin/notes/${id}/history/`)).status).toBe(403);
    expect((await (await loggedIn(api, 'boss')).get('/admin/notes/999999/history/')).status).toBe(404);
  });

  it("logs the admin's writes and not the API's by default (HISTORY unset), as Django's LogEntry", async () => {
    const plain = await startApi({ THROTTLE_LOGIN: 'off' }, app);
    try {
      const owner = await plain.user('owner', { superuser: true });
      await makeStaff(plain, owner.id);
      const created = await plain.request('POST', '/api/v1/notes/', { token: owner.token, body: { title: 'by the API' } });
      expect(created.status).toBe(201);
      expect((await plain.request('PATCH', `/api/v1/notes/${created.json.id}/`, { token: owner.token, body: { body: 'x' } })).status).toBe(200);
      const client = await loggedIn(plain, 'owner');
      await client.get('/admin/notes/add/');
      const added = await client.post('/admin/notes/add/', { title: 'by the admin', body: 'b', secret: 's', _continue: '' });
      expect(added.status, added.body.slice(-3000)).toBe(302);
      const id = /\/admin\/notes\/(\d+)\/change\//.exec(added.location!)![1]!;
      expect((await client.post(`/admin/notes/${id}/change/`, { title: 'by the admin', body: 'changed', secret: 's' })).status).toBe(302);
      const logged = await plain.database.db.selectFrom('admin_log_entries').select(['record_id', 'action']).orderBy('id').execute();
      expect(logged).toEqual([
        { record_id: id, action: 'add' },
        { record_id: id, action: 'change' },
      ]);
      expect((await client.get(`/admin/notes/${id}/history/`)).body).toMatch(/<td>owner<\/td>\s*<td>Added\.<\/td>/);
      // The header the admin names its calls by is no client's to borrow: a guess is an API write, not logged.
      const guessed = await plain.request('POST', '/api/v1/notes/', { token: owner.token, body: { title: 'guessed' }, headers: { 'x-restfold-admin-call': 'guess' } });
      expect(guessed.status).toBe(201);
      expect(await plain.database.db.selectFrom('admin_log_entries').selectAll().execute()).toHaveLength(2);
    } finally {
      await plain.close();
    }
  });

  it("logs nothing with HISTORY=false, the admin's writes neither", async () => {
    const quiet = await startApi({ THROTTLE_LOGIN: 'off', HISTORY: 'false' }, app);
    try {
      const owner = await quiet.user('owner', { superuser: true });
      await makeStaff(quiet, owner.id);
      const created = await quiet.request('POST', '/api/v1/notes/', { token: owner.token, body: { title: 'unlogged' } });
      expect(created.status).toBe(201);
      expect((await quiet.request('PATCH', `/api/v1/notes/${created.json.id}/`, { token: owner.token, body: { body: 'x' } })).status).toBe(200);
      const client = await loggedIn(quiet, 'owner');
      await client.get('/admin/notes/add/');
      expect((await client.post('/admin/notes/add/', { title: 'unlogged too', body: 'b', secret: 's' })).status).toBe(302);
      expect(await quiet.database.db.selectFrom('admin_log_entries').selectAll().execute()).toEqual([]);
    } finally {
      await quiet.close();
    }
  });

  it.runIf(testDialect === 'postgres')('keeps one entry per write under 20 concurrent PATCHes', async () => {
    const created = await api.request('POST', '/api/v1/notes/', { token: boss.token, body: { title: 'busy' } });
    const id = String((created.json as { id: number }).id);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, index) => api.request('PATCH', `/api/v1/notes/${id}/`, { token: boss.token, body: { body: `edit ${index}` } }).then((reply) => reply.status)),
    );
    expect(statuses).toEqual(Array.from({ length: 20 }, () => 200));
    expect((await entries(id)).filter((entry) => entry.action === 'change')).toHaveLength(20);
  });
});
