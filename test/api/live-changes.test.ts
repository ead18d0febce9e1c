/**
 * Live changes (docs/guides/live-changes.md): `/items/events/` streams, over a real HTTP server,
 * the changes each subscriber's list would show, from every write path, after commit only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { openEvents, type EventStreamClient } from '../support/event-stream.js';
import { collection, computed, defineApp, fields, hasPermission, model, serializer } from '../../src/framework/index.js';
import { revokePermissions } from '../../src/framework/app/admin.js';
import { Item, items, liveItemsApp } from '../support/live-items.js';
import { withGeneratedMigrations } from '../support/migrations.js';

let api: TestApi;
let base: string;
let alice: TestUser;
let bob: TestUser;
const streams: EventStreamClient[] = [];

beforeAll(async () => {
  // A small queue, so that a stalled subscriber is dropped after a few large events.
  // Heartbeats every 50 ms, so that a test sees them on an idle stream.
  api = await startApi({ LIVE_QUEUE_BYTES: '65536', LIVE_MAX_STREAMS_PER_USER: '4', LIVE_HEARTBEAT_MS: '50' }, liveItemsApp);
  base = `http://127.0.0.1:${await api.listen()}/api/v1/items/`;
  alice = await api.user('alice');
  bob = await api.user('bob');
});
afterAll(() => api.close());

async function subscribe(user: TestUser, query = '', headers: Record<string, string> = {}): Promise<EventStreamClient> {
  const stream = await openEvents(`${base}events/${query}`, { authorization: `Bearer ${user.token}`, ...headers });
  streams.push(stream);
  return stream;
}

const closeAll = () => streams.splice(0).forEach((stream) => stream.close());

async function create(user: TestUser, body: unknown): Promise<{ id: number }> {
  const reply = await api.request('POST', '/api/v1/items/', { token: user.token, body });
  expect(reply.status, reply.body).toBe(201);
  return reply.json;
}

/**
 * A stream is seeded (and hears changes) once its subscription has been read; a write of the
 * subscriber's own, seen arriving, shows that it is, and that nothing was sent before it.
 */
async function ready(stream: EventStreamClient, user: TestUser): Promise<void> {
  const { id } = await create(user, { text: 'ready' });
  expect(await stream.next()).toMatchObject({ event: 'created', data: { id } });
}

