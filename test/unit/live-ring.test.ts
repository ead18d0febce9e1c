/** The ring of recent changes a resumed stream is replayed from (Last-Event-ID). */
import { describe, expect, it } from 'vitest';
import { ChangeRing } from '../../src/framework/actions/live/ring.js';

describe('the ring of recent changes', () => {
  it('gives each record of a change its own event id, counting up', () => {
    const ring = new ChangeRing(10);
    const entries = ring.add('items', 'deleted', [4, 5]);
    expect(entries.map((entry) => ring.eventId(entry))).toEqual([`${ring.epoch}-1`, `${ring.epoch}-2`]);
  });

  it('replays the table\'s entries after an id it still holds, and none for the newest', () => {
    const ring = new ChangeRing(10);
    const [first] = ring.add('items', 'created', [1]);
    ring.add('notes', 'created', [2]);
    const [last] = ring.add('items', 'updated', [1]);
    expect(ring.since(ring.eventId(first!), 'items')).toEqual([last]);
    expect(ring.since(ring.eventId(last!), 'items')).toEqual([]);
  });

  it('cannot replay after an id older than what it retains, from another life, or not yet given: the client must refetch', () => {
    const ring = new ChangeRing(3);
    const [oldest] = ring.add('items', 'created', [1]);
    ring.add('items', 'created', [2, 3, 4, 5]);
    expect(ring.since(ring.eventId(oldest!), 'items')).toBeUndefined();
    expect(ring.since(`${ring.epoch}-2`, 'items')?.map(({ id }) => id)).toEqual([3, 4, 5]);
    expect(ring.since(`${new ChangeRing(3).epoch}-5`, 'items')).toBeUndefined();
    expect(ring.since(`${ring.epoch}-6`, 'items')).toBeUndefined();
    expect(ring.since('garbage', 'items')).toBeUndefined();
  });
});
