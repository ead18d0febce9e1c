/**
 * A `node --cpu-prof` profile's time by layer: Node's http and sockets, Fastify, Restfold's
 * framework (by folder: its stages, actions, routing…), store and core, Kysely, pg, and the
 * garbage collector. Self time only, so each sample counts in one layer. The profiler samples wall
 * time: a function preempted on a busy machine counts the time it waited (the socket writes most).
 */

/** The layer a profile node's own time belongs to; undefined for idle time. */
export function layerOf({ functionName, url }) {
  if (functionName === '(idle)') return undefined;
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (!url) return /^(writev|writeUtf8String|writeBuffer|writeLatin1String)$/.test(functionName) ? 'socket writes (system calls)' : 'V8 and its built-ins (JSON, …)';
  if (url.startsWith('node:')) {
    if (/^node:(internal\/)?crypto/.test(url)) return 'Node: crypto (token hash, ETag)';
    return 'Node: http, sockets, streams, events, microtasks';
  }
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (module) {
    if (module === 'kysely') return 'Kysely';
    if (/^(pg|pg-.+|postgres-.+|pgpass)$/.test(module)) return 'pg (driver)';
    return 'Fastify, its plugins and other packages';
  }
  const ours = /\/dist\/(framework|store|core|service)\/(?:([^/]+)\/)?/.exec(url);
  if (ours) return ours[1] === 'framework' && ours[2] ? `Restfold framework: ${ours[2]}/` : `Restfold ${ours[1]}`;
  return /\/bench\/baseline\//.test(url) ? 'the baseline’s handler' : 'other';
}

/** Samples per layer (idle left out), and the sampling interval in µs. */
export function layersOf(profile) {
  const interval = (profile.endTime - profile.startTime) / profile.samples.length;
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const layers = new Map();
  for (const node of profile.nodes) {
    const count = counts.get(node.id);
    const layer = count && layerOf(node.callFrame);
    if (layer) layers.set(layer, (layers.get(layer) ?? 0) + count);
  }
  return { layers, interval };
}
