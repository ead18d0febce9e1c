/**
 * The hub's decisions for the streams of one group (actions/live/hub.ts): streams that read alike
 * but have told their subscribers different ids are each told a change as their subscriber saw the
 * record before, and a batch of records' ids resumes after any of them.
 */
import type { FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Row } from '../../src/core/rows.js';
import { LiveHub, type Subscription } from '../../src/framework/actions/live/hub.js';
import { EventStream } from '../../src/framework/actions/live/stream.js';
import type { RecordId } from '../../src/store/read/records.js';

const limits = { maxStreams: 10, maxStreamsPerUser: 10, retained: 100, recheckMs: 60_000, heartbeatMs: 60_000, queueBytes: 1 << 20, retryMs: 1000, maxAgeMs: 60_000 };
const log = { warn: () => {}, error: () => {} } as unknown as FastifyBaseLogger;

/** The records every stream of the group may see. */
const records = new Map<RecordId, Row>();

interface Told {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: { id: RecordId; text?: string };
}

/** A stream of the one group, seeded with `seen` (the ids its subscriber was shown), resuming after `lastEventId`; its events as written. */
function open(hub: LiveHub, seen: RecordId[], lastEventId?: string, read?: Subscription['read']): Told[] {
  const events: Told[] = [];
  const subscription: Subscription = {
    table: 'items',
    group: 'everyone',
    track: 100,
    owner: `owner ${Math.random()}`,
    userId: undefined,
    recheck: () => Promise.resolve(undefined),
    lastEventId,
    read: read ?? ((ids) => Promise.resolve(ids.map((id) => records.get(id)).filter((row): row is Row => row !== undefined))),
    visibleIds: () => Promise.resolve(seen),
    render: (row) => row,
    rendersAlike: true,
  };
  let unwritten = '';
  const stream = {
    open: true,
    sendFramed: (frames: string | Buffer) => (unwritten += String(frames)),
    flush: () => {
      for (const frame of unwritten.split('\n\n').filter(Boolean)) {
        const fields = new Map(frame.split('\n').map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]));
        events.push({ event: fields.get('event')!, id: fields.get('id'), data: JSON.parse(fields.get('data')!) as Told['data'] });
      }
      unwritten = '';
    },
    end: () => {},
    begin: () => {},
  } as unknown as EventStream;
  hub.subscribe(subscription, () => stream);
  return events;
}

