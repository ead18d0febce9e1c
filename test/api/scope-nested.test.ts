/**
 * Scopes in nested reads: a memo is seen by its owner, and by everyone once shared (two collections
 * serve the memos table, each scoped). Another user's unshared memo is null where a remark nests
 * it and left out of a topic's count, ids and existence, in lists, cursor pages, detail reads and
 * the record a write answers; a list stays as many statements, however many memos it covers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, computed, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const Topic = model('topics', { id: fields.id(), name: fields.string({ maxLength: 100 }) });
const Memo = model('memos', {
  id: fields.id(),
  text: fields.string({ maxLength: 100 }),
  shared: fields.boolean({ default: () => false }),
  topic_id: fields.foreignKey('topics'),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const Remark = model('remarks', { id: fields.id(), text: fields.string({ maxLength: 100 }), memo_id: fields.foreignKey('memos') });

const memoSerializer = serializer(Memo, { fields: ['id', 'text', 'shared', 'topic_id', 'owner_id'] });
const remarkSerializer = serializer(Remark, {
  fields: ['id', 'text', 'memo_id', 'memo'],
  nested: { memo: { source: 'memo_id', serializer: serializer(Memo, { name: 'NestedMemo', fields: ['id', 'text'] }) } },
});

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('memos', { serializer: memoSerializer, scope: ({ user }) => ({ owner_id: user?.id ?? null }), bulkCreate: { max: 200 } }),
      collection('shared-memos', { serializer: memoSerializer, scope: () => ({ shared: true }) }),
      collection('topics', {
        serializer: serializer(Topic, {
          fields: ['id', 'name', 'memo_count', 'memo_ids', 'has_memos'],
          computed: {
            memo_count: computed.count('memos', 'topic_id'),
            memo_ids: computed.ids('memos', 'topic_id'),
            has_memos: computed.exists('memos', 'topic_id'),
          },
        }),
        orderingFields: ['memo_count'],
      }),
      collection('remarks', { serializer: remarkSerializer }),
      collection('remark-pages', { serializer: remarkSerializer, pagination: 'cursor', pageSize: 10 }),
    ],
  }),
);

const sent: string[] = [];
let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let crowded: number;
let lonely: number;
let alicesMemos: number[];
let alicesShared: number;
let bobsMemo: number;
let onAlices: number;
let onShared: number;
let onBobs: number;

const post = async (path: string, user: TestUser, body: unknown) => {
  const reply = await api.request('POST', `/api/v1/${path}/`, { token: user.token, body });
  expect(reply.status).toBe(201);
  return reply.json;
};

beforeAll(async () => {
  api = await startApi({ API_REQUIRE_AUTH: 'false' }, app, { appDatabase: recording(sent) });
  alice = await api.user('alice');
  bob = await api.user('bob');
  crowded = (await post('topics', alice, { name: 'crowded' })).id;
  lonely = (await post('topics', alice, { name: 'lonely' })).id;
  // 100 memos of alice's in one topic, one of them shared; bob's one memo there, and the only one in the other.
  const memos = await post('memos', alice, Array.from({ length: 100 }, (_, index) => ({ text: `alice ${index}`, topic_id: crowded })));
  alicesMemos = memos.map((memo: { id: number }) => memo.id);
  alicesShared = alicesMemos[0]!;
  await api.request('PATCH', `/api/v1/memos/${alicesShared}/`, { token: alice.token, body: { shared: true } });
  bobsMemo = (await post('memos', bob, { text: 'bob', topic_id: lonely })).id;
  // Each remark written by a user who may see its memo (a memo one may not see cannot be named: see the last test of the next block).
  onAlices = (await post('remarks', alice, { text: 'on alice 1', memo_id: alicesMemos[1] })).id;
  onShared = (await post('remarks', bob, { text: 'on shared', memo_id: alicesShared })).id;
  onBobs = (await post('remarks', bob, { text: 'on bob', memo_id: bobsMemo })).id;
});
afterAll(() => api.close());

/** Remark id → its nested memo, as a list shows them to `user`. */
const nestedIn = (results: { id: number; memo: unknown }[]) => Object.fromEntries(results.map((remark) => [remark.id, remark.memo]));

