#!/usr/bin/env node
/**
 * A rolling restart under load: three `restfold serve` processes on one PostgreSQL behind haproxy
 * (configured as docs/deploying.md says, from bench/haproxy-backend.cfg: a health check on /readyz,
 * `option http-no-delay`),
 * clients sending a mixed load through it (creates, updates, reads, an authenticated list) on
 * kept-alive connections, while each process in turn gets SIGTERM and is started again once it has
 * exited. Counts every answer that is not a 2xx and every failed connection, then reads back every
 * acknowledged write: a create whose record is missing, or an update whose value is not the last one
 * acknowledged, is a lost write.
 *
 *   node bench/rolling-restart.mjs [--drain MS] [--clients N]
 *
 * Needs `npm run build`, haproxy on PATH, and TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
 * Results: docs/performance.md, "A rolling restart behind haproxy".
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, freshDatabase, haproxyConfig } from './servers.mjs';

const { values } = parseArgs({ options: { drain: { type: 'string', default: '5000' }, clients: { type: 'string', default: '8' } } });
process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const root = join(import.meta.dirname, '..');
const cli = join(root, 'dist', 'cli.js');
const folder = mkdtempSync(join(tmpdir(), 'restfold-rolling-'));
const database = await freshDatabase('postgres', 'rolling');
const env = {
  ...process.env,
  DATABASE_URL: database.url,
  SECRET_KEY: 'rolling-restart-bench-secret-0123456789abcdef',
  THROTTLE_ANON: 'off',
  THROTTLE_USER: 'off',
  THROTTLE_LOGIN: 'off',
  LOG_LEVEL: 'warn',
  DB_MAX_CONNECTIONS: '8',
  SHUTDOWN_DRAIN_MS: values.drain,
  HOST: '127.0.0.1',
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function run(...args) {
  const result = spawnSync(process.execPath, [cli, ...args], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`restfold ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}

/** A server on `port`, resolved once /readyz answers 200. */
async function serve(port) {
  const child = spawn(process.execPath, [cli, 'serve'], { env: { ...env, PORT: String(port) }, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server on ${port} exited (${child.exitCode}) while starting`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((response) => response.status === 200, () => false);
    if (ready) return { child, exited };
    await sleep(100);
  }
}

run('migrate');
run('createuser', '--username', 'bench', '--password', 'bench-password-123', '--superuser');
const token = run('token', 'create', '--username', 'bench');

const ports = await Promise.all([0, 1, 2].map(() => freePort()));
const servers = await Promise.all(ports.map((port) => serve(port)));
const front = await freePort();
const config = join(folder, 'haproxy.cfg');
writeFileSync(config, haproxyConfig(front, ports));
const haproxy = spawn('haproxy', ['-f', config, '-db'], { stdio: ['ignore', 'ignore', 'inherit'] });
const base = `http://127.0.0.1:${front}`;
// Until haproxy listens and finds the servers up (on a busy machine that takes a while).
while ((await fetch(`${base}/readyz`).then((response) => response.status, () => 0)) !== 200) await sleep(200);

const counts = { requests: 0, errors: {}, creates: 0, updates: 0 };
const failed = (what) => (counts.errors[what] = (counts.errors[what] ?? 0) + 1);
/** Acknowledged writes: every created post's id, and the title each post's last acknowledged update set. */
const titles = new Map();

async function call(method, path, body, headers = {}) {
  counts.requests += 1;
  try {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body && { 'content-type': 'application/json' }) },
      body: body && JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) {
      failed(`${method} ${path.replace(/\d+/g, ':id')} ${response.status}`);
      return undefined;
    }
    return text ? JSON.parse(text) : {};
  } catch (error) {
    failed(`${method} ${path.replace(/\d+/g, ':id')} ${error.cause?.code ?? error.message}`);
    return undefined;
  }
}

let loading = true;
/** One client: its own posts (so that no two clients update one post), in a mix of writes and reads. */
async function client(index) {
  const own = [];
  for (let step = 0; loading; step += 1) {
    const kind = step % 10;
    if (kind < 4 || own.length === 0) {
      const title = `c${index} s${step}`;
      const created = await call('POST', '/api/posts', { title, content: 'rolling' });
      if (created) {
        counts.creates += 1;
        own.push(created.id);
        titles.set(created.id, title);
      }
    } else if (kind < 6) {
      const id = own[step % own.length];
      const title = `c${index} s${step} updated`;
      if (await call('PUT', `/api/posts/${id}`, { title, content: 'rolling' })) {
        counts.updates += 1;
        titles.set(id, title);
      }
    } else if (kind < 9) {
      await call('GET', `/api/posts/${own[step % own.length]}`);
    } else {
      await call('GET', '/api/v1/users/', undefined, { authorization: `Bearer ${token}` });
    }
  }
}

const clients = Array.from({ length: Number(values.clients) }, (_, index) => client(index));
await sleep(3000);
const started = Date.now();
const restarts = [];
for (let index = 0; index < servers.length; index += 1) {
  const stopping = Date.now();
  servers[index].child.kill('SIGTERM');
  const { code } = await servers[index].exited;
  const stopped = Date.now();
  servers[index] = await serve(ports[index]);
  // Back in haproxy's rotation after two good checks.
  await sleep(1500);
  restarts.push({ server: index, exitCode: code, stopMs: stopped - stopping, downMs: Date.now() - stopping });
}
await sleep(2000);
loading = false;
await Promise.all(clients);
const seconds = (Date.now() - started) / 1000;

// Every acknowledged write, read back directly from a server.
let lost = 0;
for (const [id, title] of titles) {
  const response = await fetch(`http://127.0.0.1:${ports[0]}/api/posts/${id}`);
  const post = response.status === 200 ? await response.json() : undefined;
  if (post?.title !== title) lost += 1;
}

haproxy.kill('SIGTERM');
for (const server of servers) server.child.kill('SIGINT');
await Promise.all(servers.map((server) => server.exited));
await database.drop();
rmSync(folder, { recursive: true, force: true });

const errors = Object.values(counts.errors).reduce((sum, count) => sum + count, 0);
console.log(JSON.stringify({ drainMs: Number(values.drain), clients: Number(values.clients), seconds, requests: counts.requests, creates: counts.creates, updates: counts.updates, errors, byKind: counts.errors, lostWrites: lost, checkedWrites: titles.size, restarts }, null, 2));
