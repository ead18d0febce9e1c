#!/usr/bin/env node
// Soak: the built server (`node dist/cli.js serve`) under mixed reads and
// writes from many keep-alive connections for a while, on SQLite and (when
// TEST_DATABASE_URL is set) PostgreSQL. Not part of `npm test`.
//
//   npx tsc -p tsconfig.json && node bench/soak.mjs
//   SOAK_SECONDS=300 SOAK_CONNECTIONS=50 SOAK_DATABASES=sqlite,postgres node bench/soak.mjs
//   SOAK_SECONDS=3600 SOAK_RATE=200 SOAK_SUBSCRIBERS=20 node bench/soak.mjs   # a constant rate
//
// SOAK_RATE (operations/s): started on a fixed schedule, at most SOAK_CONNECTIONS in flight
// (an operation due while all are busy is counted as late and skipped), so the load does not
// follow the server's speed; unset, each connection sends its next as soon as one answers.
// SOAK_SUBSCRIBERS live streams of the articles stay open, each reconnecting every
// SOAK_RECONNECT_SECONDS. RSS (the server and its workers) is sampled every SOAK_SAMPLE_SECONDS
// and printed to stderr as it goes, so a long run's file shows the curve, with its parts: the
// JavaScript heaps (the main thread's, SQLite's reader threads') and the malloc arenas (bench/SOAK.md).
//
// Passes when: no 5xx, no socket errors, RSS at the end at most 20 % above RSS
// after warm-up (a leak grows; V8's heap saws, so a lower end is fine), and
// stored records == creates acknowledged − deletes
// acknowledged (posts and articles each). Exits 1 otherwise.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { freePort, freshDatabase, rssOf } from './servers.mjs';

const root = join(import.meta.dirname, '..');
const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 50);
const WARM_UP_SECONDS = Math.max(5, Math.round(SECONDS * 0.1));
const RATE = Number(process.env.SOAK_RATE ?? 0);
const SUBSCRIBERS = Number(process.env.SOAK_SUBSCRIBERS ?? 0);
const RECONNECT_SECONDS = Number(process.env.SOAK_RECONNECT_SECONDS ?? 30);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 60);
const DATABASES = (process.env.SOAK_DATABASES ?? (process.env.TEST_DATABASE_URL ? 'sqlite,postgres' : 'sqlite')).split(',');


