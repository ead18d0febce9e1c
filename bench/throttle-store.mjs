/**
 * The in-memory throttle counter store at scale (issue 18, item 6): hits per
 * second once 200 000 windows are live, for keys it has never seen (each one
 * a new window) and for keys it holds. In process, no server; bounded to a
 * few seconds per phase.
 *
 *   node --expose-gc bench/throttle-store.mjs [dist folder]    (default: ./dist, after `npx tsc -p tsconfig.json`)
 *
 * Point it at an older build's dist to compare.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = resolve(process.argv[2] ?? 'dist');
const { memoryCounterStore } = await import(pathToFileURL(`${dist}/framework/stages/throttling.js`).href);
const LIVE = 200_000;
const PHASE_MS = 3000;

/** Hits per second of `keyAt(i)` for i = 0, 1, … during PHASE_MS. */
async function rate(store, keyAt) {
  const started = performance.now();
  let count = 0;
  while (performance.now() - started < PHASE_MS) {
    for (let batch = 0; batch < 100; batch++) await store.hit(keyAt(count++), 60);
  }
  return Math.round(count / ((performance.now() - started) / 1000));
}

const store = memoryCounterStore();
for (let i = 0; i < LIVE; i++) await store.hit(`default:ip:live-${i}:100/60`, 60);
const results = {
  dist,
  liveWindows: LIVE,
  newKeysPerSecond: await rate(store, (i) => `default:ip:new-${i}:100/60`),
  liveKeysPerSecond: await rate(store, (i) => `default:ip:live-${i % LIVE}:100/60`),
};
globalThis.gc?.();
// The store's own memory, once the garbage of the runs is collected (with --expose-gc).
results.heapUsedMiB = Math.round(process.memoryUsage().heapUsed / 2 ** 20);
console.log(JSON.stringify(results, null, 2));
