/**
 * The heap's growth by file transfers (base/transfer-heap.ts): the transfers' while any moves, `serve`'s
 * once none has for a second, and nothing set at all where `serve` chose no growth (an app built
 * in a test, or a deployer's own flag). The flags V8 gets are recorded, not set.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const flags: string[] = [];
vi.mock('node:v8', () => ({ setFlagsFromString: (flag: string) => flags.push(flag) }));

const growth = { idle: '--heap-growing-percent=50', transferring: '--heap-growing-percent=200' };
const load = () => import('../../src/framework/base/transfer-heap.js');

describe('heap growth by file transfers', () => {
  beforeEach(() => {
    vi.resetModules();
    vi.useFakeTimers();
    flags.length = 0;
  });
  afterEach(() => vi.useRealTimers());

  it('sets nothing unless serve chose a growth', async () => {
    const { fileTransfer } = await load();
    fileTransfer()();
    vi.advanceTimersByTime(5000);
    expect(flags).toEqual([]);
  });

  it("sets the transfers' growth while files move, and serve's again after a quiet second", async () => {
    const { fileTransfer, growHeapForTransfers } = await load();
    growHeapForTransfers(growth);
    const first = fileTransfer();
    const second = fileTransfer();
    expect(flags).toEqual([growth.transferring]);
    first();
    vi.advanceTimersByTime(3000);
    // One still moving: nothing changes.
    expect(flags).toEqual([growth.transferring]);
    second();
    second();
    vi.advanceTimersByTime(1000);
    // Ended within the last second: still V8's own.
    expect(flags).toEqual([growth.transferring]);
    vi.advanceTimersByTime(1000);
    expect(flags).toEqual([growth.transferring, growth.idle]);
    fileTransfer()();
    expect(flags).toEqual([growth.transferring, growth.idle, growth.transferring]);
  });
});