describe('live changes', () => {
  it('are declared on a collection with a list, and a number of ids to track', () => {
    const declared = (options: object) => () => collection('declared', { serializer: serializer(Item, { fields: ['id', 'text'] }), ...options });
    expect(declared({ live: true, builtInActions: ['retrieve'] })).toThrow(/need the list action/);
    expect(declared({ live: true, singleton: () => 1 })).toThrow(/need the list action/);
    expect(declared({ live: { track: -1 } })).toThrow(/live.track/);
    expect(declared({ live: { track: 10 } })().live).toEqual({ track: 10, path: 'events' });
    expect(declared({ live: { path: 'Changes/' } })).toThrow(/live.path "Changes\/" must match/);
    expect(declared({ live: { path: 'bulk' }, bulkCreate: { max: 2 } })).toThrow(/live.path "bulk" is another route's path/);
    expect(declared({ live: { path: 'recent' }, actions: { recent: { detail: false, method: 'GET', handler: () => [] } } })).toThrow(/live.path "recent"/);
    expect(declared({})().live).toBeUndefined();
  });

  it('streams text/event-stream through the pipeline: anonymous is 401, another media type 406, an unknown filter 400', async () => {
    const anonymous = await openEvents(`${base}events/`);
    expect(anonymous.status).toBe(401);
    const json = await openEvents(`${base}events/`, { authorization: `Bearer ${alice.token}`, accept: 'application/json' });
    expect(json.status).toBe(406);
    const unknown = await openEvents(`${base}events/?colour=red`, { authorization: `Bearer ${alice.token}` });
    expect(unknown.status).toBe(400);
    const stream = await subscribe(alice);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    await ready(stream, alice);
    closeAll();
  });

  it('keeps an idle stream alive with heartbeat comments, which are no events', async () => {
    const stream = await subscribe(alice);
    await stream.comments(2);
    await ready(stream, alice);
    closeAll();
  });

  it('sends a private record only to its owner, rendered for them, with ?fields=', async () => {
    const aliceStream = await subscribe(alice, '?fields=id,text');
    const bobStream = await subscribe(bob);
    await ready(aliceStream, alice);
    await ready(bobStream, bob);
    const { id } = await create(alice, { text: 'private' });
    expect(await aliceStream.next()).toMatchObject({ event: 'created', data: { id, text: 'private' } });
    // Bob's next event is his own record's: Alice's, delivered before it, would have come first.
    const own = await create(bob, { text: 'his' });
    expect(await bobStream.next()).toMatchObject({ event: 'created', data: { id: own.id, text: 'his', owner_id: bob.id } });
    expect(Object.keys((await api.request('GET', `/api/v1/items/${id}/`, { token: alice.token })).json)).toContain('status');
    closeAll();
  });

  it('gives two streams of one user with different ?fields= or ?omit= each its own projection', async () => {
    const opened: EventStreamClient[] = [];
    // Each opened once the one before it hears, so each hears every later ready record.
    for (const query of ['?fields=id', '?fields=id,text,status', '?omit=body,owner_id']) {
      const stream = await subscribe(alice, query);
      const { id } = await create(alice, { text: 'ready' });
      for (const earlier of [...opened, stream]) expect((await earlier.next()).data.id).toBe(id);
      opened.push(stream);
    }
    const [narrow, wide, omitting] = opened as [EventStreamClient, EventStreamClient, EventStreamClient];
    const { id } = await create(alice, { text: 'projected', status: 'new' });
    expect((await narrow.next()).data).toEqual({ id });
    expect((await wide.next()).data).toEqual({ id, text: 'projected', status: 'new' });
    expect((await omitting.next()).data).toEqual({ id, text: 'projected', status: 'new' });
    closeAll();
  });

  it('sends updates and deletes from every built-in write, a record leaving the scope as a delete and entering it as a create', async () => {
    const aliceStream = await subscribe(alice);
    const bobStream = await subscribe(bob);
    await ready(aliceStream, alice);
    await ready(bobStream, bob);
    const { id } = await create(alice, { text: 'first' });
    expect(await aliceStream.next()).toMatchObject({ event: 'created', data: { id } });
    expect((await api.request('PATCH', `/api/v1/items/${id}/`, { token: alice.token, body: { text: 'patched' } })).status).toBe(200);
    expect(await aliceStream.next()).toMatchObject({ event: 'updated', data: { id, text: 'patched' } });
    expect((await api.request('PUT', `/api/v1/items/${id}/`, { token: alice.token, body: { text: 'put', status: 'draft', body: '' } })).status).toBe(200);
    expect(await aliceStream.next()).toMatchObject({ event: 'updated', data: { id, text: 'put' } });
    // Given to Bob by the app's own code (recordStore): out of Alice's scope, into Bob's.
    expect((await api.request('POST', `/api/v1/items/${id}/give/`, { token: alice.token, body: { to: bob.id } })).status).toBe(200);
    const gone = await aliceStream.next();
    expect(gone).toMatchObject({ event: 'deleted', data: { id } });
    expect(gone.data).toEqual({ id });
    expect(await bobStream.next()).toMatchObject({ event: 'created', data: { id, text: 'put', owner_id: bob.id } });
    expect((await api.request('DELETE', `/api/v1/items/${id}/`, { token: bob.token })).status).toBe(204);
    expect(await bobStream.next()).toEqual(expect.objectContaining({ event: 'deleted', data: { id } }));
    // Bulk create (and a hook's write through recordStore in its transaction), then bulk delete.
    const bulk = await api.request('POST', '/api/v1/items/bulk/', { token: alice.token, body: [{ text: 'one', status: 'old' }, { text: 'twin', status: 'old' }] });
    expect(bulk.status, bulk.body).toBe(201);
    const created = [await aliceStream.next(), await aliceStream.next(), await aliceStream.next()];
    expect(created.map(({ event, data }) => [event, data.text])).toEqual([
      ['created', 'one'],
      ['created', 'twin'],
      ['created', 'twin of'],
    ]);
    expect((await api.request('DELETE', '/api/v1/items/?status=old', { token: alice.token })).status).toBe(204);
    const deleted = [await aliceStream.next(), await aliceStream.next(), await aliceStream.next()];
    expect(deleted.map(({ event, data }) => [event, data.id]).sort()).toEqual(created.map(({ data }) => ['deleted', data.id]).sort());
    // Bob's stream heard nothing of Alice's records meanwhile.
    await ready(bobStream, bob);
    closeAll();
  });

  it('applies the list filters: a record leaving them is a delete, entering them a create', async () => {
    const active = await subscribe(alice, '?status=active');
    const all = await subscribe(alice);
    await ready(all, alice);
    const draft = await create(alice, { text: 'draft' });
    expect(await all.next()).toMatchObject({ event: 'created', data: { id: draft.id } });
    const { id } = await create(alice, { text: 'on', status: 'active' });
    expect(await active.next()).toMatchObject({ event: 'created', data: { id, status: 'active' } });
    await api.request('PATCH', `/api/v1/items/${id}/`, { token: alice.token, body: { status: 'done' } });
    expect(await active.next()).toMatchObject({ event: 'deleted', data: { id } });
    await api.request('PATCH', `/api/v1/items/${draft.id}/`, { token: alice.token, body: { status: 'active' } });
    expect(await active.next()).toMatchObject({ event: 'created', data: { id: draft.id, status: 'active' } });
    closeAll();
  });

  it('sends nothing of a write whose transaction rolled back (a hook failing after it)', async () => {
    const stream = await subscribe(alice);
    await ready(stream, alice);
    const refused = await api.request('POST', '/api/v1/items/', { token: alice.token, body: { text: 'boom' } });
    expect(refused.status).toBe(409);
    const { id } = await create(alice, { text: 'kept' });
    expect(await stream.next()).toMatchObject({ event: 'created', data: { id, text: 'kept' } });
    // An update rolled back: told before its commit, the record read again would arrive unchanged, as an update.
    expect((await api.request('PATCH', `/api/v1/items/${id}/`, { token: alice.token, body: { text: 'boom' } })).status).toBe(409);
    const after = await create(alice, { text: 'after' });
    expect(await stream.next()).toMatchObject({ event: 'created', data: { id: after.id, text: 'after' } });
    closeAll();
  });

  it('resumes after Last-Event-ID with what was missed, and asks for a refetch when it cannot', async () => {
    const first = await subscribe(alice);
    // Open throughout: once it has heard the missed changes, so has the process (they may arrive after the writes answer, over LISTEN/NOTIFY).
    const watcher = await subscribe(alice);
    const { id } = await create(alice, { text: 'seen' });
    const seen = await first.next();
    expect(seen).toMatchObject({ event: 'created', data: { id } });
    first.close();
    expect(await watcher.next()).toMatchObject({ event: 'created', data: { id } });
    // Each write heard before the next: over NOTIFY's delay the create could be read after the
    // delete, and a record deleted before any stream was told of it is told as nothing (the guide's rule).
    const missed = await create(alice, { text: 'missed' });
    expect(await watcher.next()).toMatchObject({ event: 'created', data: { id: missed.id } });
    await api.request('PATCH', `/api/v1/items/${id}/`, { token: alice.token, body: { text: 'changed' } });
    expect(await watcher.next()).toMatchObject({ event: 'updated', data: { id } });
    await api.request('DELETE', `/api/v1/items/${missed.id}/`, { token: alice.token });
    expect(await watcher.next()).toMatchObject({ event: 'deleted', data: { id: missed.id } });
    // Bob's private record changes meanwhile: its id is not Alice's to hear, on a replay either.
    const bobs = await create(bob, { text: 'bob only' });
    await api.request('PATCH', `/api/v1/items/${bobs.id}/`, { token: bob.token, body: { text: 'bob again' } });
    const resumed = await subscribe(alice, '', { 'last-event-id': seen.id! });
    // The missed record is gone by now, and whether Alice saw it the stream cannot know: the
    // change she can see is told, then a refetch is asked for instead of any id she cannot see.
    const events = [await resumed.next(), await resumed.next()];
    expect(events.map(({ event, data }) => [event, data.id])).toEqual([
      ['updated', id],
      ['reset', undefined],
    ]);
    expect(events[0]!.data.text).toBe('changed');
    const stale = await subscribe(alice, '', { 'last-event-id': 'feedbeef-1' });
    expect(await stale.next()).toMatchObject({ event: 'reset', data: {} });
    closeAll();
  });

  it('gives event ids that count nobody\'s changes, and resumes after any of them', async () => {
    const aliceStream = await subscribe(alice);
    const bobStream = await subscribe(bob);
    await ready(bobStream, bob);
    const first = await create(alice, { text: 'before' });
    const before = await aliceStream.next();
    expect(before).toMatchObject({ event: 'created', data: { id: first.id } });
    // Bob's private writes between two of Alice's events leave no trace in her ids.
    for (let n = 0; n < 5; n++) await create(bob, { text: `bob ${n}` });
    for (let n = 0; n < 5; n++) await bobStream.next();
    const second = await create(alice, { text: 'after' });
    const after = await aliceStream.next();
    const third = await create(alice, { text: 'next' });
    const next = await aliceStream.next();
    const ids = [before.id!, after.id!, next.id!];
    // Opaque: a sealed position, nothing in common between two ids (no process epoch, no counter).
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{48}$/);
    expect(new Set(ids.map((id) => id.slice(0, 8))).size).toBe(ids.length);
    // Resuming after the first replays Alice's two later changes, and none of Bob's (no reset: none were hers).
    const resumed = await subscribe(alice, '', { 'last-event-id': before.id! });
    const replayed = [await resumed.next(), await resumed.next()];
    expect([after.data.id, next.data.id]).toEqual([second.id, third.id]);
    expect(replayed.map(({ event, data }) => [event, data.id])).toEqual([
      ['created', second.id],
      ['created', third.id],
    ]);
    await ready(resumed, alice);
    closeAll();
  });

  it('gives each record of a bulk create its own id, the same on every stream, and resumes after any of them', async () => {
    const first = await subscribe(alice);
    const second = await subscribe(alice);
    await ready(first, alice);
    await second.next();
    const bulk = await api.request('POST', '/api/v1/items/bulk/', { token: alice.token, body: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] });
    expect(bulk.status, bulk.body).toBe(201);
    const told = [await first.next(), await first.next(), await first.next()];
    expect(told.map(({ event, data }) => [event, data.text])).toEqual([
      ['created', 'a'],
      ['created', 'b'],
      ['created', 'c'],
    ]);
    const ids = told.map(({ id }) => id!);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{48}$/);
    expect(new Set(ids.map((id) => id.slice(0, 8))).size).toBe(3);
    expect([await second.next(), await second.next(), await second.next()]).toEqual(told);
    const resumed = [await subscribe(alice, '', { 'last-event-id': ids[0]! }), await subscribe(alice, '', { 'last-event-id': ids[1]! })];
    for (const [after, stream] of resumed.entries()) for (const missed of told.slice(after + 1)) expect(await stream.next()).toEqual(missed);
    // Nothing more was replayed: the next record is the next thing each hears.
    const { id } = await create(alice, { text: 'next' });
    for (const stream of resumed) expect(await stream.next()).toMatchObject({ event: 'created', data: { id } });
    closeAll();
  });

  it('drops a subscriber that does not read, while another keeps receiving', async () => {
    const stalled = await openEvents(`${base}events/`, { authorization: `Bearer ${alice.token}` }, { read: false });
    streams.push(stalled);
    const reading = await subscribe(alice);
    await ready(reading, alice);
    const { id } = await create(alice, { text: 'large' });
    expect(await reading.next()).toMatchObject({ event: 'created', data: { id } });
    // Far more than the socket buffers hold: the stalled stream's queue passes LIVE_QUEUE_BYTES.
    const large = 'x'.repeat(256 * 1024);
    const writes = 80;
    for (let index = 0; index < writes; index += 1) {
      await api.request('PATCH', `/api/v1/items/${id}/`, { token: alice.token, body: { body: `${index}${large}` } });
      expect(await reading.next()).toMatchObject({ event: 'updated', data: { id, body: `${index}${large}` } });
    }
    const received = await stalled.ended();
    expect(received.length).toBeLessThan(writes);
    closeAll();
  });

  it('streams a nested collection under its parent record, within the parent\'s scope', async () => {
    const first = await create(alice, { text: 'first' });
    const second = await create(alice, { text: 'second' });
    const under = (item: { id: number }) => `${base}${item.id}/notes/`;
    expect((await openEvents(`${under(first)}events/`, { authorization: `Bearer ${bob.token}` })).status).toBe(404);
    const stream = await openEvents(`${under(first)}events/`, { authorization: `Bearer ${alice.token}` });
    streams.push(stream);
    const note = async (item: { id: number }, text: string) => {
      const reply = await api.request('POST', `/api/v1/items/${item.id}/notes/`, { token: alice.token, body: { text } });
      expect(reply.status, reply.body).toBe(201);
      return reply.json as { id: number };
    };
    const ready = await note(first, 'ready');
    expect(await stream.next()).toMatchObject({ event: 'created', data: { id: ready.id, item_id: first.id } });
    await note(second, 'elsewhere');
    const here = await note(first, 'here');
    expect(await stream.next()).toMatchObject({ event: 'created', data: { id: here.id, text: 'here' } });
    closeAll();
  });

  it('send each subscriber only the records of their own scope, and one subscriber\'s view to another of the same view as it', async () => {
    const first = await subscribe(alice);
    const other = await subscribe(bob);
    const same = await subscribe(alice);
    await ready(first, alice);
    expect((await same.next()).event).toBe('created');
    await ready(other, bob);
    const mine = await create(alice, { text: 'hers', status: 'new' });
    const his = await create(bob, { text: 'his' });
    const told = await first.next();
    expect(told).toMatchObject({ event: 'created', data: { id: mine.id, text: 'hers', status: 'new', owner_id: alice.id } });
    expect(await same.next()).toEqual(told);
    expect(await other.next()).toMatchObject({ event: 'created', data: { id: his.id, text: 'his', owner_id: bob.id } });
    // Bob's record reached neither of Alice's streams: her next record is the next thing each hears.
    const next = await create(alice, { text: 'again' });
    expect((await first.next()).data).toMatchObject({ id: next.id });
    expect((await same.next()).data).toMatchObject({ id: next.id });
    closeAll();
  });

  it('render a record for each subscriber where their serializer reads the request or its user, though they read the same rows', async () => {
    const Notice = model('live_notices', { id: fields.id(), text: fields.string({ maxLength: 100 }) });
    const notices = collection('notices', {
      serializer: serializer(Notice, {
        fields: ['id', 'text', 'viewer', 'url'],
        computed: { viewer: computed.from((_row, { user }) => user?.username ?? null), url: computed.url() },
      }),
      live: true,
    });
    const noticeApi = await startApi({}, withGeneratedMigrations(defineApp({ collections: [notices] })));
    try {
      const port = await noticeApi.listen();
      const url = `http://127.0.0.1:${port}/api/v1/notices/events/`;
      const [ann, ben] = [await noticeApi.user('ann'), await noticeApi.user('ben')];
      const annStream = await openEvents(url, { authorization: `Bearer ${ann.token}` });
      const benStream = await openEvents(url, { authorization: `Bearer ${ben.token}` });
      const elsewhere = await openEvents(url, { authorization: `Bearer ${ann.token}`, host: `localhost:${port}` });
      streams.push(annStream, benStream, elsewhere);
      const post = async (text: string) => (await noticeApi.request('POST', '/api/v1/notices/', { token: ann.token, body: { text } })).json as { id: number };
      const ready = await post('ready');
      for (const stream of [annStream, benStream, elsewhere]) expect((await stream.next()).data).toMatchObject({ id: ready.id });
      const { id } = await post('shown');
      expect((await annStream.next()).data).toEqual({ id, text: 'shown', viewer: 'ann', url: `http://127.0.0.1:${port}/api/v1/notices/${id}/` });
      expect((await benStream.next()).data).toEqual({ id, text: 'shown', viewer: 'ben', url: `http://127.0.0.1:${port}/api/v1/notices/${id}/` });
      expect((await elsewhere.next()).data).toEqual({ id, text: 'shown', viewer: 'ann', url: `http://localhost:${port}/api/v1/notices/${id}/` });
      closeAll();
    } finally {
      await noticeApi.close();
    }
  });

  it('limits the streams one user holds (429), and ends every stream on close with a retry hint', async () => {
    const held = [await subscribe(bob), await subscribe(bob), await subscribe(bob), await subscribe(bob)];
    const refused = await openEvents(`${base}events/`, { authorization: `Bearer ${bob.token}` });
    expect(refused.status).toBe(429);
    await ready(held[0]!, bob);
    const closing = api.app.close();
    const ends = await Promise.all(held.map((stream) => stream.ended()));
    await closing;
    expect(ends.map((rest) => rest.length)).toEqual([0, 1, 1, 1]);
    expect(held.every((stream) => stream.retries.length === 2)).toBe(true);
  });
});

