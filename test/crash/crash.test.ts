/**
 * Crash safety: `kill -9` the server in the middle of a burst of creates and
 * updates, restart it, and check that every write acknowledged with a 2xx is
 * there, intact. SQLite (WAL, a temp file) by default; PostgreSQL (a fresh
 * schema) with RESTFOLD_TEST_DB=postgres. Runs the built server: build first
 * (`npx tsc -p tsconfig.json`; `npm test` does). Building here would rewrite
 * dist/ under the CLI tests running beside it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';

const root = join(import.meta.dirname, '..', '..');
const directory = mkdtempSync(join(tmpdir(), 'restfold-crash-'));
let database: TestDatabase;
let env: NodeJS.ProcessEnv;

const WORKERS = 16;
/** Writes acknowledged before the kill: enough that some are surely in flight when it lands. */
const ACKS_BEFORE_KILL = 300;

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npx tsc -p tsconfig.json` first.');
  database =
    testDialect === 'sqlite'
      ? { url: `sqlite:${join(directory, 'crash.sqlite3')}`, drop: async () => {} }
      : await createTestDatabase();
  env = {
    ...process.env,
    DATABASE_URL: database.url,
    PORT: '0',
    HOST: '127.0.0.1',
    SECRET_KEY: 'crash-test-secret-key-crash-test-secret-key',
    THROTTLE_ANON: 'off',
    THROTTLE_USER: 'off',
    LOG_LEVEL: 'info',
  };
  const cli = (...args: string[]) => spawnSync('node', ['dist/cli.js', ...args], { cwd: root, encoding: 'utf8', env });
  expect(cli('createuser', '--username', 'writer', '--password', 'crash-pw-123').status).toBe(0);
  token = cli('token', 'create', '--username', 'writer').stdout.trim();
});
afterAll(async () => {
  await database?.drop();
  rmSync(directory, { recursive: true, force: true });
});

let token: string;
/** Everything every server printed (its log). */
let logs = '';

interface Server {
  readonly process: ChildProcess;
  readonly base: string;
}

/** `node dist/cli.js serve` on a free port; resolves once it logs where it listens. */
function startServer(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', ['dist/cli.js', 'serve'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let listening = false;
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      logs += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match && !listening) {
        listening = true;
        resolve({ process: child, base: match[1]! });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening:\n${output}`)));
  });
}

function kill(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.process.once('exit', () => resolve());
    server.process.kill('SIGKILL');
  });
}

/** What the client knows of one record: the last version acknowledged and the last one sent. */
interface Tracked {
  readonly kind: 'post' | 'article';
  readonly id: number;
  acked: number;
  sent: number;
}

const postBody = (worker: number, version: number) => ({ title: `w${worker} v${version}`, content: `content of w${worker} v${version}`, published: version % 2 === 0 });
const articleBody = (worker: number, version: number) => ({ title: `a${worker} v${version}`, body: `body of a${worker} v${version}` });

async function send(base: string, method: string, path: string, body: unknown, auth: boolean): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (auth) headers.authorization = `Bearer ${token}`;
  return fetch(`${base}${path}`, { method, headers, body: JSON.stringify(body) });
}

/**
 * Workers create posts and articles and update their own records (so each
 * record's writes are ordered), until the server dies under them.
 */
async function burst(server: Server, tracked: Tracked[]): Promise<number> {
  let acks = 0;
  let killed: Promise<void> | undefined;
  const worker = async (index: number): Promise<void> => {
    const mine: Tracked[] = [];
    for (let step = 0; ; step++) {
      try {
        const kind = step % 3 === 2 ? 'article' : 'post';
        const existing = mine.filter((record) => record.kind === kind);
        if (step % 2 === 1 && existing.length > 0) {
          const record = existing[step % existing.length]!;
          const version = ++record.sent;
          const reply =
            kind === 'post'
              ? await send(server.base, 'PUT', `/api/posts/${record.id}`, postBody(index, version), false)
              : await send(server.base, 'PATCH', `/api/v1/articles/${record.id}/`, articleBody(index, version), true);
          if (!reply.ok) throw new Error(`update answered ${reply.status}`);
          record.acked = version;
        } else {
          const reply =
            kind === 'post'
              ? await send(server.base, 'POST', '/api/posts', postBody(index, 0), false)
              : await send(server.base, 'POST', '/api/v1/articles/', articleBody(index, 0), true);
          if (reply.status !== 201) throw new Error(`create answered ${reply.status}`);
          const record: Tracked = { kind, id: (await reply.json()).id, acked: 0, sent: 0 };
          mine.push(record);
          tracked.push(record);
        }
        if (++acks === ACKS_BEFORE_KILL) killed = kill(server);
      } catch (error) {
        // Once the server is killed, requests fail: what was in flight is unacknowledged.
        if (killed) return;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_unused, index) => worker(index)));
  await killed;
  return acks;
}

it('keeps every acknowledged write through kill -9 and a restart', async () => {
  const tracked: Tracked[] = [];
  const acks = await burst(await startServer(), tracked);
  expect(acks).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL);

  const server = await startServer();
  try {
    const workerOf = (title: string) => /^[wa](\d+) v(\d+)$/.exec(title);
    for (const record of tracked) {
      const path = record.kind === 'post' ? `/api/posts/${record.id}` : `/api/v1/articles/${record.id}/`;
      const reply = await fetch(`${server.base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect(reply.status, `${record.kind} ${record.id} was acknowledged but is gone`).toBe(200);
      const stored = await reply.json();
      const [, worker, version] = workerOf(stored.title) ?? [];
      // The stored version is the last acknowledged one, or a later one that was in flight at the kill.
      expect(Number(version), `${record.kind} ${record.id}: ${JSON.stringify(stored)}`).toBeGreaterThanOrEqual(record.acked);
      expect(Number(version)).toBeLessThanOrEqual(record.sent);
      const expected = record.kind === 'post' ? postBody(Number(worker), Number(version)) : articleBody(Number(worker), Number(version));
      expect(stored).toMatchObject(expected);
    }
    // And it serves writes again.
    const after = await send(server.base, 'POST', '/api/posts', postBody(99, 0), false);
    expect(after.status).toBe(201);
    const login = await fetch(`${server.base}/api/v1/auth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'writer', password: 'crash-pw-123' }),
    });
    expect(login.status).toBe(200);
  } finally {
    await kill(server);
  }
}, 120_000);

it('never writes a password or token to the log (one line per request is there)', () => {
  expect(logs).toMatch(/"msg":"request"/);
  expect(logs).toContain('"method":"POST"');
  expect(logs).not.toContain(token);
  expect(logs).not.toContain('crash-pw-123');
});
