/**
 * How a process sends its committed changes to the others (app/live.ts): one after another in
 * commit order, and, when the carrier falls behind, at most a bounded number waiting; the ones
 * dropped past it are answered by one reset, so every stream refetches instead of missing them.
 */
import { describe, expect, it } from 'vitest';
import { inOrder, type Message } from '../../src/framework/app/live.js';
import type { Change } from '../../src/store/changes.js';

const change = (id: number): Change => ({ table: 'articles', kind: 'created', ids: [id] });

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
  it('sends them one after another, in the order they were committed', async () => {
    const carrier = slowCarrier();
    const publish = inOrder(carrier.send, () => undefined);
    for (const id of [1, 2, 3]) publish(change(id));
    carrier.open();
    await settled();
    expect(carrier.sent).toEqual([change(1), change(2), change(3)]);
  });

  it('keeps at most 10 000 waiting, and follows those it dropped with a reset', async () => {
    const carrier = slowCarrier();
    const publish = inOrder(carrier.send, () => undefined);
    for (let id = 1; id <= 10_050; id += 1) publish(change(id));
    carrier.open();
    await settled();
    // The first was being sent when the others arrived: 10 000 more waited, 49 were dropped.
    expect(carrier.sent).toHaveLength(10_002);
    expect(carrier.sent.at(-2)).toEqual(change(10_001));
    expect(carrier.sent.at(-1)).toEqual({ reset: true });
    publish(change(20_000));
    await settled();
    expect(carrier.sent.at(-1)).toEqual(change(20_000));
  });

  it('goes on after a send fails', async () => {
    const sent: Message[] = [];
    const failures: unknown[] = [];
    const publish = inOrder(async (message) => {
      if ('ids' in message && message.ids[0] === 1) throw new Error('connection terminated');
      sent.push(message);
    }, (error) => failures.push(error));
    publish(change(1));
    publish(change(2));
    await settled();
    expect(sent).toEqual([change(2)]);
    expect(failures).toEqual([new Error('connection terminated')]);
  });
});
