#!/usr/bin/env node
/**
 * `node bench/profile-summary.mjs FILE.cpuprofile`: where a `node --cpu-prof`
 * profile spent its time, by layer, by package or source file and by function (self time).
 */
import { readFileSync } from 'node:fs';
import { layersOf } from './layers.mjs';

const profile = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const interval = (profile.endTime - profile.startTime) / profile.samples.length;
const samples = new Map();
for (const id of profile.samples) samples.set(id, (samples.get(id) ?? 0) + 1);

/** node_modules/<package>, dist/<file>, node:<module>, or what V8 calls it. */
function placeOf(url) {
  if (!url) return '(native / V8)';
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) return module[1];
  const ours = /\/(dist\/.+|bench\/.+)$/.exec(url);
  if (ours) return ours[1];
  return url.startsWith('node:') ? url : url.replace(/^file:\/\//, '');
}

/** A function by name and where it is defined. */
const nameOf = ({ callFrame: { functionName, url, lineNumber } }) => `${functionName || '(anonymous)'} ${placeOf(url)}:${lineNumber + 1}`;

const byPlace = new Map();
const byFunction = new Map();
let total = 0;
for (const node of profile.nodes) {
  const count = samples.get(node.id) ?? 0;
  if (count === 0) continue;
  total += count;
  const place = placeOf(node.callFrame.url);
  byPlace.set(place, (byPlace.get(place) ?? 0) + count);
  const name = nameOf(node);
  byFunction.set(name, (byFunction.get(name) ?? 0) + count);
}

// Total time: a sample counts once for every function on its stack (self time plus callees').
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node);
const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));
const inclusive = new Map();
for (const [id, count] of samples) {
  const names = new Set();
  for (let node = nodeById.get(id); node; node = parentOf.get(node.id)) names.add(nameOf(node));
  for (const name of names) inclusive.set(name, (inclusive.get(name) ?? 0) + count);
}
const ours = new Map([...inclusive].filter(([name]) => / dist\//.test(name)));

const top = (map, n, of = total) =>
  [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, count]) => `${((100 * count) / of).toFixed(1).padStart(5)} %  ${name}`)
    .join('\n');
const { layers } = layersOf(profile);
const busy = [...layers.values()].reduce((sum, count) => sum + count, 0);

console.log(`${total} samples, ${((total * interval) / 1e6).toFixed(1)} s\n\nSelf time by layer, of the time not idle:\n${top(layers, 20, busy)}\n\nSelf time by place:\n${top(byPlace, 15)}\n\nSelf time by function:\n${top(byFunction, 25)}\n\nTotal time of the project's own functions (with their callees):\n${top(ours, 25)}`);