describe('the live hub', () => {
  afterEach(() => vi.useRealTimers());

  it('reads the changes that arrive while it pauses after a read together, in one statement, and tells each in order', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
    records.clear();
    for (const id of [1, 2, 3, 4]) records.set(id, { id, text: `${id}` });
    const hub = new LiveHub(limits, log);
    const reads: RecordId[][] = [];
    // Each read takes 2 ms: the next waits 18 ms after it.
    const events = open(hub, [], undefined, async (ids) => {
      reads.push([...ids]);
      await new Promise((resolve) => setTimeout(resolve, 2));
      return ids.map((id) => records.get(id)!);
    });
    await vi.advanceTimersByTimeAsync(1);
    hub.receive({ table: 'items', kind: 'created', ids: [1] });
    for (const id of [2, 3, 4]) {
      await vi.advanceTimersByTimeAsync(5);
      hub.receive({ table: 'items', kind: 'created', ids: [id] });
    }
    await vi.advanceTimersByTimeAsync(30);
    expect(reads).toEqual([[1], [2, 3, 4]]);
    expect(events.map(({ event, data }) => [event, data.id])).toEqual([1, 2, 3, 4].map((id) => ['created', id]));
  });

  it('tells streams of one group that showed different records a change as each showed it, with one id', async () => {
    records.clear();
    const hub = new LiveHub(limits, log);
    records.set(1, { id: 1, text: 'one' });
    // A shown record 1 before it changed, B and C did not (their lists were read before it was created).
    const [a, b, c] = [open(hub, [1]), open(hub, []), open(hub, [])];
    records.set(1, { id: 1, text: 'one, changed' });
    hub.receive({ table: 'items', kind: 'updated', ids: [1] });
    await vi.waitFor(() => expect(c).toHaveLength(1));
    expect(a).toEqual([{ event: 'updated', id: expect.stringMatching(/^[A-Za-z0-9_-]{48}$/), data: { id: 1, text: 'one, changed' } }]);
    expect(b).toEqual([{ ...a[0], event: 'created' }]);
    expect(c).toEqual(b);
    // Now all three have shown it: alike from here, and a record they may not see is told to none.
    records.set(2, { id: 2, text: 'two' });
    records.delete(1);
    hub.receive({ table: 'items', kind: 'deleted', ids: [1] });
    hub.receive({ table: 'items', kind: 'created', ids: [2, 3] });
    await vi.waitFor(() => expect(c).toHaveLength(3));
    for (const events of [a, b, c]) expect(events.slice(1).map(({ event, data }) => [event, data])).toEqual([['deleted', { id: 1 }], ['created', { id: 2, text: 'two' }]]);
    expect(a.slice(1)).toEqual(b.slice(1));
  });

  it('tells streams that showed the same records alike, and each apart again once a reset shows them different ones', async () => {
    records.clear();
    const hub = new LiveHub(limits, log);
    records.set(1, { id: 1, text: 'one' });
    const [seenByA, seenByB] = [[1], [1]];
    const [a, b, c] = [open(hub, seenByA), open(hub, seenByB), open(hub, [])];
    records.set(1, { id: 1, text: 'one, changed' });
    hub.receive({ table: 'items', kind: 'updated', ids: [1] });
    await vi.waitFor(() => expect(c).toHaveLength(1));
    expect([a, b, c].map((events) => events.map(({ event }) => event))).toEqual([['updated'], ['updated'], ['created']]);
    // B's list no longer shows record 1 when it is read again: B alone is told it as new.
    seenByB.length = 0;
    hub.reset();
    records.set(1, { id: 1, text: 'one, changed again' });
    hub.receive({ table: 'items', kind: 'updated', ids: [1] });
    await vi.waitFor(() => expect(c).toHaveLength(3));
    expect([a, b, c].map((events) => events.slice(1).map(({ event }) => event))).toEqual([['reset', 'updated'], ['reset', 'created'], ['reset', 'created']]);
  });

  it('resumes after any id of a change of several records, their ids sealed together', async () => {
    records.clear();
    const hub = new LiveHub(limits, log);
    const watching = open(hub, []);
    for (const id of [1, 2, 3]) records.set(id, { id, text: `item ${id}` });
    hub.receive({ table: 'items', kind: 'created', ids: [1, 2, 3] });
    await vi.waitFor(() => expect(watching).toHaveLength(3));
    const ids = watching.map(({ id }) => id!);
    expect(new Set(ids).size).toBe(3);
    const resumed = open(hub, [1, 2, 3], ids[0]);
    await vi.waitFor(() => expect(resumed).toHaveLength(2));
    expect(resumed).toEqual(watching.slice(1));
    // After the last, nothing is replayed: the next change is the first thing heard.
    const caughtUp = open(hub, [1, 2, 3], ids[2]);
    records.set(4, { id: 4, text: 'item 4' });
    hub.receive({ table: 'items', kind: 'created', ids: [4] });
    await vi.waitFor(() => expect(caughtUp).toHaveLength(1));
    expect(caughtUp[0]).toMatchObject({ event: 'created', data: { id: 4 } });
  });

  it("sends a stream's answer only once it has read what the subscriber may see, so a record written after the answer is told as created", async () => {
    records.clear();
    const hub = new LiveHub(limits, log);
    // What reaches the socket: nothing until the first write (Node sends the head with it).
    const written: string[] = [];
    const response = { writeHead: () => {}, write: (chunk: string) => written.push(String(chunk)), on: () => {}, socket: null, writableLength: 0, writableEnded: false, destroy: () => {}, end: () => {} };
    let seed: (ids: RecordId[]) => void = () => {};
    const subscription: Subscription = {
      table: 'items',
      group: 'everyone',
      track: 100,
      owner: 'owner',
      userId: undefined,
      recheck: () => Promise.resolve(undefined),
      lastEventId: undefined,
      read: (ids) => Promise.resolve(ids.map((id) => records.get(id)).filter((row): row is Row => row !== undefined)),
      visibleIds: () => new Promise((resolve) => (seed = resolve)),
      render: (row) => row,
      rendersAlike: true,
    };
    hub.subscribe(subscription, (closed) => new EventStream(response as never, {}, limits, closed));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(written).toEqual([]);
    seed([]);
    await vi.waitFor(() => expect(written).toEqual([`retry: ${limits.retryMs}\n\n`]));
    records.set(1, { id: 1, text: 'after the answer' });
    hub.receive({ table: 'items', kind: 'created', ids: [1] });
    await vi.waitFor(() => expect(written).toHaveLength(2));
    expect(written[1]).toMatch(/^id: \S+\nevent: created\ndata: \{"id":1,"text":"after the answer"\}\n\n$/);
    hub.close();
  });
});