/** The server, once /healthz answers (logs stay at warn: a line per request would skew the numbers). */
async function startServer(env) {
  const port = await freePort();
  const child = spawn('node', ['dist/cli.js', 'serve'], { cwd: root, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'inherit', 'inherit'] });
  // A minute at most: WORKERS=2 on a busy machine took more than 10 s.
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode})`);
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((reply) => reply.ok, () => false);
    if (up) return { child, port };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Not left behind: with WORKERS its workers would serve on, unwatched.
  child.kill('SIGTERM');
  throw new Error('server did not start');
}

/** Resident set size of a process, in MiB. */
const rssMiB = (pid) => Math.round((rssOf(pid) / 2 ** 20) * 10) / 10;

/**
 * Where a process's native memory is, in MiB (Linux), from /proc/PID/smaps: the main thread's malloc
 * arena (`[heap]`) and glibc's thread arenas (an anonymous region aligned to 64 MiB, read-write, the
 * rest of its 64 MiB reserved behind it).
 */
function mallocMiB(pid) {
  const arena = 64n << 20n;
  const regions = [];
  try {
    for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
      const mapping = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
      if (mapping) regions.push({ start: BigInt(`0x${mapping[1]}`), end: BigInt(`0x${mapping[2]}`), mode: mapping[3], name: mapping[4], kib: 0 });
      const rss = /^Rss:\s+(\d+) kB/.exec(line);
      if (rss) regions.at(-1).kib += Number(rss[1]);
    }
  } catch {
    return {};
  }
  const isArena = (region, next) =>
    region.name === '' && region.mode === 'rw-p' && region.start % arena === 0n && (region.end - region.start === arena || (next?.start === region.end && next.mode === '---p' && next.end - region.start === arena));
  const kib = (keep) => regions.reduce((sum, region, index) => sum + (keep(region, regions[index + 1]) ? region.kib : 0), 0);
  const mib = (value) => Math.round(value / 102.4) / 10;
  return { mainMallocMiB: mib(kib((region) => region.name === '[heap]')), threadArenasMiB: mib(kib(isArena)) };
}

async function soak(kind) {
  const database = await freshDatabase(kind, 'soak');
  const env = {
    ...process.env,
    DATABASE_URL: database.url,
    HOST: '127.0.0.1',
    SECRET_KEY: 'soak-secret-key-soak-secret-key-soak',
    THROTTLE_ANON: 'off',
    THROTTLE_USER: 'off',
    LOG_LEVEL: 'warn',
    // Every subscriber is the one soak user: the default limit (5) would refuse the rest.
    LIVE_MAX_STREAMS_PER_USER: String(Math.max(5, SUBSCRIBERS)),
    // The JS heap and the memory outside it, read from /metrics beside RSS, tell a leak's side.
    METRICS: 'true',
  };
  const cli = (...args) => spawnSync('node', ['dist/cli.js', ...args], { cwd: root, encoding: 'utf8', env });
  if (cli('createuser', '--username', 'soak', '--password', 'soak-pw-123456').status !== 0) throw new Error('createuser failed');
  const token = cli('token', 'create', '--username', 'soak').stdout.trim();
  const { child, port } = await startServer(env);
  // A server that dies under the soak ends it at once, named: sampling a dead process reads nothing.
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (stopping) return;
    console.error(`soak ${kind}: the server exited unasked (code ${code}, signal ${signal}) at ${new Date().toISOString()}`);
    process.exit(1);
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });

  const stats = { requests: 0, byClass: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 }, socketErrors: 0 };
  const created = { posts: 0, articles: 0 };
  const deleted = { posts: 0, articles: 0 };
  const live = { posts: [], articles: [] };

  function request(method, path, body, auth) {
    return new Promise((resolve) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers = {};
      if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      if (auth) headers.authorization = `Bearer ${token}`;
      const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          stats.requests++;
          stats.byClass[`${String(res.statusCode)[0]}xx`]++;
          resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() });
        });
        res.on('error', () => {
          stats.socketErrors++;
          resolve({ status: 0 });
        });
      });
      req.on('error', () => {
        stats.socketErrors++;
        resolve({ status: 0 });
      });
      req.end(payload);
    });
  }

  const pick = (list) => list[Math.floor(Math.random() * list.length)];
  const take = (list) => list.splice(Math.floor(Math.random() * list.length), 1)[0];

  /** One operation of the mix: ~55 % reads, 20 % creates, 15 % updates, 10 % deletes. */
  async function operation() {
    const roll = Math.random();
    const kind = Math.random() < 0.5 ? 'posts' : 'articles';
    const path = (id) => (kind === 'posts' ? `/api/posts/${id}` : `/api/v1/articles/${id}/`);
    const auth = kind === 'articles';
    if (roll < 0.55 || live[kind].length < 20) {
      if (roll < 0.2 || live[kind].length < 20) {
        const body = kind === 'posts' ? { title: 'soak', content: 'x'.repeat(200), published: true } : { title: 'soak', body: 'y'.repeat(200) };
        const reply = await request('POST', kind === 'posts' ? '/api/posts' : '/api/v1/articles/', body, auth);
        if (reply.status === 201) {
          created[kind]++;
          live[kind].push(JSON.parse(reply.body).id);
        }
      } else if (roll < 0.4) {
        await request('GET', '/api/v1/articles/?page_size=20&ordering=-created_at&search=soak', undefined, true);
      } else {
        await request('GET', path(pick(live[kind])), undefined, auth);
      }
    } else if (roll < 0.9) {
      const body = kind === 'posts' ? { title: `soak ${Date.now()}` } : { title: `soak ${Date.now()}` };
      await request(kind === 'posts' ? 'PUT' : 'PATCH', path(pick(live[kind])), body, auth);
    } else {
      const id = take(live[kind]);
      const reply = await request('DELETE', path(id), undefined, auth);
      if (reply.status === 204) deleted[kind]++;
      else live[kind].push(id);
    }
  }

  /** A live stream of the articles, read and dropped, reopened every RECONNECT_SECONDS (staggered) until the end. */
  const streams = { opened: 0, events: 0, failed: 0 };
  async function subscriber(end) {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * RECONNECT_SECONDS * 1000));
    while (Date.now() < end) {
      await new Promise((resolve) => {
        const request = http.get({ host: '127.0.0.1', port, path: '/api/v1/articles/events/', headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, agent: false }, (res) => {
          if (res.statusCode !== 200) {
            // Refused (a limit of streams): come back a second later, as a client told Retry-After would, not at once.
            streams.failed++;
            res.resume();
            setTimeout(resolve, 1000);
            return;
          }
          streams.opened++;
          res.on('data', (chunk) => (streams.events += (chunk.toString().match(/\nevent: /g) ?? []).length));
          res.on('error', () => {});
          res.on('close', resolve);
        });
        request.on('error', () => (streams.failed++, setTimeout(resolve, 1000)));
        setTimeout(() => request.destroy(), Math.min(RECONNECT_SECONDS * 1000, Math.max(0, end - Date.now())));
      });
    }
  }

  const started = Date.now();
  const end = started + SECONDS * 1000;
  let warmRss;
  const samples = [];
  /** MiB of a prom-client default metric of the process that answers (one worker's with WORKERS). */
  const metricMiB = (text, name) => {
    const value = new RegExp(`^restfold_${name} (\\S+)$`, 'm').exec(text)?.[1];
    return value === undefined ? undefined : Math.round((Number(value) / 2 ** 20) * 10) / 10;
  };
  const sample = async () => {
    const at = Math.round((Date.now() - started) / 1000);
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((reply) => reply.text(), () => '');
    const heapMiB = metricMiB(metrics, 'nodejs_heap_size_used_bytes');
    const externalMiB = metricMiB(metrics, 'nodejs_external_memory_bytes');
    // SQLite's reader threads' heaps, which the main thread's heap leaves out, and native memory by arena.
    const readersHeapMiB = metricMiB(metrics, 'sqlite_reader_heap_bytes');
    const malloc = mallocMiB(child.pid);
    samples.push({ seconds: at, rssMiB: rssMiB(child.pid), heapMiB, externalMiB, readersHeapMiB, ...malloc, requests: stats.requests });
    console.error(
      `soak ${kind}: ${at} s, RSS ${samples.at(-1).rssMiB} MiB (heap ${heapMiB}, external ${externalMiB}, readers' heaps ${readersHeapMiB}, ` +
        `main malloc ${malloc.mainMallocMiB}, thread arenas ${malloc.threadArenasMiB}), ${stats.requests} requests, ${stats.byClass['5xx']} 5xx`,
    );
  };
  const sampler = setInterval(sample, SAMPLE_SECONDS * 1000);
  const warmTimer = setTimeout(() => (warmRss = rssMiB(child.pid)), WARM_UP_SECONDS * 1000);
  const subscribers = Array.from({ length: SUBSCRIBERS }, () => subscriber(end));
  let late = 0;
  if (RATE > 0) {
    let inFlight = 0;
    const pending = new Set();
    for (let due = started; due < end; due += 1000 / RATE) {
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (inFlight >= CONNECTIONS) {
        late++;
        continue;
      }
      inFlight++;
      const done = operation().finally(() => {
        inFlight--;
        pending.delete(done);
      });
      pending.add(done);
    }
    await Promise.all(pending);
  } else {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (Date.now() < end) await operation();
      }),
    );
  }
  await Promise.all(subscribers);
  clearInterval(sampler);
  clearTimeout(warmTimer);
  await sample();
  const endRss = rssMiB(child.pid);
  const elapsed = (Date.now() - started) / 1000;

  // Stored records, counted through the API: every post is published, so the list has them all.
  const posts = JSON.parse((await request('GET', '/api/posts')).body).length;
  const articles = JSON.parse((await request('GET', '/api/v1/articles/?page_size=1', undefined, true)).body).count;
  agent.destroy();
  stopping = true;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  await database.drop();

  const rssRatio = warmRss ? endRss / warmRss : NaN;
  const checks = {
    'no 5xx': stats.byClass['5xx'] === 0,
    'no socket errors': stats.socketErrors === 0,
    'RSS at most 20 % above warm-up': rssRatio <= 1.2,
    'posts stored == created − deleted': posts === created.posts - deleted.posts,
    'articles stored == created − deleted': articles === created.articles - deleted.articles,
  };
  return {
    database: kind,
    seconds: Math.round(elapsed),
    connections: CONNECTIONS,
    rate: RATE || 'closed loop',
    late,
    workers: Number(process.env.WORKERS ?? 1),
    streams,
    rssSamples: samples,
    requests: stats.requests,
    requestsPerSecond: Math.round(stats.requests / elapsed),
    statuses: stats.byClass,
    socketErrors: stats.socketErrors,
    rssMiB: { afterWarmUp: warmRss, end: endRss, ratio: Math.round(rssRatio * 1000) / 1000 },
    posts: { created: created.posts, deleted: deleted.posts, stored: posts },
    articles: { created: created.articles, deleted: deleted.articles, stored: articles },
    checks,
    passed: Object.values(checks).every(Boolean),
  };
}

let failed = false;
for (const kind of DATABASES) {
  console.error(`soak: ${kind}, ${SECONDS} s, ${CONNECTIONS} connections (warm-up ${WARM_UP_SECONDS} s)…`);
  const result = await soak(kind);
  console.log(JSON.stringify(result, null, 2));
  if (!result.passed) failed = true;
}
process.exit(failed ? 1 : 0);
