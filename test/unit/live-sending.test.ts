/**
 * How a process sends its committed changes to the others (app/live.ts): one after another in
 * commit order, those of one table and kind (or users' credentials) waiting together as one, and, when the carrier falls
 * behind, at most a bounded number waiting; the ones dropped past it are answered by one reset, so
 * every stream refetches instead of missing them.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { inOrder, type Message } from '../../src/framework/app/live.js';
import type { Change } from '../../src/store/changes/changes.js';

const change = (id: number, kind: Change['kind'] = 'created', table = 'articles'): Change => ({ table, kind, ids: [id] });
const ids = (sent: Message[]): unknown[] => sent.flatMap((message) => ('ids' in message ? message.ids : ['reset']));

/** A carrier that holds every send until released, recording what it was given. */
function slowCarrier() {
  const sent: Message[] = [];
  let release: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => (release = resolve));
  return {
    sent,
    open: () => release(),
    send: async (message: Message) => {
      await gate;
      sent.push(message);
      gate = Promise.resolve();
    },
  };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('sending changes to the other processes', () => {
  afterEach(() => vi.useRealTimers());

  it('sends them one after another, in the order they were committed, those of one table and kind waiting together as one', async () => {
    const carrier = slowCarrier();
    const { publish, sent } = inOrder(carrier.send, () => undefined);
    for (const id of [1, 2, 3]) publish(change(id));
    publish(change(2, 'updated'));
    publish(change(4));
    publish(change(7, 'created', 'comments'));
    publish(change(5));
    carrier.open();
    await sent();
    // 1 was being sent when the others arrived.
    expect(carrier.sent).toEqual([
      change(1),
      { table: 'articles', kind: 'created', ids: [2, 3] },
      change(2, 'updated'),
      change(4),
      change(7, 'created', 'comments'),
      change(5),
    ]);
  });

  it('sends the users whose credentials changed, waiting together, as one message naming each once', async () => {
    const carrier = slowCarrier();
    const { publish, sent } = inOrder(carrier.send, () => undefined);
    publish({ credentials: [1] });
    for (const id of [2, 3, 2]) publish({ credentials: [id] });
    publish(change(9));
    publish({ credentials: [4] });
    publish({ credentials: [5] });
    carrier.open();
    await sent();
    // A change between them keeps its place: the users after it are checked after it.
    expect(carrier.sent).toEqual([{ credentials: [1] }, { credentials: [2, 3] }, change(9), { credentials: [4, 5] }]);
  });

  it('sends at most 100 ids in one message', async () => {
    const carrier = slowCarrier();
    const { publish, sent } = inOrder(carrier.send, () => undefined);
    for (let id = 1; id <= 251; id += 1) publish(change(id));
    carrier.open();
    await sent();
    expect(carrier.sent.map((message) => ('ids' in message ? message.ids.length : 0))).toEqual([1, 100, 100, 50]);
    expect(ids(carrier.sent)).toEqual(Array.from({ length: 251 }, (_, index) => index + 1));
  });

  it('keeps at most 10 000 waiting, and follows those it dropped with a reset', async () => {
    const carrier = slowCarrier();
    const { publish, sent } = inOrder(carrier.send, () => undefined);
    for (let id = 1; id <= 10_050; id += 1) publish(change(id));
    carrier.open();
    await sent();
    // The first was being sent when the others arrived: 10 000 more waited, 49 were dropped.
    expect(ids(carrier.sent)).toEqual([...Array.from({ length: 10_001 }, (_, index) => index + 1), 'reset']);
    publish(change(20_000));
    await sent();
    expect(carrier.sent.at(-1)).toEqual(change(20_000));
  });

  it('goes on after a send fails', async () => {
    const sent: Message[] = [];
    const failures: unknown[] = [];
    const { publish, sent: allSent } = inOrder(async (message) => {
      if ('ids' in message && message.ids[0] === 1) throw new Error('connection terminated');
      sent.push(message);
    }, (error) => failures.push(error));
    publish(change(1));
    publish(change(2));
    await allSent();
    expect(sent).toEqual([change(2)]);
    expect(failures).toEqual([new Error('connection terminated')]);
  });

  it('sends a change at once when nothing is being sent, however long the last send took', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
    const sent: Message[] = [];
    // Each send takes 20 ms. Holding the next back after it would let another process's later change
    // (sent at once there) reach the streams before this one.
    const { publish } = inOrder(async (message) => {
      sent.push(message);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }, () => undefined);
    publish(change(1));
    await vi.advanceTimersByTimeAsync(21);
    publish(change(2));
    expect(sent).toEqual([change(1), change(2)]);
  });

  it('tells when every change waiting has been sent (a closing process waits for it)', async () => {
    const carrier = slowCarrier();
    const { publish, sent } = inOrder(carrier.send, () => undefined);
    let done = false;
    for (const id of [1, 2, 3]) publish(change(id));
    void sent().then(() => (done = true));
    await settled();
    expect(done).toBe(false);
    carrier.open();
    await sent();
    expect(ids(carrier.sent)).toEqual([1, 2, 3]);
  });
});