describe("a process's limits", () => {
  let limited: TestApi;
  afterAll(() => limited?.close());

  it('refuses a stream past LIVE_MAX_STREAMS (503), and ends each after LIVE_MAX_AGE_MS, to be resumed', async () => {
    limited = await startApi({ LIVE_MAX_STREAMS: '1', LIVE_MAX_AGE_MS: '1500', LIVE_RETRY_MS: '10' }, liveItemsApp);
    const url = `http://127.0.0.1:${await limited.listen()}/api/v1/items/events/`;
    const carol = await limited.user('carol');
    const authorization = `Bearer ${carol.token}`;
    const first = await openEvents(url, { authorization });
    streams.push(first);
    const refused = await openEvents(url, { authorization });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    const created = await limited.request('POST', '/api/v1/items/', { token: carol.token, body: { text: 'one' } });
    const seen = await first.next();
    expect(seen).toMatchObject({ event: 'created', data: { id: created.json.id } });
    // Ended by its age, with the retry hint; its place is free again, and the client resumes.
    expect(await first.ended()).toEqual([]);
    expect(first.retries).toEqual([10, 10]);
    await limited.request('PATCH', `/api/v1/items/${created.json.id}/`, { token: carol.token, body: { text: 'two' } });
    const again = await openEvents(url, { authorization, 'last-event-id': seen.id! });
    streams.push(again);
    expect(again.status).toBe(200);
    expect(await again.next()).toMatchObject({ event: 'updated', data: { id: created.json.id, text: 'two' } });
    closeAll();
  });
});

