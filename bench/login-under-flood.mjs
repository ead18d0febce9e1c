#!/usr/bin/env node
/**
 * `node bench/login-under-flood.mjs [--flood 150] [--logins 3] [--before DIR]`: how long a valid login
 * takes while one user fires a flood of concurrent password changes (issue 18, item 5; issue 31).
 *
 * At default settings, where a staff user's password changes count against THROTTLE_USER and no
 * rate cuts a flood of 150 short (the hashing slots alone keep logins answering), it starts the
 * built server (dist/: run `npx tsc -p tsconfig.json` first) on a fresh SQLite file on
 * 127.0.0.1, makes the users with the CLI, times logins on a quiet server, then fires `--flood`
 * PATCHes that each set a new password (a staff user changing another user's, from 127.0.0.1) and,
 * while they are in flight, times `--logins` token obtains by a third user from another loopback
 * address (127.0.0.2), one after another. `--before DIR` runs the same against another checkout's
 * dist/ too (for the numbers before the fix). Every run stops by itself.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from './servers.mjs';

const { values } = parseArgs({
  options: { flood: { type: 'string', default: '150' }, logins: { type: 'string', default: '3' }, before: { type: 'string' } },
});
const FLOOD = Math.min(1000, Number(values.flood));
const LOGINS = Math.min(9, Number(values.logins));
const PASSWORD = 'a-long-bench-password';
const REQUEST_TIMEOUT_MS = 120_000;

/** One HTTP request; resolves with its status and how long it took, in milliseconds. */
function send(base, method, path, { body, token, localAddress, agent } = {}) {
  const started = performance.now();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, {
      method,
      agent,
      localAddress,
      timeout: REQUEST_TIMEOUT_MS,
      headers: { ...(payload && { 'content-type': 'application/json' }), ...(token && { authorization: `Bearer ${token}` }) },
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.on('response', (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: response.statusCode, ms: performance.now() - started, json: text ? JSON.parse(text) : undefined });
      });
    });
    req.end(payload);
  });
}

function cli(checkout, env, args) {
  const run = spawnSync(process.execPath, [join(checkout, 'dist', 'cli.js'), ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`restfold ${args.join(' ')}: ${run.stderr}`);
  return run.stdout.trim();
}

const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
const round = (ms) => Math.round(ms);

async function measure(checkout, label) {
  const folder = mkdtempSync(join(tmpdir(), 'restfold-flood-'));
  // The flood's connections all open at once: above MAX_CONNECTIONS' default (128) some would be refused before any hashing.
  const env = {
    DATABASE_URL: `sqlite:${join(folder, 'db.sqlite3')}`,
    SECRET_KEY: 'login-under-flood-bench-secret-key-0123',
    LOG_LEVEL: 'warn',
    MAX_CONNECTIONS: String(FLOOD + 16),
  };
  try {
    cli(checkout, env, ['createuser', '--username', 'staff', '--password', PASSWORD, '--permission', 'users.change']);
    cli(checkout, env, ['createuser', '--username', 'target', '--password', PASSWORD]);
    cli(checkout, env, ['createuser', '--username', 'bob', '--password', PASSWORD]);
    const token = cli(checkout, env, ['token', 'create', '--username', 'staff']);
    const server = await startServer([join(checkout, 'dist', 'cli.js'), 'serve'], env);
    const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
    try {
      const target = (await send(server.base, 'GET', '/api/v1/users/?username=target', { token })).json.results[0].id;
      const login = () => send(server.base, 'POST', '/api/v1/auth/token/', { body: { username: 'bob', password: PASSWORD }, localAddress: '127.0.0.2' });
      const quiet = [await login(), await login(), await login()];

      let unanswered = FLOOD;
      const floodStarted = performance.now();
      const statuses = {};
      const answered = (outcome) => {
        unanswered -= 1;
        statuses[outcome] = (statuses[outcome] ?? 0) + 1;
      };
      // A flood request that fails (timed out on a slow machine) is counted as such rather than ending the run.
      const flood = Array.from({ length: FLOOD }, (_, n) =>
        send(server.base, 'PATCH', `/api/v1/users/${target}/`, { body: { password: `flood-${n}-${PASSWORD}` }, token, agent }).then(
          (reply) => answered(reply.status),
          (error) => answered(error.message),
        ),
      );
      // Let the flood reach the server before the first login.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const during = [];
      for (let i = 0; i < LOGINS; i += 1) {
        const floodLeft = unanswered;
        during.push({ ...(await login()), floodLeft });
      }
      await Promise.all(flood);
      const floodSeconds = (performance.now() - floodStarted) / 1000;
      return {
        label,
        quietMs: median(quiet.map((reply) => reply.ms)),
        during: during.map(({ status, ms, floodLeft }) => ({ status, ms: round(ms), floodLeft })),
        floodSeconds: Math.round(floodSeconds * 10) / 10,
        statuses,
      };
    } finally {
      agent.destroy();
      await server.stop();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const checkouts = [['this checkout', join(import.meta.dirname, '..')], ...(values.before ? [['before', values.before]] : [])];
console.log(`| server | quiet login, median ms | logins during the flood: ms (status, flood requests unanswered at its start) | flood of ${FLOOD} PATCHes: s | flood statuses |`);
console.log('|---|--:|---|--:|---|');
for (const [label, checkout] of checkouts) {
  const run = await measure(checkout, label);
  const during = run.during.map(({ ms, status, floodLeft }) => `${ms} (${status}, ${floodLeft})`).join(', ');
  const statuses = Object.entries(run.statuses).map(([status, count]) => `${count}× ${status}`).join(', ');
  console.log(`| ${run.label} | ${round(run.quietMs)} | ${during} | ${run.floodSeconds} | ${statuses} |`);
}
