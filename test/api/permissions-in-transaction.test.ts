/**
 * An app's own code asking `hasPermission` inside a write's transaction (a before-hook with
 * `inTransaction`, an after-hook, an object permission on a locked record, a custom action's or an
 * app route's `inTransaction`) is answered, through HTTP: asked first there, the request's
 * permissions are read through the transaction (an app route's as it is authenticated). On SQLite
 * the transaction holds the one write connection, so a read of them beside it would wait for ever;
 * a short timeout fails a hang.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, inTransaction, model, recordStore, serializer, type Permission } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const STAMP = 'memos.stamp';
const ARCHIVE = 'memos.archive';

const Memo = model('memos', {
  id: fields.id(),
  text: fields.string({ maxLength: 100 }),
  stamped: fields.boolean({ default: false }),
  checked: fields.boolean({ default: false }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});

const checks = serializer(Memo, { fields: ['id', 'checked'] });

// An object permission of the app's own, asked of the record a delete reads locked, in its transaction.
const archivable: Permission = {
  description: 'memos.archive for a stamped memo',
  hasPermission: ({ user }) => user !== null,
  hasObjectPermission: async ({ user, action }, record) => action !== 'destroy' || !record.stamped || ((await user?.hasPermission(ARCHIVE)) ?? false),
};

const memos = collection('memos', {
  serializer: serializer(Memo, { fields: ['id', 'text', 'stamped', 'checked'], readOnly: ['stamped', 'checked'] }),
  scope: ({ user }) => ({ owner_id: user?.id ?? null }),
  permissions: [archivable],
  hooks: {
    inTransaction: true,
    beforeCreate: async ({ user }) => ({ stamped: (await user?.hasPermission(STAMP)) ?? false }),
    beforeUpdate: async ({ user }) => ({ stamped: (await user?.hasPermission(STAMP)) ?? false }),
    // After the write, in its transaction, through the same user again.
    afterCreate: async ({ user, database, record }) => {
      if (await user?.hasPermission(STAMP)) await recordStore(database, checks, { name: 'memo' }).update(record.id as number, () => ({}), { checked: true });
    },
  },
  actions: {
    // A custom action that opens a transaction itself and asks within it, through Fastify's request.
    stamp: {
      detail: false,
      method: 'POST',
      body: false,
      handler: ({ request, database }) => inTransaction(database, async () => ({ held: (await request.user?.hasPermission(STAMP)) ?? false })),
    },
    // A GET custom action may open a transaction as well.
    held: {
      detail: false,
      method: 'GET',
      handler: ({ user, database }) => inTransaction(database, async () => ({ held: (await user?.hasPermission(STAMP)) ?? false })),
    },
  },
});

const app = withGeneratedMigrations(defineApp({
  collections: [memos],
  // An app route opening a transaction on the app's database, and asking within it.
  routes: (routes, { database }) => {
    routes.get('/stamp-held', (request) => inTransaction(database, async () => ({ held: (await request.user?.hasPermission(STAMP)) ?? false })));
  },
}));

let api: TestApi;
let stamper: TestUser;
let plain: TestUser;

beforeAll(async () => {
  api = await startApi({}, app);
  stamper = await api.user('stamper', { permissions: [STAMP] });
  plain = await api.user('plain');
});
afterAll(() => api.close());

// A hang fails here, long before the suite's own timeout.
const SHORT = { timeout: 5_000 };

describe('hasPermission inside a write’s transaction', () => {
  it('is answered in before- and after-hooks, for a holder and for one without it', SHORT, async () => {
    const held = await api.request('POST', '/api/v1/memos/', { token: stamper.token, body: { text: 'a' } });
    expect(held.status, held.body).toBe(201);
    expect(held.json).toMatchObject({ stamped: true });
    const read = await api.request('GET', `/api/v1/memos/${held.json.id}/`, { token: stamper.token });
    expect(read.json).toMatchObject({ stamped: true, checked: true });

    const without = await api.request('POST', '/api/v1/memos/', { token: plain.token, body: { text: 'b' } });
    expect(without.status).toBe(201);
    expect((await api.request('GET', `/api/v1/memos/${without.json.id}/`, { token: plain.token })).json).toMatchObject({ stamped: false, checked: false });

    const updated = await api.request('PATCH', `/api/v1/memos/${held.json.id}/`, { token: stamper.token, body: { text: 'c' } });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({ text: 'c', stamped: true });
  });

  it('is answered in an object permission checked on the record a delete locks', SHORT, async () => {
    const archiver = await api.user('archiver', { permissions: [STAMP, ARCHIVE] });
    for (const [user, status] of [[stamper, 403], [archiver, 204]] as const) {
      const memo = await api.request('POST', '/api/v1/memos/', { token: user.token, body: { text: 'old' } });
      expect(memo.json.stamped).toBe(true);
      const url = `/api/v1/memos/${memo.json.id}/`;
      const etag = (await api.request('GET', url, { token: user.token })).headers.etag as string;
      // If-Match: the record is read locked, and the object permission asked, in the delete's transaction.
      expect((await api.request('DELETE', url, { token: user.token, headers: { 'if-match': etag } })).status, user.username).toBe(status);
    }
  });

  it('is answered in a custom action’s own transaction, POST or GET', SHORT, async () => {
    for (const [user, held] of [[stamper, true], [plain, false]] as const) {
      const posted = await api.request('POST', '/api/v1/memos/stamp/', { token: user.token });
      expect(posted.status, user.username).toBe(200);
      expect(posted.json).toEqual({ held });
      const got = await api.request('GET', '/api/v1/memos/held/', { token: user.token });
      expect(got.status, user.username).toBe(200);
      expect(got.json).toEqual({ held });
    }
  });

  it('is answered in an app route’s own transaction', SHORT, async () => {
    expect((await api.request('GET', '/stamp-held', { token: stamper.token })).json).toEqual({ held: true });
    expect((await api.request('GET', '/stamp-held', { token: plain.token })).json).toEqual({ held: false });
  });

  it('sees a permission granted since, from the next request on', SHORT, async () => {
    const late = await api.user('late');
    expect((await api.request('POST', '/api/v1/memos/stamp/', { token: late.token })).json).toEqual({ held: false });
    const user = await api.database.db.selectFrom('users').select('id').where('username', '=', 'late').executeTakeFirstOrThrow();
    await api.database.db.insertInto('auth_user_permissions').values({ user_id: user.id, name: STAMP }).execute();
    expect((await api.request('POST', '/api/v1/memos/stamp/', { token: late.token })).json).toEqual({ held: true });
  });
});
