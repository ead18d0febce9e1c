#!/usr/bin/env node
/**
 * `node bench/event-loop.mjs [--rows N] [--repeat R]`: how long the worst list requests the contract
 * allows hold a SQLite server's event loop. Seeds N users and articles (default 100 000) into a
 * fresh SQLite file through bench/seed.mjs, starts the built server (dist/: run `npm run build`
 * first) on 127.0.0.1, then sends each hostile request R times, one at a time, while another
 * client asks GET /healthz every 20 ms. A request that holds the loop delays the /healthz answers
 * queued behind it, so the worst /healthz latency during a request is the outside measure of how
 * long the loop was held. Bounded: R × the requests below, each with a 60 s timeout; the server
 * and the database file are removed at the end.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from './servers.mjs';

const { values: options } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, repeat: { type: 'string', default: '3' } } });
const rows = Number(options.rows);
const repeat = Number(options.repeat);
if (!Number.isSafeInteger(rows) || rows < 1 || !Number.isSafeInteger(repeat) || repeat < 1 || repeat > 20) {
  throw new Error('--rows must be a positive integer, --repeat between 1 and 20.');
}

const MAX = 200;
const x200 = 'x'.repeat(MAX);
/** Letters and pairs found in nearly every article: each term matches, so every term is tested on every row. */
const COMMON = 'e a o i t n s r h l d c u m p g b f y w v k x z q j th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le'.split(' ').slice(0, 50);

/** The requests: [label, path]. All are allowed by the contract (200 characters, 50 terms, 1000 members). */
const REQUESTS = [
  ['articles, no filter (baseline)', '/api/v1/articles/'],
  ['articles, search one common term `e`', '/api/v1/articles/?search=e'],
  ['articles, search 200 × `x`', `/api/v1/articles/?search=${x200}`],
  ['articles, search 200 × `x`, last page', `/api/v1/articles/?search=${x200}&ordering=-title`],
  ['articles, search `ab` × 100', `/api/v1/articles/?search=${'ab'.repeat(100)}`],
  ['articles, search 50 × 200 × `x`', `/api/v1/articles/?search=${Array(50).fill(x200).join('+')}`],
  ['articles, search 50 common terms', `/api/v1/articles/?search=${COMMON.join('+')}`],
  ['articles, title__icontains 200 × `x`', `/api/v1/articles/?title__icontains=${x200}`],
  ['articles, title__icontains 200 × `é`', `/api/v1/articles/?title__icontains=${encodeURIComponent('é'.repeat(MAX))}`],
  ['articles, title__iexact + icontains + endswith', `/api/v1/articles/?title__iexact=${x200}&title__endswith=${x200}&title__contains=e`],
  ['articles, title__in 1000 × 10 chars', `/api/v1/articles/?title__in=${Array.from({ length: 1000 }, (_, i) => `t${String(i).padStart(9, '0')}`).join(',')}`],
  ['users, date_joined__in 1000 bare dates', `/api/v1/users/?date_joined__in=${Array.from({ length: 1000 }, (_, i) => new Date(Date.UTC(2022, 0, 1) + i * 86_400_000).toISOString().slice(0, 10)).join(',')}`],
  ['users, search `e` ordered by email', '/api/v1/users/?search=e&ordering=email'],
];

function runToEnd(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${args.join(' ')} exited with ${code}`))));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks /healthz every `interval` ms until stopped; `worstSince(mark)` is the worst latency of the answers sent after `mark`. */
function pollHealth(base, interval = 20) {
  const samples = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const sent = performance.now();
      await fetch(`${base}/healthz`).then((response) => response.arrayBuffer());
      samples.push({ sent, latency: performance.now() - sent });
      await sleep(Math.max(0, interval - (performance.now() - sent)));
    }
  })();
  return {
    worstSince: (mark) => Math.max(0, ...samples.filter((sample) => sample.sent + sample.latency >= mark).map((sample) => sample.latency)),
    stop: async () => {
      running = false;
      await done;
    },
  };
}

const folder = mkdtempSync(join(tmpdir(), 'restfold-event-loop-'));
const url = `sqlite:${join(folder, 'bench.sqlite3')}`;
let server;
let health;
try {
  console.log(`Seeding ${rows} users and articles into ${url}...`);
  const seeded = JSON.parse(await runToEnd(['bench/seed.mjs', '--rows', String(rows), '--json'], { DATABASE_URL: url }));
  console.log(`Seeded in ${seeded.seconds.toFixed(1)} s.`);
  server = await startServer(['dist/cli.js', 'serve'], { DATABASE_URL: url, LOG_LEVEL: 'warn', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' });
  const headers = { authorization: `Bearer ${seeded.token}` };
  health = pollHealth(server.base);
  await sleep(500);
  const idle = health.worstSince(0);
  console.log(`/healthz worst latency while idle: ${idle.toFixed(1)} ms\n`);
  console.log('| request | status | duration ms (median, worst) | worst /healthz ms |');
  console.log('|---|--:|--:|--:|');
  for (const [label, path] of REQUESTS) {
    const durations = [];
    const stalls = [];
    let status = 0;
    for (let round = 0; round < repeat; round++) {
      const start = performance.now();
      const response = await fetch(server.base + path, { headers, signal: AbortSignal.timeout(60_000) });
      await response.arrayBuffer();
      status = response.status;
      durations.push(performance.now() - start);
      // Let the poller's answer queued behind the request arrive before reading the worst.
      await sleep(60);
      stalls.push(health.worstSince(start));
    }
    durations.sort((a, b) => a - b);
    const median = durations[Math.floor(durations.length / 2)];
    console.log(`| ${label} | ${status} | ${median.toFixed(0)}, ${durations.at(-1).toFixed(0)} | ${Math.max(...stalls).toFixed(0)} |`);
  }
} finally {
  await health?.stop();
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
}
