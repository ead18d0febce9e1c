#!/usr/bin/env node
/**
 * `node bench/posts-flood.mjs [--db sqlite|postgres] [--posts N] [--size CHARS]`: Surface B after an
 * anonymous flood (issue 18, item 1). Seeds N published posts (default 100 000) of CHARS characters
 * (default 10 000) straight into a fresh database: a SQLite file in a temporary folder, or with
 * `--db postgres` a fresh schema under TEST_DATABASE_URL. Then starts the built server (dist/: run
 * `npx tsc -p tsconfig.json` first) on 127.0.0.1, reads GET /api/posts to its end with curl while polling
 * /healthz every 50 ms, and prints the status, the bytes, the server's peak RSS and the /healthz
 * latencies. Stops by itself (the read is cut after 10 minutes) and removes what it made.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { migrateApp, openDatabase } from '../dist/framework/index.js';
import service from '../dist/service/app.js';
import { freshDatabase, rssOf, startServer } from './servers.mjs';

const { values: options } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    posts: { type: 'string', default: '100000' },
    size: { type: 'string', default: '10000' },
  },
});
const POSTS = Number(options.posts);
const SIZE = Number(options.size);
const POLL_MS = 50;
const LIMIT_MS = 10 * 60_000;
const BATCH = 500;


/** POSTS published posts, written in multi-row INSERTs; the contents are random (PostgreSQL would compress repeats). */
async function seed(url) {
  const database = openDatabase(url);
  try {
    await migrateApp(database, service);
    const contents = Array.from({ length: 64 }, () => randomBytes(Math.ceil((SIZE * 3) / 4)).toString('base64').slice(0, SIZE));
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    for (let first = 0; first < POSTS; first += BATCH) {
      const rows = [];
      for (let i = first; i < Math.min(POSTS, first + BATCH); i++) {
        const at = new Date(start + i * 1000).toISOString();
        rows.push({ title: `post ${i}`, content: contents[i % contents.length], published: 1, created_at: at, updated_at: at });
      }
      await database.db.insertInto('posts').values(rows).execute();
    }
  } finally {
    await database.close();
  }
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** How long /healthz takes to answer, `count` times, POLL_MS apart (sorted). */
async function healthLatencies(server, count, going = () => true) {
  const latencies = [];
  for (let i = 0; i < count && going(); i++) {
    const started = performance.now();
    await (await fetch(`${server.base}/healthz`)).arrayBuffer();
    latencies.push(performance.now() - started);
    await sleep(POLL_MS);
  }
  return latencies.sort((a, b) => a - b);
}

/** Reads the list to its end while /healthz is polled and the server's RSS sampled. */
async function measure(server) {
  let peakRss = rssOf(server.pid);
  let reading = true;
  const sampler = (async () => {
    while (reading) {
      peakRss = Math.max(peakRss, rssOf(server.pid));
      await sleep(POLL_MS / 5);
    }
  })();
  const polls = healthLatencies(server, Infinity, () => reading);
  const started = performance.now();
  // The list is read by curl, in a process of its own, so reading it does not delay the polls.
  const { status, bytes, outcome } = await new Promise((resolve) => {
    execFile(
      'curl',
      ['-sS', '-o', '/dev/null', '--max-time', String(LIMIT_MS / 1000), '-w', '%{http_code} %{size_download}', `${server.base}/api/posts`],
      (error, stdout) => {
        const [code, size] = stdout.split(' ').map(Number);
        resolve({ status: code, bytes: size, outcome: error ? `cut: ${error.message.trim()}` : 'complete' });
      },
    );
  });
  const seconds = (performance.now() - started) / 1000;
  reading = false;
  await sampler;
  return { status, outcome, bytes, seconds, peakRss, latencies: await polls };
}

const database = await freshDatabase(options.db, 'flood');
try {
  const seeding = performance.now();
  await seed(database.url);
  console.log(`seeded ${POSTS} published posts of ${SIZE} characters on ${options.db} in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
  const server = await startServer(['dist/cli.js', 'serve'], { DATABASE_URL: database.url, LOG_LEVEL: 'warn', SECRET_KEY: randomBytes(32).toString('hex') });
  try {
    const idleRss = rssOf(server.pid);
    // /healthz with nothing else to do, to read the numbers under the stream against.
    const quiet = await healthLatencies(server, 40);
    const { status, outcome, bytes, seconds, peakRss, latencies } = await measure(server);
    const mb = (value) => (value / 2 ** 20).toFixed(0);
    console.log(
      JSON.stringify(
        {
          db: options.db,
          posts: POSTS,
          size: SIZE,
          status,
          outcome,
          bytes,
          seconds: Number(seconds.toFixed(1)),
          rss_idle_mb: Number(mb(idleRss)),
          rss_peak_mb: Number(mb(peakRss)),
          healthz_quiet_p99_ms: Number(percentile(quiet, 99).toFixed(1)),
          healthz_polls: latencies.length,
          healthz_p50_ms: Number(percentile(latencies, 50).toFixed(1)),
          healthz_p99_ms: Number(percentile(latencies, 99).toFixed(1)),
          healthz_max_ms: Number(latencies.at(-1).toFixed(1)),
        },
        null,
        2,
      ),
    );
  } finally {
    await server.stop();
  }
} finally {
  await database.drop();
}
