#!/usr/bin/env node
/**
 * `npm run build && node bench/features.mjs [--db postgres|sqlite] [--rounds 6] [--slot-seconds 2] [--subscribers 100] [--connections 16] [--node-flags '--cpu-prof …']`
 *
 * What each feature costs a create (issue 50): one server (`restfold serve --app
 * bench/features/app.ts`, one process) with five collections of one shape: plain, with a file field
 * (created without a file), with hooks in the transaction, live with `--subscribers` streams open
 * on it, and scoped to the owner. The load (autocannon, `--connections` connections, each request
 * a create) moves from one collection to the next every slot, in a rotated order each round, so
 * the machine's drift reaches all alike; each feature's figure is the median over rounds of its
 * req/s divided by the plain collection's in the same round. Every answer must be a 201. The live
 * streams, read in a process of their own, must each receive the events of the live collection's
 * creates (counted). Each slot's CPU per create is counted apart for the server, the load generator
 * and the readers, which share the machine: the rate alone charges the readers' work to the server.
 * PostgreSQL needs TEST_DATABASE_URL (a schema is made in it and dropped).
 */
import { fork, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { cpuTicksOf, freshDatabase, startServer } from './servers.mjs';

const { values: options } = parseArgs({
  options: {
    db: { type: 'string', default: 'postgres' },
    rounds: { type: 'string', default: '6' },
    'slot-seconds': { type: 'string', default: '2' },
    subscribers: { type: 'string', default: '100' },
    connections: { type: 'string', default: '16' },
    // Passed to the server's node, `--cpu-prof --cpu-prof-dir=DIR` say.
    'node-flags': { type: 'string', default: '' },
  },
});
const SUBSCRIBERS = Number(options.subscribers);
const COLLECTIONS = ['plain', 'filed', 'hooked', 'live', 'scoped'];
const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
const loads = () => loadavg().map((load) => load.toFixed(1)).join(' ');

const database = await freshDatabase(options.db, 'features');
const files = mkdtempSync(join(tmpdir(), 'restfold-bench-features-'));
const env = {
  DATABASE_URL: database.url,
  FILES_STORAGE: `file:${files}`,
  SECRET_KEY: 'features-bench-secret-key-0123456789ab',
  LOG_LEVEL: 'warn',
  WORKERS: '1',
  THROTTLE_ANON: 'off',
  THROTTLE_USER: 'off',
  // Every subscriber is the bench's one user; streams may take at most half the connections.
  LIVE_MAX_STREAMS_PER_USER: String(Math.max(5, SUBSCRIBERS)),
  MAX_CONNECTIONS: String(2 * SUBSCRIBERS + 128),
};
const app = ['--app', 'bench/features/app.ts'];
const server = await startServer([...options['node-flags'].split(' ').filter(Boolean), 'dist/cli.js', 'serve', ...app], env);
let readers;
const finish = async () => {
  readers?.disconnect();
  await server.stop();
  await database.drop();
  rmSync(files, { recursive: true, force: true });
};
try {
const cli = (...args) => {
  const run = spawnSync(process.execPath, ['dist/cli.js', ...args, ...app], { encoding: 'utf8', env: { ...process.env, ...env } });
  if (run.status !== 0) throw new Error(`restfold ${args.join(' ')}: ${run.stderr}`);
  return run.stdout.trim();
};
cli('createuser', '--username', 'bench', '--password', 'bench-password-123');
const token = cli('token', 'create', '--username', 'bench');
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

// The live collection's streams, read in a process of their own (bench/features/readers.mjs).
readers = fork(fileURLToPath(new URL('features/readers.mjs', import.meta.url)), [`${server.base}/api/v1/live/events/`, headers.authorization, String(SUBSCRIBERS)]);
const fromReaders = () =>
  new Promise((resolve, reject) => {
    const exited = (code) => reject(new Error(`the readers exited (${code})`));
    readers.once('exit', exited);
    readers.once('message', (message) => {
      readers.off('exit', exited);
      resolve(message);
    });
  });
await fromReaders();

/** CPU per create in µs, over a slot: the server's, the load generator's (this process), the readers'. */
const TICK_US = 10_000;
function cpuSince(before, created) {
  const now = { server: cpuTicksOf(server.pid), readers: cpuTicksOf(readers.pid), bench: process.cpuUsage() };
  if (!before) return now;
  const bench = now.bench.user + now.bench.system - before.bench.user - before.bench.system;
  return {
    server: ((now.server - before.server) * TICK_US) / created,
    bench: bench / created,
    readers: ((now.readers - before.readers) * TICK_US) / created,
  };
}

async function slot(name, seconds) {
  const before = cpuSince();
  const result = await autocannon({
    url: `${server.base}/api/v1/${name}/`,
    method: 'POST',
    headers,
    body: JSON.stringify({ title: ' a record ', body: 'text' }),
    connections: Number(options.connections),
    duration: seconds,
  });
  const refused = result.non2xx + result.errors + result.timeouts;
  if (refused > 0) throw new Error(`${name}: ${refused} answers were not 2xx (non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts})`);
  return { rate: result.requests.total / seconds, created: result.requests.total, cpu: cpuSince(before, result.requests.total) };
}

console.log(`features bench on ${options.db}: ${options.rounds} rounds of ${options['slot-seconds']} s per collection, ${options.connections} connections, ${SUBSCRIBERS} live streams; load ${loads()}`);
// Warm-up: each collection's path compiled and its statements prepared.
for (const name of COLLECTIONS) await slot(name, 2);
const rates = Object.fromEntries(COLLECTIONS.map((name) => [name, []]));
const cpus = Object.fromEntries(COLLECTIONS.map((name) => [name, []]));
let liveCreated = 0;
for (let round = 0; round < Number(options.rounds); round++) {
  const order = COLLECTIONS.map((_, index) => COLLECTIONS[(index + round) % COLLECTIONS.length]);
  for (const name of order) {
    const { rate, created, cpu } = await slot(name, Number(options['slot-seconds']));
    rates[name].push(rate);
    cpus[name].push(cpu);
    if (name === 'live') liveCreated += created;
  }
}
const end = loads();
// The events still on their way when the last slot ended.
await new Promise((resolve) => setTimeout(resolve, 2000));

console.log(`load at the end: ${end}`);
console.log('| collection | req/s (median) | / plain, median of rounds | rounds | CPU per create, µs: server, load generator, readers (medians) |');
console.log('|---|--:|--:|---|---|');
for (const name of COLLECTIONS) {
  const ratios = rates[name].map((rate, round) => rate / rates.plain[round]);
  const cpu = ['server', 'bench', 'readers'].map((part) => median(cpus[name].map((slot) => slot[part])).toFixed(0)).join(', ');
  console.log(`| ${name} | ${median(rates[name]).toFixed(0)} | ${median(ratios).toFixed(3)} | ${ratios.map((ratio) => ratio.toFixed(2)).join(' ')} | ${cpu} |`);
}
readers.send('count');
const { fewest } = await fromReaders();
console.log(`live: ${liveCreated} created in the measured rounds; each of the ${SUBSCRIBERS} streams received at least ${fewest} created events (warm-up included)`);
if (fewest < liveCreated) throw new Error(`a stream missed events: ${fewest} received, ${liveCreated} created`);
} finally {
  await finish();
}
