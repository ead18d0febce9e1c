/** The ring of recent changes a resumed stream is replayed from (Last-Event-ID). */
import { describe, expect, it } from 'vitest';
import { ChangeRing } from '../../src/framework/actions/live/ring.js';

describe('the ring of recent changes', () => {
  it('gives each record of a change its own event id, opaque, sealed once for all its subscribers', () => {
    const ring = new ChangeRing(10);
    const [entry, other] = ring.add('items', 'deleted', [4, 6]);
    const ids = [ring.eventId(entry!), ring.eventId(entry!)];
    expect(ids[0]).toMatch(/^[A-Za-z0-9_-]{48}$/);
    // Sent to two subscribers, one change gives one id, which resumes after it.
    expect(ids[1]).toBe(ids[0]);
    expect(ring.eventId(other!)).not.toBe(ids[0]);
    // A new ring (another life) seals the same position otherwise.
    const another = new ChangeRing(10);
    const [again] = another.add('items', 'deleted', [4]);
    expect(another.eventId(again!)).not.toBe(ids[0]);
    ring.add('items', 'created', [5]);
    expect(ring.since(ids[0]!, 'items')?.map(({ id: record }) => record)).toEqual([6, 5]);
  });

  it('replays the table\'s entries after an id it still holds, and none for the newest', () => {
    const ring = new ChangeRing(10);
    const [first] = ring.add('items', 'created', [1]);
    ring.add('notes', 'created', [2]);
    const [last] = ring.add('items', 'updated', [1]);
    expect(ring.since(ring.eventId(first!), 'items')).toEqual([last]);
    expect(ring.since(ring.eventId(last!), 'items')).toEqual([]);
  });

  it('cannot replay after an id older than what it retains, from another life, or altered: the client must refetch', () => {
    const ring = new ChangeRing(3);
    const [oldest, second] = ring.add('items', 'created', [1, 2]);
    ring.add('items', 'created', [3, 4, 5]);
    expect(ring.since(ring.eventId(oldest!), 'items')).toBeUndefined();
    const kept = ring.eventId(second!);
    expect(ring.since(kept, 'items')?.map(({ id }) => id)).toEqual([3, 4, 5]);
    const other = new ChangeRing(3);
    const [foreign] = other.add('items', 'created', [1, 2]);
    expect(ring.since(other.eventId(foreign!), 'items')).toBeUndefined();
    const altered = `${kept.slice(0, 20)}${kept[20] === 'A' ? 'B' : 'A'}${kept.slice(21)}`;
    expect(ring.since(altered, 'items')).toBeUndefined();
    expect(ring.since('garbage', 'items')).toBeUndefined();
  });
});
