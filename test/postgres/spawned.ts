/**
 * The built server (`node dist/cli.js serve`) as a child process on a free
 * port, on the DATABASE_URL it is given (a PostgreSQL test database here; a
 * SQLite file in test/cli/shutdown), plus what the tests share: a user with a
 * token, raw HTTP requests, and the app's rows in pg_stat_activity.
 *
 * As the spawned-server harness does (test/support/spawned-server.ts), a server that exits unasked
 * (not through stop() or kill()) fails the running test with its exit code or signal and its last
 * lines: a death mid-suite is otherwise seen only as the next request's ECONNREFUSED.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { migrateApp, openDatabase } from '../../src/framework/index.js';
import { createUser } from '../../src/framework/app/admin.js';
import { createToken } from '../../src/framework/stages/authentication/token.js';
import service from '../../src/service/app.js';
import { onPostgres } from '../support/database.js';
import { OutputTail, watchForDeath } from '../support/spawned-server.js';

const cli = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');

export interface SpawnedServer {
  readonly process: ChildProcess;
  readonly port: number;
  /** The exit code, once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Everything it printed so far (JSON log lines). */
  output(): string;
  /** Sends `signal`: the exit that follows is asked for, not a death. */
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, then wait for the exit; also removes its temp directory. */
  stop(): Promise<number | null>;
}

/** Starts the server (`serve` with `args`, such as `--app`) and resolves once it listens (its log line names the port it got). */
export async function spawnServer(env: Record<string, string>, args: readonly string[] = []): Promise<SpawnedServer> {
  const directory = mkdtempSync(join(tmpdir(), 'restfold-pg-'));
  const child = spawn(process.execPath, [cli, 'serve', ...args], {
    cwd: directory,
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      HOST: '127.0.0.1',
      SECRET_KEY: 'test-secret-key-for-spawned-servers',
      THROTTLE_ANON: 'off',
      THROTTLE_USER: 'off',
      LOG_LEVEL: 'info',
      // Stopped at once unless a test asks for the drain (test/cli/drain.test.ts).
      SHUTDOWN_DRAIN_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const tail = new OutputTail(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output += `${line}\n`;
      tail.push(line);
      const listening = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
      if (listening) resolve(Number(listening[1]));
    });
    void exited.then((code) => reject(new Error(`the server exited (${code}) before listening:\n${output}`)));
  });
  let asked = false;
  watchForDeath(child, `http://127.0.0.1:${port}`, tail, () => asked);
  return {
    process: child,
    port,
    exited,
    output: () => output,
    kill(signal) {
      asked = true;
      child.kill(signal);
    },
    async stop() {
      asked = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await exited;
      rmSync(directory, { recursive: true, force: true });
      return code;
    },
  };
}

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary shapes
}

/** One request on a connection of its own (no keep-alive), so a refused connection shows as an error. */
export function send(port: number, method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers, ...(options.token && { authorization: `Bearer ${options.token}` }) };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const request = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        // Surface B answers its errors in plain text.
        resolve({ status: response.statusCode!, headers: response.headers, json: body && /json/.test(response.headers['content-type'] ?? '') ? JSON.parse(body) : undefined }),
      );
    });
    request.on('error', reject);
    request.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

export const get = (port: number, path: string, token?: string): Promise<HttpReply> => send(port, 'GET', path, { token });

/** A user `name` with a token, made directly in the database at `url` (which also gets migrated). */
export async function userWithToken(url: string, name: string, permissions: string[] = []): Promise<{ id: number; token: string }> {
  const database = openDatabase(url);
  try {
    await migrateApp(database, service);
    const id = await createUser(database, { username: name, password: 'pw-123456', email: '', superuser: false, permissions });
    return { id, token: await createToken(database, id) };
  } finally {
    await database.close();
  }
}

export interface Backend {
  pid: number;
  state: string | null;
  waitEventType: string | null;
}

/** The connections open under `applicationName`. */
export async function backends(applicationName: string): Promise<Backend[]> {
  const { rows } = await onPostgres((client) =>
    client.query<Backend>(
      'SELECT pid, state, wait_event_type AS "waitEventType" FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    ),
  );
  return rows;
}

/** Polls `probe` until it returns something other than undefined (every 50 ms, for up to `seconds`). */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, seconds = 20): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
