#!/usr/bin/env node
/**
 * `node bench/request-trace.mjs [--db sqlite|postgres] [--warmup N] [--repeat R] [--list]` (after `npm run build`):
 * how many of Restfold's files, and how many function calls, one request goes through.
 *
 * Serves the example service in this process as `restfold serve` does (dist/framework/app/server.js,
 * on 127.0.0.1, a free port, LOG_LEVEL=warn, throttling off), on a fresh database: a temporary
 * SQLite file, or with `--db postgres` a fresh schema on DATABASE_URL's database (dropped at the
 * end). Creates a user and a token, warms up (N requests of each kind, default 300, so lazy
 * compilation and caches settle), then for each request below takes V8's precise coverage with call
 * counts around exactly one request, sent over real HTTP: V8 counts every call, not a sample.
 * Reported per request: the files of Restfold (dist/, named by their src/ file) with at least one
 * function called and the calls into them, and the same for dependencies (node_modules). Node's own
 * modules are left out: the client (fetch) runs in this process too and would be counted with them.
 * R runs per request (default 3): a range is shown where they differ. `--list` prints each file's calls.
 *
 * SQLite's list reads run on reader threads (src/store/dialects/sqlite/readers.ts), isolates of their own:
 * their coverage is taken too, through the inspector's NodeWorker domain, and counted with the rest.
 */
import { randomBytes } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { freshDatabase } from './servers.mjs';

const { values: options } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    warmup: { type: 'string', default: '300' },
    repeat: { type: 'string', default: '3' },
    list: { type: 'boolean', default: false },
  },
});
const warmup = Number(options.warmup);
const repeat = Number(options.repeat);
if (!['sqlite', 'postgres'].includes(options.db)) throw new Error('--db must be sqlite or postgres.');
if (!Number.isSafeInteger(warmup) || warmup < 0 || !Number.isSafeInteger(repeat) || repeat < 1 || repeat > 20) {
  throw new Error('--warmup must be a non-negative integer, --repeat between 1 and 20.');
}
if (options.db === 'postgres') {
  if (!process.env.DATABASE_URL) throw new Error('--db postgres needs DATABASE_URL (a database this script may create a schema in).');
  process.env.TEST_DATABASE_URL = process.env.DATABASE_URL;
}

const DIST = new URL('../dist/', import.meta.url).href;
const { loadConfig, openDatabase } = await import(`${DIST}framework/index.js`);
const { serve } = await import(`${DIST}framework/app/server.js`);
const { createUser } = await import(`${DIST}framework/app/admin.js`);
const { createToken } = await import(`${DIST}framework/stages/authentication/token.js`);
const { default: service } = await import(`${DIST}service/app.js`);

/** A script's place: `src/….ts` for Restfold's, `node_modules/…` for a dependency's, undefined for Node's own and this script's. */
function placeOf(url) {
  if (url.startsWith(DIST)) return { ours: true, name: `src/${url.slice(DIST.length).replace(/\.js$/, '.ts')}` };
  const at = url.lastIndexOf('/node_modules/');
  return at >= 0 ? { ours: false, name: url.slice(at + 1) } : undefined;
}

/**
 * The inspector sessions of this process: the main thread's, and each worker thread's (SQLite's
 * readers) reached through NodeWorker, all with precise call-count coverage on.
 */
async function coverageSessions() {
  const main = new Session();
  main.connect();
  const workers = new Map();
  let next = 0;
  main.on('NodeWorker.receivedMessageFromWorker', ({ params: { sessionId, message } }) => {
    const reply = JSON.parse(message);
    const pending = workers.get(sessionId)?.pending.get(reply.id);
    if (!pending) return;
    workers.get(sessionId).pending.delete(reply.id);
    if (reply.error) pending.reject(new Error(reply.error.message));
    else pending.resolve(reply.result);
  });
  const inWorker = (sessionId, method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      workers.get(sessionId).pending.set(id, { resolve, reject });
      main.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
    });
  const start = async (post) => {
    await post('Profiler.enable');
    await post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  };
  main.on('NodeWorker.attachedToWorker', ({ params: { sessionId } }) => {
    workers.set(sessionId, { pending: new Map(), started: undefined });
    workers.get(sessionId).started = start((method, params) => inWorker(sessionId, method, params));
  });
  main.on('NodeWorker.detachedFromWorker', ({ params: { sessionId } }) => workers.delete(sessionId));
  await start((method, params) => main.post(method, params));
  await main.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  return {
    /** Every script's coverage since the last call, in every thread (each call resets the counts). */
    async take() {
      const taken = [(await main.post('Profiler.takePreciseCoverage')).result];
      for (const [sessionId, worker] of workers) {
        await worker.started;
        taken.push((await inWorker(sessionId, 'Profiler.takePreciseCoverage')).result);
      }
      return taken.flat();
    },
  };
}

