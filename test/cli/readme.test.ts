/**
 * A newcomer's run: the built server started as `npm start` starts it, and the
 * README's curl session run through bash as written (only the port differs).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
let server: ChildProcess;
let directory: string;
let env: NodeJS.ProcessEnv;
const port = 20_000 + Math.floor(Math.random() * 12_000); // below Linux's ephemeral ports (32768 on), which outgoing connections take

async function waitUntilServing(): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the server did not start');
}

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'restfold-readme-'));
  env = { ...process.env, PORT: String(port), DATABASE_URL: `sqlite:${join(directory, 'db.sqlite3')}`, LOG_LEVEL: 'warn', SHUTDOWN_DRAIN_MS: '0' };
  server = spawn('node', ['dist/cli.js', 'serve'], { cwd: root, env, stdio: 'inherit' });
  await waitUntilServing();
});
afterAll(() => {
  server.kill('SIGTERM');
  rmSync(directory, { recursive: true, force: true });
});

it("runs the README's curl session as written", () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const session = /## Try it with curl[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(session).toBeDefined();
  const script = `set -euo pipefail\n${session!.replaceAll('127.0.0.1:8000', `127.0.0.1:${port}`)}`;
  const result = spawnSync('bash', ['-c', script], { cwd: root, env, encoding: 'utf8' });
  expect(result.status, result.stderr).toBe(0);
  const [listed, created, filtered, token] = result.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  expect(listed.results.map((user: { username: string }) => user.username)).toEqual(['admin']);
  expect(created).toMatchObject({ username: 'alice', email: 'alice@example.com', password: null });
  expect(filtered.results.map((user: { username: string }) => user.username)).toEqual(['alice']);
  expect(token.token).toMatch(/^rf_/);
  // Three CLI processes (two hash a password) and four requests, each a process of its own.
}, 60_000);
