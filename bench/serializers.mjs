#!/usr/bin/env node
/**
 * `node bench/serializers.mjs [--rounds 10] [--calls 200000]`: the serializer's own work for one
 * article create, in-process, compiled (framework/declare/compiled-serializer.ts) against the same
 * serializer interpreted: a body parsed, then the stored row rendered (as PostgreSQL hands it back).
 * Alternating rounds, so a busy machine's drift reaches both alike; prints each side's median
 * nanoseconds per create and bytes allocated per create (the heap's growth over a round with the
 * collector held off by a large young generation: run with --max-semi-space-size=256), and the
 * ratios. Uses the built framework (dist/): run `npm run build` first.
 */
import { parseArgs } from 'node:util';
import { articles } from '../dist/service/articles.js';
import { interpretRender } from '../dist/framework/declare/compiled-serializer.js';

const { values: options } = parseArgs({ options: { rounds: { type: 'string', default: '10' }, calls: { type: 'string', default: '200000' } } });
const rounds = Number(options.rounds);
const calls = Number(options.calls);

const compiled = articles.serializer;
// The same serializer without its compiled parts: what it ran before them.
const interpreted = Object.assign(Object.create(compiled), { parseFields: undefined, renderRecord: interpretRender(compiled.renderSteps) });
const context = { userId: 1, hasPermission: async () => false, version: undefined };
const row = { id: 100001, title: 'Bench', body: 'Written by the benchmark.', author_id: 1, created_at: new Date(), author: { id: 1, username: 'bench' } };

/** One create's serializer work: the body parsed, the row rendered. */
function createOnce(serializer, k) {
  const values = serializer.parseBody({ title: `Bench ${k}`, body: 'Written by the benchmark.' }, 'create', context);
  return serializer.render({ ...row, title: values.title }, { user: null });
}

function round(serializer) {
  let kept;
  const heapBefore = process.memoryUsage().heapUsed;
  const started = process.hrtime.bigint();
  for (let k = 0; k < calls; k++) kept = createOnce(serializer, k);
  const nanos = Number(process.hrtime.bigint() - started) / calls;
  return { nanos, bytes: (process.memoryUsage().heapUsed - heapBefore) / calls, kept };
}

const sides = [
  { name: 'compiled', serializer: compiled, rounds: [] },
  { name: 'interpreted', serializer: interpreted, rounds: [] },
];
for (const side of sides) round(side.serializer);
for (let index = 0; index < rounds; index++) {
  for (const side of index % 2 === 0 ? sides : [...sides].reverse()) {
    globalThis.gc?.();
    side.rounds.push(round(side.serializer));
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
for (const { name, rounds: measured } of sides) {
  console.log(`${name}: ${median(measured.map((r) => r.nanos)).toFixed(0)} ns and ${median(measured.map((r) => r.bytes)).toFixed(0)} bytes per create (parse and render)`);
}
const ratio = (of) => median(sides[0].rounds.map((r, index) => of(r) / of(sides[1].rounds[index]))).toFixed(3);
console.log(`compiled / interpreted, median of ${rounds} rounds: time ${ratio((r) => r.nanos)}, bytes ${ratio((r) => r.bytes)}`);
