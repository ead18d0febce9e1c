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

/**
 * Finer than the layer, for Restfold's own code: the stage of a request a file belongs to
 * (authentication, throttle, parsing, validation by the serializer, permissions, the action, the
 * write unit, the statement, the driver's glue, rendering, logging, routing and dispatch); other
 * code keeps its layer. Self time only: a stage's JSON.parse counts under V8, its query under pg.
 */
export function stageOf(callFrame) {
  const file = /\/dist\/((?:framework|store|core|service)\/.+)\.js$/.exec(callFrame.url ?? '')?.[1];
  if (!file || callFrame.functionName === '(idle)') return layerOf(callFrame);
  const stages = [
    [/^framework\/stages\/authentication\/|^store\/accounts\/|^framework\/base\/auth-user/, 'authentication (token lookup, the user)'],
    [/^framework\/stages\/throttling/, 'throttle'],
    [/^framework\/stages\/(parsers|negotiation|versioning|conditional|list-params)/, 'parsing and negotiation'],
    [/^framework\/stages\/permissions|^framework\/stages\/scope\//, 'permissions and scope'],
    [/^framework\/declare\/|^core\/(fields|field-kinds|file-fields|json)/, 'validation and rendering (serializers, fields)'],
    [/^framework\/actions\//, 'the action (create, update, destroy, …)'],
    [/^framework\/write\//, 'the write unit (transaction, hooks, change log)'],
    [/^store\/(statements|write|read|conditions)\//, 'the statement (built, bound, its rows assembled)'],
    [/^store\/(dialects|connection)\//, "the driver's glue (named statements, the pool)"],
    [/^store\/changes\/|^framework\/app\/live/, 'live changes (NOTIFY)'],
    [/^framework\/render\//, 'rendering (envelopes, errors, links)'],
    [/^framework\/base\/request-logger|^framework\/app\/plugins\/request-identity/, 'logging and request ids'],
    [/^framework\/base\/hosts/, 'hosts (the allowed-host check, the Location)'],
    [/^framework\/(routing\/|views|app\/plugins\/)|^framework\/base\/body-rate/, 'routing, dispatch and the app-wide hooks'],
  ];
  return stages.find(([pattern]) => pattern.test(file))?.[1] ?? `Restfold, other: ${file.replace(/[^/]+$/, '')}`;
}

/** Samples per layer (idle left out), or per what `groupOf` names, and the sampling interval in µs. */
export function layersOf(profile, groupOf = layerOf) {
  const interval = (profile.endTime - profile.startTime) / profile.samples.length;
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const layers = new Map();
  for (const node of profile.nodes) {
    const count = counts.get(node.id);
    const layer = count && groupOf(node.callFrame);
    if (layer) layers.set(layer, (layers.get(layer) ?? 0) + count);
  }
  return { layers, interval };
}
