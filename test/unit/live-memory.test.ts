/**
 * A live stream's memory (actions/live/memory.ts): whether two hold the same ids, however those
 * came and went, and that most that differ are told apart by their fingerprints, not id by id.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Memory } from '../../src/framework/actions/live/memory.js';

const ids = (count: number, from = 1) => Array.from({ length: count }, (_, index) => String(from + index));

describe("a live stream's memory", () => {
  afterEach(() => vi.restoreAllMocks());

  it('holds the same ids as another however they were remembered and forgotten, in any order', () => {
    const seeded = new Memory(['1', '3', '4'], 10);
    const grown = new Memory(['2'], 10);
    for (const key of ['4', '1', '3', '1']) grown.remember(key);
    expect(grown.forget('2')).toBe(true);
    expect(grown.forget('2')).toBe(false);
    expect(grown.holdsSameAs(seeded)).toBe(true);
    expect(seeded.holdsSameAs(grown)).toBe(true);
    grown.forget('4');
    grown.remember('5');
    expect(grown.holdsSameAs(seeded)).toBe(false);
  });

  it('holds none past its track, as another that holds none', () => {
    const full = new Memory(['1', '2'], 2);
    expect(full.holdsSameAs(new Memory(null, 2))).toBe(false);
    full.remember('3');
    expect(full.known).toBeNull();
    expect(full.holdsSameAs(new Memory(null, 2))).toBe(true);
    expect(full.holdsSameAs(new Memory([], 2))).toBe(false);
  });

  it('tells memories of as many differing ids apart without comparing them id by id', () => {
    const [mine, theirs] = [new Memory(ids(1000), 2000), new Memory(ids(1000, 2), 2000)];
    const has = vi.spyOn(Set.prototype, 'has');
    expect(mine.holdsSameAs(theirs)).toBe(false);
    expect(has).not.toHaveBeenCalled();
    has.mockClear();
    expect(mine.holdsSameAs(new Memory(ids(1000), 2000))).toBe(true);
    expect(has).toHaveBeenCalledTimes(1000);
  });
});
