import { describe, expect, it } from 'vitest';
import { memoryCounterStore } from '../../src/framework/stages/throttling.js';

/** A store on a clock the test moves, at most `maxWindows` windows. */
function storeAt(maxWindows: number) {
  const clock = { time: 0 };
  const store = memoryCounterStore({ maxWindows, now: () => clock.time });
  const hits = async (key: string, windowSeconds = 60, weight?: number) => (await store.hit(key, windowSeconds, weight)).hits;
  return { clock, hits };
}

describe('the in-memory counter store', () => {
  it('counts hits per key within a window, and starts afresh once it has ended', async () => {
    const { clock, hits } = storeAt(10);
    expect([await hits('a'), await hits('a'), await hits('b')]).toEqual([1, 2, 1]);
    clock.time = 60_000;
    expect(await hits('a')).toBe(1);
  });

  it('adds a weight of hits at once, to a new window or a running one', async () => {
    const { hits } = storeAt(10);
    expect([await hits('a', 60, 3), await hits('a'), await hits('a', 60, 2)]).toEqual([3, 4, 6]);
  });

  it('holds no more than its cap: a new window pushes out the one closest to its end', async () => {
    const { clock, hits } = storeAt(3);
    await hits('a', 3600);
    clock.time = 1000;
    await hits('b', 60);
    await hits('c', 3600);
    await hits('d', 3600);
    // b (ends at 61 s) was closest to its end: forgotten, so it counts from 1 again; a, c and d were kept.
    expect(await hits('a', 3600)).toBe(2);
    expect(await hits('c', 3600)).toBe(2);
    expect(await hits('b', 60)).toBe(1);
    // Taking b back in pushed out a (ends at 3600 s, before c and d).
    expect(await hits('a', 3600)).toBe(1);
  });

  it('drops ended windows in order, so live ones are not pushed out while ended ones take room', async () => {
    const { clock, hits } = storeAt(3);
    await hits('short-1', 1);
    await hits('short-2', 1);
    await hits('long', 3600);
    clock.time = 2000;
    // Both ended windows make room for these two; the live one stays counted.
    await hits('new-1', 3600);
    await hits('new-2', 3600);
    expect(await hits('long', 3600)).toBe(2);
    expect(await hits('new-1', 3600)).toBe(2);
    expect(await hits('new-2', 3600)).toBe(2);
  });

  it('keeps a cap of windows however many keys pass through', async () => {
    const { hits } = storeAt(1000);
    for (let i = 0; i < 50_000; i++) await hits(`ip:${i}`);
    // The last thousand are still counted, the one before them is not.
    expect(await hits('ip:49999')).toBe(2);
    expect(await hits('ip:49000')).toBe(2);
    expect(await hits('ip:48999')).toBe(1);
  });
});