/** Calls per file (functions called at least once), Restfold's and the dependencies' apart. */
function tally(scripts) {
  const files = new Map();
  for (const { url, functions } of scripts) {
    const place = placeOf(url);
    if (!place) continue;
    // Without block coverage, a function's first range spans it and counts its calls.
    const calls = functions.reduce((sum, { ranges }) => sum + ranges[0].count, 0);
    if (calls > 0) files.set(place.name, { ours: place.ours, calls: (files.get(place.name)?.calls ?? 0) + calls });
  }
  const sum = (ours) => {
    const chosen = [...files.values()].filter((file) => file.ours === ours);
    return { files: chosen.length, calls: chosen.reduce((total, file) => total + file.calls, 0) };
  };
  return { restfold: sum(true), dependencies: sum(false), files };
}

const database = await freshDatabase(options.db, 'trace');
const config = loadConfig({ ...process.env, DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', WORKERS: '1', SECRET_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' });
const sessions = await coverageSessions();
const app = await serve(service, config);
try {
  const accounts = openDatabase(database.url);
  let userId, token;
  try {
    userId = await createUser(accounts, { username: 'tracer', email: 'tracer@example.com', password: 'trace-pass-123', permissions: [] });
    token = await createToken(accounts, userId);
  } finally {
    await accounts.close();
  }

  const base = `http://127.0.0.1:${app.server.address().port}`;
  let sent = 0;
  const send = async (method, path, body) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Token ${token}`, ...(body && { 'content-type': 'application/json' }) },
      body: body && JSON.stringify(body),
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status}`);
  };
  /** The requests: a label and how to send one (each write changes something new). */
  const requests = [
    ['PATCH /api/v1/users/{id}/ (email)', () => send('PATCH', `/api/v1/users/${userId}/`, { email: `tracer-${++sent}@example.com` })],
    ['GET /api/v1/users/', () => send('GET', '/api/v1/users/')],
    ['GET /api/v1/users/{id}/', () => send('GET', `/api/v1/users/${userId}/`)],
    ['POST /api/v1/tags/', () => send('POST', '/api/v1/tags/', { name: `trace-${++sent}` })],
  ];

  for (let round = 0; round < warmup; round++) for (const [, request] of requests) await request();

  const rows = [];
  for (const [label, request] of requests) {
    const runs = [];
    for (let run = 0; run < repeat; run++) {
      await sessions.take();
      await request();
      // What the server does once the answer is out (its onResponse hooks, a connection's release).
      await new Promise((resolve) => setTimeout(resolve, 20));
      runs.push(tally(await sessions.take()));
    }
    rows.push({ label, runs });
  }

  const range = (values) => (Math.min(...values) === Math.max(...values) ? String(values[0]) : `${Math.min(...values)}–${Math.max(...values)}`);
  console.log(`\n${options.db}, after ${warmup} warm-up requests of each kind, ${repeat} run(s) each:\n`);
  console.log('| request | Restfold files | Restfold calls | dependency files | dependency calls |');
  console.log('|---|---:|---:|---:|---:|');
  for (const { label, runs } of rows) {
    const of = (side, key) => range(runs.map((run) => run[side][key]));
    console.log(`| ${label} | ${of('restfold', 'files')} | ${of('restfold', 'calls')} | ${of('dependencies', 'files')} | ${of('dependencies', 'calls')} |`);
  }
  if (options.list) {
    for (const { label, runs } of rows) {
      console.log(`\n${label} (the last run):`);
      const files = [...runs.at(-1).files].sort(([a, x], [b, y]) => Number(y.ours) - Number(x.ours) || a.localeCompare(b));
      for (const [name, { calls }] of files) console.log(`  ${String(calls).padStart(6)}  ${name}`);
    }
  }
} finally {
  await app.close();
  await database.drop();
}
