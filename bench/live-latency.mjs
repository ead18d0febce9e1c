#!/usr/bin/env node
/**
 * Live delivery across processes, under a steady write rate: `--processes` `restfold serve`
 * instances on one PostgreSQL schema, their changes carried by Redis (REDIS_URL) or by PostgreSQL's
 * LISTEN/NOTIFY (no Redis), `--subscribers` streams of the articles spread over them, and creates
 * sent at `--rate` per second (on a fixed schedule, each to the next instance) for `--seconds`.
 * Measured per delivery: the time from the create's answer reaching this process to the event
 * reaching a stream (negative when the event came first), p50 and p99; once with every request
 * sent to the instances directly, once through haproxy configured from docs/deploying.md's recipe
 * (bench/haproxy-backend.cfg), alternating which goes first each round. Also checks that the
 * stream's headers (X-Accel-Buffering, Cache-Control) arrive through haproxy.
 *
 *   npm run build && node bench/live-latency.mjs [--rounds 2] [--seconds 15] [--rate 40] [--subscribers 10] [--processes 2]
 *
 * Needs haproxy on PATH, TEST_DATABASE_URL and TEST_REDIS_URL (defaults: this machine's services).
 * Results: docs/performance.md, "Live delivery across processes".
 */
import http from 'node:http';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, freshDatabase, haproxyConfig, openArticleEvents, startServer } from './servers.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '15' },
    rate: { type: 'string', default: '40' },
    subscribers: { type: 'string', default: '10' },
    processes: { type: 'string', default: '2' },
    carriers: { type: 'string', default: 'redis,notify' },
  },
});
const [ROUNDS, SECONDS, RATE, SUBSCRIBERS, PROCESSES] = ['rounds', 'seconds', 'rate', 'subscribers', 'processes'].map((name) => Number(values[name]));
process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const root = join(import.meta.dirname, '..');
const cli = join(root, 'dist', 'cli.js');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => Number(process.hrtime.bigint()) / 1e6;
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round1 = (ms) => Math.round(ms * 10) / 10;

/** One phase: streams opened on `streamBases` (in turn), creates sent to `writeBases` (in turn) at RATE for SECONDS. */
async function phase(streamBases, writeBases, token, seconds = SECONDS) {
  const answered = new Map();
  const arrivals = [];
  const streams = [];
  for (let index = 0; index < SUBSCRIBERS; index++) {
    const opened = await openArticleEvents(streamBases[index % streamBases.length], token, (event, data) => {
      const title = event === 'created' && /"title":"latency (\d+)"/.exec(data)?.[1];
      if (title) arrivals.push({ title, at: now() });
    });
    streams.push(opened);
  }
  // Every stream subscribed on its instance before the first write.
  await sleep(1000);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  let failed = 0;
  const writes = [];
  const started = now();
  const count = Math.round(seconds * RATE);
  for (let index = 0; index < count; index++) {
    const wait = started + (index * 1000) / RATE - now();
    if (wait > 0) await sleep(wait);
    const base = new URL(writeBases[index % writeBases.length]);
    const body = JSON.stringify({ title: `latency ${index}` });
    writes.push(
      new Promise((resolve) => {
        const request = http.request(
          { host: base.hostname, port: base.port, path: '/api/v1/articles/', method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (response) => {
            response.resume();
            response.on('end', () => {
              if (response.statusCode === 201) answered.set(String(index), now());
              else failed++;
              resolve();
            });
          },
        );
        request.on('error', () => (failed++, resolve()));
        request.end(body);
      }),
    );
  }
  await Promise.all(writes);
  for (let waited = 0; arrivals.length < answered.size * SUBSCRIBERS && waited < 5000; waited += 100) await sleep(100);
  for (const stream of streams) stream.close();
  agent.destroy();
  const delays = arrivals.filter(({ title }) => answered.has(title)).map(({ title, at }) => at - answered.get(title)).sort((a, b) => a - b);
  return {
    writes: count,
    failedWrites: failed,
    expected: answered.size * SUBSCRIBERS,
    received: delays.length,
    p50Ms: round1(percentile(delays, 50)),
    p99Ms: round1(percentile(delays, 99)),
    maxMs: round1(delays.at(-1)),
    headers: { 'x-accel-buffering': streams[0].headers['x-accel-buffering'], 'cache-control': streams[0].headers['cache-control'] },
  };
}

const folder = mkdtempSync(join(tmpdir(), 'restfold-latency-'));
const results = { rate: RATE, seconds: SECONDS, subscribers: SUBSCRIBERS, processes: PROCESSES, node: process.version, rounds: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const carrier of values.carriers.split(',')) {
    const database = await freshDatabase('postgres', 'latency');
    const env = {
      DATABASE_URL: database.url,
      SECRET_KEY: 'live-latency-bench-secret-0123456789abcdef',
      THROTTLE_ANON: 'off',
      THROTTLE_USER: 'off',
      LOG_LEVEL: 'warn',
      DB_MAX_CONNECTIONS: '8',
      // Each phase opens its streams before the last phase's have all closed on the server.
      LIVE_MAX_STREAMS_PER_USER: String(4 * SUBSCRIBERS),
      ...(carrier === 'redis' ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `latency-${process.pid}-${round}:` } : { REDIS_URL: '' }),
    };
    const run = (...args) => {
      const result = spawnSync(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`restfold ${args.join(' ')}: ${result.stderr}`);
      return result.stdout.trim();
    };
    run('migrate');
    run('createuser', '--username', 'bench', '--password', 'bench-password-123');
    const token = run('token', 'create', '--username', 'bench');
    const servers = [];
    let haproxy;
    try {
      for (let index = 0; index < PROCESSES; index++) servers.push(await startServer(['dist/cli.js', 'serve'], env));
      const front = await freePort();
      const config = join(folder, `haproxy-${round}-${carrier}.cfg`);
      writeFileSync(config, haproxyConfig(front, servers.map((server) => new URL(server.base).port)));
      haproxy = spawn('haproxy', ['-f', config, '-db'], { stdio: ['ignore', 'ignore', 'inherit'] });
      const proxied = `http://127.0.0.1:${front}`;
      // Until haproxy finds every server up (two good checks each).
      for (let up = 0; up < 3; ) {
        up = (await fetch(`${proxied}/readyz`).then((response) => response.status === 200, () => false)) ? up + 1 : 0;
        await sleep(1000);
      }
      const direct = servers.map((server) => server.base);
      // Unmeasured: the first seconds of a fresh process (compiling, first connections) are not the steady state.
      await phase(direct, direct, token, 5);
      const order = round % 2 === 0 ? ['direct', 'haproxy'] : ['haproxy', 'direct'];
      for (const path of order) {
        const bases = path === 'direct' ? direct : [proxied];
        const result = await phase(bases, bases, token);
        results.rounds.push({ round, carrier, path, ...result });
        console.error(`round ${round} ${carrier} ${path}: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ${result.received}/${result.expected}`);
      }
    } finally {
      haproxy?.kill('SIGTERM');
      await Promise.all(servers.map((server) => server.stop()));
      await database.drop();
    }
  }
}
rmSync(folder, { recursive: true, force: true });
console.log(JSON.stringify(results, null, 2));
