#!/usr/bin/env node
/**
 * `node bench/sqlite-bystander.mjs` (after `npm run build`): on a SQLite file every list read runs on
 * a reader thread, so while one user sends the slowest filters the RealWorld example allows
 * (`?tag=` across its many-to-many tags, `?favorited=`, deep pages) back to back, a bystander's cheap
 * request is answered about as fast as on an idle server. Starts the built server with the example
 * and its default throttles, seeds 100 000 articles straight into the file, and prints the
 * bystander's median latency idle and loaded. Exits 1 when the loaded median is twice the idle one
 * or more (it was ~80 times before the reader threads: ~3 ms to ~250 ms).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedArticles } from './realworld-articles.mjs';
import { startServer } from './servers.mjs';

const ARTICLES = 100_000;
/** Requests in each measure: well within THROTTLE_USER's default 1000/min for the whole run. */
const SAMPLES = 150;

const folder = mkdtempSync(join(tmpdir(), 'restfold-bystander-'));
const server = await startServer([join(import.meta.dirname, '..', 'dist', 'cli.js'), 'serve', '--app', 'examples/realworld/app.ts'], {
  DATABASE_URL: `sqlite:${join(folder, 'db.sqlite3')}`,
  LOG_LEVEL: 'warn',
  SECRET_KEY: 'bystander-bench-secret-0123456789abcdef',
});
const tokens = {};

async function register(username) {
  const answer = await fetch(`${server.base}/api/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user: { username, email: `${username}@example.com`, password: `${username}-password-1` } }),
  });
  if (answer.status !== 201) throw new Error(`registering ${username}: ${answer.status}`);
  tokens[username] = (await answer.json()).user.token;
}

async function get(username, path) {
  const answer = await fetch(server.base + path, { headers: { authorization: `Token ${tokens[username]}` } });
  await answer.arrayBuffer();
  if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status}`);
}

/** The median of `SAMPLES` one-article reads, one after another, a little apart so the slow user's reads run between them. */
async function bystanderMedian() {
  const times = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    await get('bystander', `/api/articles/article-${(i * 997) % ARTICLES}`);
    times.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

try {
  await register('slow');
  await register('bystander');
  seedArticles(join(folder, 'db.sqlite3'), ARTICLES);
  const idle = await bystanderMedian();
  let running = true;
  let slowRequests = 0;
  const slow = (async () => {
    const paths = ['/api/articles?tag=absent', '/api/articles?favorited=bystander', '/api/articles?tag=common&offset=99000'];
    while (running) {
      await get('slow', paths[slowRequests % paths.length]);
      slowRequests++;
    }
  })();
  // The slow user's reads under way before the measure starts.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const loaded = await bystanderMedian();
  running = false;
  await slow;
  console.log(`bystander median: idle ${idle.toFixed(2)} ms, loaded ${loaded.toFixed(2)} ms (${(loaded / idle).toFixed(2)}x) while the slow user's ${slowRequests} requests ran`);
  if (loaded >= 2 * idle) process.exitCode = 1;
} finally {
  await server.stop();
  rmSync(folder, { recursive: true, force: true });
}