describe('a nested record of a scoped collection', () => {
  it('is null in a list for a requester outside its scope, shown within it (either collection’s)', async () => {
    const forBob = await api.request('GET', '/api/v1/remarks/', { token: bob.token });
    expect(forBob.json.count).toBe(3);
    expect(nestedIn(forBob.json.results)).toEqual({
      [onAlices]: null,
      [onShared]: { id: alicesShared, text: 'alice 0' },
      [onBobs]: { id: bobsMemo, text: 'bob' },
    });
    const forAlice = await api.request('GET', '/api/v1/remarks/', { token: alice.token });
    expect(nestedIn(forAlice.json.results)).toEqual({
      [onAlices]: { id: alicesMemos[1], text: 'alice 1' },
      [onShared]: { id: alicesShared, text: 'alice 0' },
      [onBobs]: null,
    });
    // The remark's own column is the remark's: it still names the memo.
    expect(forBob.json.results.find((remark: { id: number }) => remark.id === onAlices).memo_id).toBe(alicesMemos[1]);
    const anonymous = await api.request('GET', '/api/v1/remarks/');
    expect(nestedIn(anonymous.json.results)).toEqual({ [onAlices]: null, [onShared]: { id: alicesShared, text: 'alice 0' }, [onBobs]: null });
  });

  it('is null on a cursor page, a detail read and the record a write answers with', async () => {
    const page = await api.request('GET', '/api/v1/remark-pages/', { token: bob.token });
    expect(nestedIn(page.json.results)[onAlices]).toBeNull();
    const detail = await api.request('GET', `/api/v1/remarks/${onAlices}/`, { token: bob.token });
    expect(detail.json).toMatchObject({ id: onAlices, memo: null });
    expect((await api.request('GET', `/api/v1/remarks/${onAlices}/`, { token: alice.token })).json.memo).toEqual({ id: alicesMemos[1], text: 'alice 1' });
    const changed = await api.request('PATCH', `/api/v1/remarks/${onAlices}/`, { token: bob.token, body: { text: 'on alice 1, again' } });
    expect(changed.json).toMatchObject({ text: 'on alice 1, again', memo: null });
    const created = await api.request('POST', '/api/v1/remarks/', { token: alice.token, body: { text: 'another', memo_id: alicesMemos[2] } });
    expect(created.json).toMatchObject({ memo_id: alicesMemos[2], memo: { id: alicesMemos[2], text: 'alice 2' } });
    const moved = await api.request('PATCH', `/api/v1/remarks/${created.json.id}/`, { token: bob.token, body: { text: 'moved', memo_id: alicesShared } });
    expect(moved.json).toMatchObject({ memo_id: alicesShared, memo: { id: alicesShared, text: 'alice 0' } });
    expect((await api.request('DELETE', `/api/v1/remarks/${created.json.id}/`, { token: bob.token })).status).toBe(204);
  });

  it('cannot be named by a requester outside its scope: refused as a memo that does not exist', async () => {
    const hidden = await api.request('POST', '/api/v1/remarks/', { token: bob.token, body: { text: 'another', memo_id: alicesMemos[2] } });
    const missing = await api.request('POST', '/api/v1/remarks/', { token: bob.token, body: { text: 'another', memo_id: 999_999 } });
    expect([hidden.status, missing.status]).toEqual([400, 400]);
    expect(hidden.json).toEqual({ ...missing.json, details: { memo_id: [`Invalid id "${alicesMemos[2]}": object does not exist.`] } });
    expect(missing.json.details).toEqual({ memo_id: ['Invalid id "999999": object does not exist.'] });
    const moved = await api.request('PATCH', `/api/v1/remarks/${onBobs}/`, { token: bob.token, body: { memo_id: alicesMemos[2] } });
    expect(moved.status).toBe(400);
    expect(moved.json.details).toEqual({ memo_id: [`Invalid id "${alicesMemos[2]}": object does not exist.`] });
    expect((await api.request('GET', `/api/v1/remarks/${onBobs}/`, { token: bob.token })).json.memo_id).toBe(bobsMemo);
  });

  it('may be null in the OpenAPI document, though its foreign key may not', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    expect(document.components.schemas.Remark.properties.memo).toEqual({ anyOf: [{ $ref: '#/components/schemas/NestedMemo' }, { type: 'null' }] });
  });
});

describe('an aggregate over a scoped collection’s records', () => {
  it('counts, lists and finds only the records within the requester’s scope', async () => {
    const forAlice = await api.request('GET', `/api/v1/topics/${crowded}/`, { token: alice.token });
    expect(forAlice.json).toMatchObject({ memo_count: 100, has_memos: true });
    expect(forAlice.json.memo_ids).toEqual(alicesMemos);
    const forBob = await api.request('GET', '/api/v1/topics/?ordering=memo_count', { token: bob.token });
    expect(forBob.json.results).toEqual([
      { id: crowded, name: 'crowded', memo_count: 1, memo_ids: [alicesShared], has_memos: true },
      { id: lonely, name: 'lonely', memo_count: 1, memo_ids: [bobsMemo], has_memos: true },
    ]);
    const anonymous = await api.request('GET', `/api/v1/topics/${lonely}/`);
    expect(anonymous.json).toMatchObject({ memo_count: 0, memo_ids: [], has_memos: false });
  });

  it('keeps a list at the statements of a list without aggregates or nesting, over 100 related records', async () => {
    const statementsOf = async (url: string, user: TestUser) => {
      sent.length = 0;
      expect((await api.request('GET', url, { token: user.token })).status).toBe(200);
      return sent.length;
    };
    const plain = await statementsOf('/api/v1/topics/?fields=id,name', alice);
    expect(await statementsOf('/api/v1/topics/', alice)).toBe(plain);
    expect(await statementsOf('/api/v1/topics/', bob)).toBe(plain);
    expect(await statementsOf('/api/v1/remarks/', bob)).toBe(plain);
    // The page's one statement carries the scope's condition.
    expect(sent.filter((text) => /"memos"/.test(text))).toEqual([expect.stringMatching(/"nested_memo"\."owner_id" = /)]);
  });
});