describe('a permission removed while a stream is open', () => {
  const gated = collection('gated', { serializer: serializer(Item, { fields: ['id', 'text'] }), live: true, permissions: { list: [hasPermission('gated.view')] } });
  const app = withGeneratedMigrations(defineApp({ collections: [gated] }));
  let served: TestApi;
  afterAll(() => served?.close());

  it('ends the stream within 5 s, with revoked, though no message tells its process (another process removed it)', async () => {
    served = await startApi({}, app);
    const url = `http://127.0.0.1:${await served.listen()}/api/v1/gated/events/`;
    const erin = await served.user('erin', { permissions: ['gated.view'] });
    const stream = await openEvents(url, { authorization: `Bearer ${erin.token}` });
    streams.push(stream);
    expect(stream.status).toBe(200);
    // As `restfold permissions revoke` does, in a process of its own: straight on the database.
    expect(await revokePermissions(served.database, erin.id, ['gated.view'])).toBe(1);
    const rest = await stream.ended(5000);
    expect(rest).toEqual([expect.objectContaining({ event: 'revoked', data: expect.objectContaining({ code: 'permission_denied' }) })]);
    expect((await openEvents(url, { authorization: `Bearer ${erin.token}` })).status).toBe(403);
    closeAll();
  });
});

describe('a standing the scope reads, changed while a stream is open', () => {
  const staffed = collection('staffed', {
    serializer: serializer(Item, { fields: ['id', 'text', 'owner_id'], readOnly: ['owner_id'] }),
    live: true,
    scope: ({ user }) => (user?.isStaff ? {} : { owner_id: user?.id ?? null }),
  });
  const app = withGeneratedMigrations(defineApp({ collections: [staffed] }));
  let served: TestApi;
  afterAll(() => served?.close());

  it('ends the stream of a staff member who no longer is one, within 5 s, and scopes the next one afresh', async () => {
    served = await startApi({ LIVE_RECHECK_MS: '60000' }, app);
    const url = `http://127.0.0.1:${await served.listen()}/api/v1/staffed/events/`;
    const [root, sam, ann] = [await served.user('root', { superuser: true }), await served.user('sam'), await served.user('ann')];
    expect((await served.request('PATCH', `/api/v1/auth/users/${sam.id}/`, { token: root.token, body: { is_staff: true } })).status).toBe(200);
    const stream = await openEvents(url, { authorization: `Bearer ${sam.token}` });
    streams.push(stream);
    const anns = await served.request('POST', '/api/v1/staffed/', { token: ann.token, body: { text: "ann's" } });
    expect(await stream.next()).toMatchObject({ event: 'created', data: { id: anns.json.id } });
    // Rechecked once a minute only: within 5 s, only the change of the users row ends it.
    expect((await served.request('PATCH', `/api/v1/auth/users/${sam.id}/`, { token: root.token, body: { is_staff: false } })).status).toBe(200);
    const rest = await stream.ended(5000);
    expect(rest).toEqual([expect.objectContaining({ event: 'revoked', data: expect.objectContaining({ code: 'authentication_failed' }) })]);
    const again = await openEvents(url, { authorization: `Bearer ${sam.token}` });
    streams.push(again);
    expect(again.status).toBe(200);
    await served.request('POST', '/api/v1/staffed/', { token: ann.token, body: { text: 'not for sam' } });
    const own = await served.request('POST', '/api/v1/staffed/', { token: sam.token, body: { text: "sam's" } });
    expect(await again.next()).toMatchObject({ event: 'created', data: { id: own.json.id } });
    closeAll();
  });
});

