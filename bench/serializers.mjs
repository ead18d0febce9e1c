#!/usr/bin/env node
/**
 * `node bench/serializers.mjs [--rounds 10] [--calls 200000]`: the framework's own in-process work
 * for one article create, compiled against interpreted: the body parsed by the serializer
 * (framework/declare/compiled-serializer.ts), the values made into the driver's parameters
 * (store/write/driver-values.ts), the row the INSERT … RETURNING hands back (as PostgreSQL does)
 * assembled into the record with its nested author (store/read/records.ts), and the record rendered.
 * Alternating rounds, so a busy machine's drift reaches both alike; prints each side's median
 * nanoseconds per create and bytes allocated per create (the heap's growth over a round with the
 * collector held off by a large young generation: run with --max-semi-space-size=256), and the
 * ratios. Uses the built framework (dist/): run `npm run build` first.
 */
import { parseArgs } from 'node:util';
import { articles } from '../dist/service/articles.js';
import { interpretRender } from '../dist/framework/declare/compiled-serializer.js';
import { driverShape, toDriverValues } from '../dist/store/write/driver-values.js';
import { compileAssembly, interpretAssembly } from '../dist/store/read/records.js';

const { values: options } = parseArgs({ options: { rounds: { type: 'string', default: '10' }, calls: { type: 'string', default: '200000' } } });
const rounds = Number(options.rounds);
const calls = Number(options.calls);

const compiled = articles.serializer;
const { model, selection } = compiled;
// The same serializer without its compiled parts: what it ran before them.
const interpreted = Object.assign(Object.create(compiled), { parseFields: undefined, renderRecord: interpretRender(compiled.renderSteps) });
const context = { userId: 1, hasPermission: async () => false, version: undefined };
const none = new Set();
const assemble = { compiled: compileAssembly(selection, none), interpreted: interpretAssembly(selection, none) };
// The parameters of each way: compiled per set of columns, or toDriverValues' keys and values as the write took them.
const parameters = {
  compiled: (values) => driverShape(model, values).parameters(values),
  interpreted: (values) => {
    const driverValues = toDriverValues(model, values);
    return [Object.keys(driverValues).join(','), Object.values(driverValues)];
  },
};
/** The row an article create's INSERT … RETURNING hands back on PostgreSQL, its author joined. */
const returned = (title) => ({ id: 100001, title, body: 'Written by the benchmark.', author_id: 1, created_at: new Date(), author__id: 1, author__username: 'bench' });

/** One create's in-process work: the body parsed, its parameters made, the row read back assembled and rendered. */
function createOnce(way, k) {
  const serializer = way === 'compiled' ? compiled : interpreted;
  const values = serializer.parseBody({ title: `Bench ${k}`, body: 'Written by the benchmark.' }, 'create', context);
  parameters[way](values);
  return serializer.render(assemble[way](returned(values.title)), { user: null });
}

function round(way) {
  let kept;
  const heapBefore = process.memoryUsage().heapUsed;
  const started = process.hrtime.bigint();
  for (let k = 0; k < calls; k++) kept = createOnce(way, k);
  const nanos = Number(process.hrtime.bigint() - started) / calls;
  return { nanos, bytes: (process.memoryUsage().heapUsed - heapBefore) / calls, kept };
}

const sides = [
  { name: 'compiled', rounds: [] },
  { name: 'interpreted', rounds: [] },
];
for (const side of sides) round(side.name);
for (let index = 0; index < rounds; index++) {
  for (const side of index % 2 === 0 ? sides : [...sides].reverse()) {
    globalThis.gc?.();
    side.rounds.push(round(side.name));
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
for (const { name, rounds: measured } of sides) {
  console.log(`${name}: ${median(measured.map((r) => r.nanos)).toFixed(0)} ns and ${median(measured.map((r) => r.bytes)).toFixed(0)} bytes per create (parse, parameters, assembly, render)`);
}
const ratio = (of) => median(sides[0].rounds.map((r, index) => of(r) / of(sides[1].rounds[index]))).toFixed(3);
console.log(`compiled / interpreted, median of ${rounds} rounds: time ${ratio((r) => r.nanos)}, bytes ${ratio((r) => r.bytes)}`);
