#!/usr/bin/env node
/**
 * `npm run build && node bench/live-subscribers.mjs [--db sqlite|postgres] [--subscribers 1000] [--writes 100] [--seconds 10]`
 *
 * Live changes under load (docs/guides/live-changes.md): the service, started as
 * `restfold serve` on a fresh database, holds `--subscribers` streams of `/api/v1/articles/events/`
 * opened from this process. Measured: the server's resident memory per stream (before and after
 * they open), the delay from a create's request being sent to each stream's receiving its event
 * (p50, p99, over `--writes` creates 50 ms apart: this process parses every stream, so the figure
 * includes its own reading), and the write path's req/s (autocannon, 10 connections creating
 * articles) without streams and with them. PostgreSQL needs TEST_DATABASE_URL.
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { freshDatabase, openArticleEvents, rssOf, startServer } from './servers.mjs';

const { values: options } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    subscribers: { type: 'string', default: '1000' },
    writes: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '10' },
  },
});
const subscribers = Number(options.subscribers);

const runToEnd = (args, env) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited with ${code}`))));
  });

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function writeLoad(base, token, seconds) {
  const result = await autocannon({
    url: `${base}/api/v1/articles/`,
    method: 'POST',
    connections: 10,
    duration: seconds,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Under load', body: 'A body of a few words, as articles have.' }),
  });
  return { requestsPerSecond: result.requests.average, non2xx: result.non2xx, errors: result.errors };
}

const database = await freshDatabase(options.db, 'live');
const seeded = JSON.parse(await runToEnd(['bench/seed.mjs', '--rows', '1000', '--json'], { DATABASE_URL: database.url }));
const server = await startServer(['dist/cli.js', 'serve'], {
  DATABASE_URL: database.url,
  LOG_LEVEL: 'warn',
  THROTTLE_USER: 'off',
  THROTTLE_ANON: 'off',
  // Streams may take at most half of the connections (LIVE_MAX_STREAMS), the rest stay for the writes.
  MAX_CONNECTIONS: String(2 * (subscribers + 10)),
  LIVE_MAX_STREAMS: String(subscribers + 10),
  LIVE_MAX_STREAMS_PER_USER: String(subscribers + 10),
  LIVE_QUEUE_BYTES: String(16 * 1_048_576),
});
const results = { db: options.db, subscribers, node: process.version };
try {
  results.writesWithoutStreams = await writeLoad(server.base, seeded.token, Number(options.seconds));
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const before = rssOf(server.pid);
  const sent = new Map();
  const delays = [];
  let received = 0;
  const closers = [];
  for (let index = 0; index < subscribers; index++) {
    closers.push(
      await openArticleEvents(server.base, seeded.token, (event, data) => {
        if (event !== 'created') return;
        const title = /"title":"live (\d+)"/.exec(data)?.[1];
        const at = title && sent.get(title);
        if (at === undefined) return;
        received += 1;
        delays.push(Number(process.hrtime.bigint() - at) / 1e6);
      }),
    );
  }
  // Every stream seeded (one statement each, in the hub's order) before the measure.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  results.serverBytesPerStream = Math.round((rssOf(server.pid) - before) / subscribers);
  const writes = Number(options.writes);
  for (let index = 0; index < writes; index++) {
    sent.set(String(index), process.hrtime.bigint());
    const response = await fetch(`${server.base}/api/v1/articles/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seeded.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: `live ${index}` }),
    });
    if (response.status !== 201) throw new Error(`create answered ${response.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (let waited = 0; received < writes * subscribers && waited < 30_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  delays.sort((a, b) => a - b);
  results.deliveries = { expected: writes * subscribers, received, p50Ms: percentile(delays, 50), p99Ms: percentile(delays, 99) };
  results.writesWithStreams = await writeLoad(server.base, seeded.token, Number(options.seconds));
  for (const stream of closers) stream.close();
} finally {
  await server.stop();
  await database.drop();
}
console.log(JSON.stringify(results, null, 2));
