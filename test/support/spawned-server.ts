/**
 * The built service as a user starts it: `node dist/cli.js serve` in a child
 * process, on a port the system picks (PORT=0, read back from the listening
 * log line) and a SQLite file in a fresh temporary folder. Its `cli` runs
 * other `restfold` commands on the same database. Tests using it run what
 * `npm run build` left in dist/.
 *
 * A server that exits without being asked to (stop()) fails the test running when it died, or
 * the next to end, with its exit code or signal and the last lines it wrote: a death mid-suite
 * is otherwise seen only as the next request's ECONNREFUSED.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { onPostgres } from './database.js';

export const root = join(import.meta.dirname, '..', '..');
/** The machine running the suites may be busy: start-up gets this long. */
const START_TIMEOUT_MS = 60_000;
/** The lines of its output a server's death is told with. */
const KEPT_LINES = 200;

export interface SpawnedServer {
  readonly url: string;
  readonly folder: string;
  readonly pid: number;
  /** `restfold <args>` on the server's database, with its `--app` (or, `withApp` false, without: as a README's account commands run). */
  cli(args: readonly string[], input?: string, withApp?: boolean): string;
  stop(): Promise<void>;
}

/** `restfold <args>` with `env`, from the checkout root. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv, input?: string) {
  return spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), ...args], { cwd: root, env, input, encoding: 'utf8' });
}

/** A describe block's app folder and database for the CLI (cliWorkspace). */
export interface CliWorkspace {
  readonly folder: string;
  /** `app.mjs` in the folder, for the test to write. */
  readonly app: string;
  databaseUrl(): string;
  env(): NodeJS.ProcessEnv;
  /** `restfold <args> --app <app>` on the workspace's database. */
  cli(...args: string[]): ReturnType<typeof runCli>;
}

/**
 * For a describe block running the CLI on `dialect`: a folder inside the checkout (so that an app's
 * `import 'restfold'` finds the package) and a database of its own, a SQLite file in the folder or
 * a fresh PostgreSQL schema under TEST_DATABASE_URL, both removed after the block.
 */
export function cliWorkspace(dialect: string, name: string): CliWorkspace {
  const folder = mkdtempSync(join(root, `.tmp-${name}-`));
  const app = join(folder, 'app.mjs');
  const schema = `rf_cli_${randomBytes(6).toString('hex')}`;
  let databaseUrl = `sqlite:${join(folder, 'db.sqlite3')}`;
  beforeAll(async () => {
    if (dialect !== 'postgres') return;
    await onPostgres((client) => client.query(`CREATE SCHEMA ${schema}`));
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = url.toString();
  });
  afterAll(async () => {
    rmSync(folder, { recursive: true, force: true });
    if (dialect === 'postgres') await onPostgres((client) => client.query(`DROP SCHEMA ${schema} CASCADE`));
  });
  const env = () => ({ PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', SECRET_KEY: `${name}-test-secret-0123456789abcdef` });
  return { folder, app, databaseUrl: () => databaseUrl, env, cli: (...args) => runCli([...args, '--app', app], env()) };
}

/**
 * The URL a spawned server (stdout and stderr piped) says it listens at. Every stdout line is read
 * (so the pipe never fills) and handed to `onLine`; the first "listening at" names the port.
 */
export function listeningUrl(child: ChildProcess, onLine: (line: string) => void = () => {}): Promise<string> {
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start in ${START_TIMEOUT_MS} ms: ${stderr}`)), START_TIMEOUT_MS);
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening: ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      onLine(line);
      const address = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1];
      if (address) {
        clearTimeout(timer);
        resolve(address);
      }
    });
  });
}

/** The last `size` lines a child process wrote, standard output and error as they came. */
export class OutputTail {
  private readonly lines: string[] = [];

  constructor(child: ChildProcess, private readonly size = KEPT_LINES) {
    createInterface({ input: child.stderr! }).on('line', (line) => this.push(line));
  }

  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.size) this.lines.shift();
  }

  toString(): string {
    return this.lines.join('\n');
  }
}

/** Deaths not yet told: each fails the test that ends next (or the file, if none does). */
const untoldDeaths: string[] = [];
function tellDeaths(): void {
  const deaths = untoldDeaths.splice(0);
  if (deaths.length > 0) throw new Error(deaths.join('\n\n'));
}
afterEach(tellDeaths);
afterAll(tellDeaths);

/** Records `child`'s exit as a death unless `asked()` says it was told to stop (test/postgres/spawned.ts's servers too). */
export function watchForDeath(child: ChildProcess, url: string, output: OutputTail, asked: () => boolean): void {
  child.once('exit', (code, signal) => {
    if (asked()) return;
    const how = signal === null ? `exit code ${code}` : `signal ${signal}`;
    untoldDeaths.push(`The server at ${url} (pid ${child.pid}) exited unasked (${how}). Its last lines:\n${output.toString()}`);
  });
}

export async function startServer(options: { appArgs?: readonly string[]; env?: Readonly<Record<string, string>> } = {}): Promise<SpawnedServer> {
  const folder = mkdtempSync(join(tmpdir(), 'restfold-served-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    DATABASE_URL: `sqlite:${join(folder, 'db.sqlite3')}`,
    SECRET_KEY: 'spawned-server-test-secret-0123456789abcdef',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    // Stopped at once: test/cli/drain.test.ts shows the drain.
    SHUTDOWN_DRAIN_MS: '0',
    ...options.env,
  };
  const appArgs = options.appArgs ?? [];
  const child = spawn(process.execPath, [join(root, 'dist', 'cli.js'), 'serve', ...appArgs], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const output = new OutputTail(child);

  const url = await listeningUrl(child, (line) => output.push(line)).catch(async (error: unknown) => {
    child.kill('SIGTERM');
    await exited;
    rmSync(folder, { recursive: true, force: true });
    throw error;
  });

  let stopping = false;
  watchForDeath(child, url, output, () => stopping);

  return {
    url,
    folder,
    pid: child.pid!,
    cli(args, input, withApp = true) {
      const run = runCli([...args, ...(withApp ? appArgs : [])], env, input);
      if (run.status !== 0) throw new Error(`restfold ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
      return run.stdout;
    },
    async stop() {
      stopping = true;
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A request to a spawned server's `/api/v1/`, as the user whose token `tokens` holds under `as` (anonymous without). */
export function apiCaller(server: () => SpawnedServer, tokens: Readonly<Record<string, string>>) {
  return async (method: string, path: string, as?: string, body?: unknown) => {
    const response = await fetch(`${server().url}/api/v1/${path}`, {
      method,
      headers: {
        ...(as && { authorization: `Bearer ${tokens[as]}` }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const json = response.headers.get('content-type')?.startsWith('application/json') && text ? JSON.parse(text) : undefined;
    return { status: response.status, headers: response.headers, text, json };
  };
}
