/**
 * A custom action answering one of its collection's records (`answers: 'record'`) answers it as
 * retrieve does: `fields=` and `omit=`, the record's `url`, an ETag, the envelope; a record it
 * returns as a row is shown as given, a key is read anew through the scope.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, computed, defineApp, fields, isAuthenticated, model, recordStore, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Gizmo = model('gizmos', {
  id: fields.id(),
  name: fields.string({ maxLength: 20 }),
  starred: fields.boolean({ default: false }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const gizmoSerializer = serializer(Gizmo, { fields: ['id', 'name', 'starred', 'url'], computed: { url: computed.url() } });

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('gizmos', {
        serializer: gizmoSerializer,
        permissions: [isAuthenticated],
        scope: ({ user }) => ({ owner_id: user?.id ?? null }),
        envelope: { record: 'gizmo', list: 'gizmos' },
        actions: {
          // Changes the record, then answers its key: read anew, as retrieve reads it.
          star: {
            detail: true,
            method: 'POST',
            body: false,
            answers: 'record',
            handler: async ({ record, database }) => {
              await recordStore(database, gizmoSerializer, { name: 'gizmo' }).updateMatching({ id: record!.id }, { starred: true });
              return record!.id;
            },
          },
          // Answers a row as given.
          shout: { detail: true, method: 'GET', answers: 'record', handler: ({ record }) => ({ ...record!, name: String(record!.name).toUpperCase() }) },
          // A key the scope does not reach: 404, as retrieve answers it.
          first: { detail: false, method: 'GET', answers: 'record', handler: ({ parameters }) => Number(parameters.get('id')) },
        },
      }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let id: number;
let bobs: number;

beforeAll(async () => {
  api = await startApi({}, app);
  alice = await api.user('alice');
  bob = await api.user('bob');
  id = (await api.request('POST', '/api/v1/gizmos/', { token: alice.token, body: { gizmo: { name: 'spinner' } } })).json.gizmo.id;
  bobs = (await api.request('POST', '/api/v1/gizmos/', { token: bob.token, body: { gizmo: { name: 'bobs' } } })).json.gizmo.id;
});
afterAll(() => api.close());

describe('a custom action answering a record', () => {
  it('answers it as retrieve does: its url, fields=, an ETag, the envelope', async () => {
    const starred = await api.request('POST', `/api/v1/gizmos/${id}/star/?fields=name,starred,url`, { token: alice.token });
    expect(starred.status).toBe(200);
    expect(starred.json).toEqual({ gizmo: { name: 'spinner', starred: true, url: `http://localhost/api/v1/gizmos/${id}/` } });
    expect(starred.headers.etag).toMatch(/^"/);
    const retrieved = await api.request('GET', `/api/v1/gizmos/${id}/?fields=name,starred,url`, { token: alice.token });
    expect(retrieved.json).toEqual(starred.json);
    expect(retrieved.headers.etag).toBe(starred.headers.etag);
  });

  it('shows a row it returns as given, narrowed by omit=', async () => {
    expect((await api.request('GET', `/api/v1/gizmos/${id}/shout/?omit=url`, { token: alice.token })).json).toEqual({ gizmo: { id, name: 'SPINNER', starred: true } });
  });

  it('reads a key through the scope: another user’s record is 404', async () => {
    expect((await api.request('GET', `/api/v1/gizmos/first/?id=${id}&fields=name`, { token: alice.token })).json).toEqual({ gizmo: { name: 'spinner' } });
    expect((await api.request('GET', `/api/v1/gizmos/first/?id=${bobs}`, { token: alice.token })).status).toBe(404);
  });

  it('is refused at start-up with a media type of its own', () => {
    expect(() => collection('x', { serializer: gizmoSerializer, actions: { y: { detail: true, method: 'GET', answers: 'record', mediaType: 'text/plain', handler: () => 1 } } })).toThrow(/answers a record/);
  });
});
