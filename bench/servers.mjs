/**
 * The benchmark's servers: started as separate processes on a free port, and
 * their CPU time and memory read from /proc (Linux), children (cluster
 * workers) included.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import pg from 'pg';

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resident memory of a process and its children (cluster workers), in bytes. */
export function rssOf(pid) {
  try {
    const kib = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
    return kib * 1024 + children.reduce((sum, child) => sum + rssOf(Number(child)), 0);
  } catch {
    return 0;
  }
}

/** CPU time a process alone (its children left out) has used, in clock ticks. */
export function ownTicksOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime are the 14th and 15th fields; the split above starts at the 3rd.
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** CPU time a process and its children have used, in clock ticks. */
export function cpuTicksOf(pid) {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
    return ownTicksOf(pid) + children.reduce((sum, child) => sum + cpuTicksOf(Number(child)), 0);
  } catch {
    return 0;
  }
}

// V8 compiles the hot code in each process apart, so a warm-up lasts until every worker has answered
// this many requests (on users list a worker's CPU per request settles after ~6 000), within the limit.
export const WARMUP = { requestsPerWorker: 10_000, limitSeconds: 20 };

/**
 * Warms a server of `workers` processes up: `drive(seconds)` starts one load run (autocannon's
 * instance), stopped once each worker is warm and `minSeconds` have passed, or at the limit. One run,
 * not several: a run's end hangs up on the requests in flight, which the server and the database
 * then finish unwatched. Answers the run's result.
 */
export async function warmUp(drive, workers, minSeconds) {
  const started = Date.now();
  const target = WARMUP.requestsPerWorker * workers;
  const run = drive(WARMUP.limitSeconds);
  let answered = 0;
  run.on('response', () => {
    if (++answered >= target && Date.now() - started >= minSeconds * 1000) run.stop();
  });
  return run;
}

/** The machine's CPU time so far, busy and in all, in clock ticks (/proc/stat's first line). */
function machineTicks() {
  const [user, nice, system, idle, iowait, ...rest] = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  const total = user + nice + system + idle + iowait + rest.reduce((sum, ticks) => sum + ticks, 0);
  return { busy: total - idle - iowait, total };
}

/**
 * Waits until the machine is quiet: closing a connection does not cancel its request, so what the
 * last run left in flight (password hashes in the server, queries in the database's backends)
 * would otherwise run into the next measurement. A machine shared with other work may never be
 * quiet: then it waits `limitSeconds`.
 */
export async function waitUntilQuiet(limitSeconds = 120) {
  const deadline = Date.now() + limitSeconds * 1000;
  let last = machineTicks();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = machineTicks();
    if (now.busy - last.busy <= 0.05 * (now.total - last.total)) return;
    last = now;
  }
}

export async function startServer(args, env) {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    // Stopped at once: a benchmark's server has no balancer to drain from.
    env: { ...process.env, SHUTDOWN_DRAIN_MS: '0', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
    try {
      await fetch(`${base}/readyz`);
      break;
    } catch {
      if (attempt > 300) throw new Error(`${args.join(' ')} did not start listening.`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    base,
    // How many processes serve it (WORKERS, as the service reads it): each needs its own warm-up.
    workers: Number(env.WORKERS ?? 1) || availableParallelism(),
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

/** A fresh database for `label`'s run: a temporary SQLite file, or a new schema on TEST_DATABASE_URL. */
export async function freshDatabase(kind, label) {
  if (kind === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), `restfold-${label}-`));
    return { url: `sqlite:${join(folder, `${label}.sqlite3`)}`, drop: async () => rmSync(folder, { recursive: true, force: true }) };
  }
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error(`${kind} needs TEST_DATABASE_URL (a database this script may create a schema in).`);
  const schema = `rf_${label}_${randomBytes(6).toString('hex')}`;
  const admin = async (statement) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE SCHEMA ${schema}`);
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { url: url.toString(), drop: () => admin(`DROP SCHEMA ${schema} CASCADE`) };
}

/**
 * An haproxy configuration listening on `front` before `ports`: the backend is docs/deploying.md's
 * recipe (bench/haproxy-backend.cfg, which a test holds equal to the page), its example servers
 * replaced by these.
 */
export function haproxyConfig(front, ports) {
  const backend = readFileSync(join(import.meta.dirname, 'haproxy-backend.cfg'), 'utf8')
    .split('\n')
    .filter((line) => !line.trim().startsWith('server '))
    .join('\n')
    .trimEnd();
  return `global
    maxconn 1000
defaults
    mode http
    timeout connect 2s
    timeout client 60s
frontend front
    bind 127.0.0.1:${front}
    default_backend api
${backend}
${ports.map((port, index) => `    server s${index} 127.0.0.1:${port} check`).join('\n')}
`;
}

/** A stream of the articles (`/api/v1/articles/events/`) read as it arrives: `onEvent(event, data)` per event; resolves with its headers and a closer once it has started. */
export function openArticleEvents(base, token, onEvent) {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}/api/v1/articles/events/`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, agent: false }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`stream answered ${response.statusCode}`));
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (chunk) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) onEvent(event, data);
        }
      });
      response.on('error', () => {});
      resolve({ headers: response.headers, close: () => request.destroy() });
    });
    request.on('error', reject);
  });
}
