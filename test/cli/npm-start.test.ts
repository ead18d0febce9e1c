/**
 * `npm start` under a supervisor that signals the process it started (npm):
 * SIGTERM and SIGINT reach the server, which shuts down, so nothing is left
 * listening on the port. (npm forwards the signal to its script's process;
 * the script `exec`s node so that process is the server, not a shell.)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { listeningUrl, root } from '../support/spawned-server.js';

const folder = mkdtempSync(join(tmpdir(), 'restfold-npm-start-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const refused = async (url: string): Promise<boolean> =>
  fetch(url).then(
    () => false,
    () => true,
  );

it.each(['SIGTERM', 'SIGINT'] as const)('stops the server when npm gets %s', async (signal) => {
  const env = { ...process.env, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(folder, `${signal}.sqlite3`)}`, LOG_LEVEL: 'info' };
  const npm = spawn('npm', ['start', '--silent'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const url = await listeningUrl(npm, (line) => lines.push(line));
  expect((await fetch(`${url}/healthz`)).status).toBe(200);

  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  npm.kill(signal);
  await exited;
  // The server's own shutdown is logged, and its port is closed: no orphan kept serving.
  for (let attempt = 0; attempt < 50 && !(await refused(`${url}/healthz`)); attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await refused(`${url}/healthz`)).toBe(true);
  expect(lines.some((line) => line.includes('"msg":"shutting down"'))).toBe(true);
}, 90_000);