describe('a table no stream is of', () => {
  const Memo = model('live_memos', { id: fields.id(), text: fields.string({ maxLength: 100 }) });
  const app = withGeneratedMigrations(defineApp({ collections: [items, collection('memos', { serializer: serializer(Memo, { fields: ['id', 'text'] }) })] }));
  let served: TestApi;
  afterAll(() => served?.close());

  it('takes no place in the changes a stream resumes from', async () => {
    // Three changes retained: the memos written meanwhile would push out what Alice missed, were they kept.
    served = await startApi({ LIVE_RETAINED: '3' }, app);
    const url = `http://127.0.0.1:${await served.listen()}/api/v1/items/events/`;
    const [dana, root] = [await served.user('dana'), await served.user('root', { superuser: true })];
    const authorization = `Bearer ${dana.token}`;
    const [first, watcher] = [await openEvents(url, { authorization }), await openEvents(url, { authorization })];
    streams.push(first, watcher);
    const created = await served.request('POST', '/api/v1/items/', { token: dana.token, body: { text: 'seen' } });
    const seen = await first.next();
    expect(seen).toMatchObject({ event: 'created', data: { id: created.json.id } });
    first.close();
    for (let memo = 0; memo < 5; memo++) expect((await served.request('POST', '/api/v1/memos/', { token: root.token, body: { text: `memo ${memo}` } })).status).toBe(201);
    const missed = await served.request('POST', '/api/v1/items/', { token: dana.token, body: { text: 'missed' } });
    for (const id of [created.json.id, missed.json.id]) expect(await watcher.next()).toMatchObject({ event: 'created', data: { id } });
    const resumed = await openEvents(url, { authorization, 'last-event-id': seen.id! });
    streams.push(resumed);
    expect(await resumed.next()).toMatchObject({ event: 'created', data: { id: missed.json.id } });
    closeAll();
  });
});

describe('the example service', () => {
  let service: TestApi;
  afterAll(() => service?.close());

  it('streams articles to any signed-in user, as they may list them', async () => {
    service = await startApi();
    const url = `http://127.0.0.1:${await service.listen()}/api/v1/articles/events/`;
    expect((await openEvents(url)).status).toBe(401);
    const [writer, reader] = [await service.user('writer'), await service.user('reader')];
    const stream = await openEvents(url, { authorization: `Bearer ${reader.token}` });
    streams.push(stream);
    // Seeded once its reader's own article arrives; then another user's arrives too.
    const own = await service.request('POST', '/api/v1/articles/', { token: reader.token, body: { title: 'Mine' } });
    expect(await stream.next()).toMatchObject({ event: 'created', data: { id: own.json.id } });
    const theirs = await service.request('POST', '/api/v1/articles/', { token: writer.token, body: { title: 'Theirs' } });
    expect(await stream.next()).toMatchObject({ event: 'created', data: { id: theirs.json.id, title: 'Theirs', author: { username: 'writer' } } });
    closeAll();
  });
});
