/**
 * An update that checks a record (If-Match, object permissions) must not write over a change made
 * after the check read it. Here another writer changes the record right after the request has read
 * it: on PostgreSQL the update is conditional on the row as read and, matching nothing, reads the
 * record again under a lock; on SQLite the record is read again under the write's transaction.
 * Either way the stale ETag is refused and the other writer's change is kept.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import service from '../../src/service/app.js';
import { interloper } from '../support/interloper.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let alice: TestUser;
/** Another writer, changing the record right after the request's read of it. */
const other = interloper('articles');

beforeAll(async () => {
  api = await startApi({}, service, { appDatabase: other.database });
  alice = await api.user('alice');
});
afterAll(() => api.close());

it('refuses an If-Match that held when the record was read but not when it is written, and keeps the other change', async () => {
  const created = await api.request('POST', '/api/v1/articles/', { token: alice.token, body: { title: 'First' } });
  const { id } = created.json as { id: number };
  const etag = created.headers.etag as string;
  other.next(() => api.database.db.updateTable('articles').set({ title: 'Theirs' }).where('id', '=', id).execute());

  const reply = await api.request('PATCH', `/api/v1/articles/${id}/`, { token: alice.token, body: { title: 'Mine' }, headers: { 'if-match': etag } });

  expect(other.waiting).toBe(false);
  expect(reply.status).toBe(412);
  expect((await api.request('GET', `/api/v1/articles/${id}/`, { token: alice.token })).json.title).toBe('Theirs');
});

it('writes over a change made after the read when nothing is checked against it, as a plain update does', async () => {
  const created = await api.request('POST', '/api/v1/articles/', { token: alice.token, body: { title: 'First', body: 'kept' } });
  const { id } = created.json as { id: number };
  other.next(() => api.database.db.updateTable('articles').set({ body: 'theirs' }).where('id', '=', id).execute());

  const reply = await api.request('PATCH', `/api/v1/articles/${id}/`, { token: alice.token, body: { title: 'Mine' } });

  expect(other.waiting).toBe(false);
  expect(reply.status).toBe(200);
  // Only the fields sent are written: the other writer's body stays, and the reply shows it.
  expect(reply.json).toMatchObject({ title: 'Mine', body: 'theirs' });
});
