/**
 * An update that checks a record (If-Match, object permissions) must not write over a change made
 * after the check read it. Here another writer changes the record right after the request has read
 * it: on PostgreSQL the update is conditional on the row as read and, matching nothing, reads the
 * record again under a lock; on SQLite the record is read again under the write's transaction.
 * Either way the stale ETag is refused and the other writer's change is kept.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StoreDatabase } from '../../src/store/database.js';
import service from '../../src/service/app.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let alice: TestUser;
/** Set to a change: made once, by another writer, right after the request's next read of an article. */
let interloper: (() => Promise<unknown>) | undefined;

/** The database with `interloper` run after the first read of an article the app sends. */
function interrupted(database: StoreDatabase): StoreDatabase {
  return {
    ...database,
    async run(text, parameters) {
      const rows = await database.run(text, parameters);
      const change = interloper;
      if (change && /^select .*from "articles"/i.test(text)) {
        interloper = undefined;
        await change();
      }
      return rows;
    },
  };
}

beforeAll(async () => {
  api = await startApi({}, service, { appDatabase: interrupted });
  alice = await api.user('alice');
});
afterAll(() => api.close());

it('refuses an If-Match that held when the record was read but not when it is written, and keeps the other change', async () => {
  const created = await api.request('POST', '/api/v1/articles/', { token: alice.token, body: { title: 'First' } });
  const { id } = created.json as { id: number };
  const etag = created.headers.etag as string;
  interloper = () => api.database.db.updateTable('articles').set({ title: 'Theirs' }).where('id', '=', id).execute();

  const reply = await api.request('PATCH', `/api/v1/articles/${id}/`, { token: alice.token, body: { title: 'Mine' }, headers: { 'if-match': etag } });

  expect(interloper).toBeUndefined();
  expect(reply.status).toBe(412);
  expect((await api.request('GET', `/api/v1/articles/${id}/`, { token: alice.token })).json.title).toBe('Theirs');
});

it('writes over a change made after the read when nothing is checked against it, as a plain update does', async () => {
  const created = await api.request('POST', '/api/v1/articles/', { token: alice.token, body: { title: 'First', body: 'kept' } });
  const { id } = created.json as { id: number };
  interloper = () => api.database.db.updateTable('articles').set({ body: 'theirs' }).where('id', '=', id).execute();

  const reply = await api.request('PATCH', `/api/v1/articles/${id}/`, { token: alice.token, body: { title: 'Mine' } });

  expect(interloper).toBeUndefined();
  expect(reply.status).toBe(200);
  // Only the fields sent are written: the other writer's body stays, and the reply shows it.
  expect(reply.json).toMatchObject({ title: 'Mine', body: 'theirs' });
});
