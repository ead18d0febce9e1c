/**
 * WORKERS: a real `restfold serve` (built dist/), several processes on one port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

type LogLine = Record<string, unknown> & { msg: string };

interface Server {
  readonly child: ChildProcess;
  readonly lines: LogLine[];
  /** Resolves with the first log line (seen or still to come) that matches. */
  waitFor(match: (line: LogLine) => boolean): Promise<LogLine>;
  readonly exited: Promise<number | null>;
}

const cli = join(process.cwd(), 'dist/cli.js');
const running: Server[] = [];
const folders: string[] = [];

beforeAll(() => {
  if (!existsSync(cli)) throw new Error('Build first: npx tsc -p tsconfig.json');
});
afterEach(() => {
  for (const { child } of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function startServer(env: Record<string, string>): Server {
  const folder = mkdtempSync(join(tmpdir(), 'restfold-workers-'));
  folders.push(folder);
  const child = spawn(process.execPath, [cli, 'serve'], {
    cwd: folder,
    env: { ...process.env, PORT: '0', DATABASE_URL: `sqlite:${join(folder, 'db.sqlite3')}`, LOG_LEVEL: 'info', SHUTDOWN_DRAIN_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: LogLine[] = [];
  const waiting: { match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const complete = buffered.split('\n');
    buffered = complete.pop()!;
    for (const text of complete.filter(Boolean)) {
      const line = JSON.parse(text) as LogLine;
      lines.push(line);
      for (const waiter of [...waiting]) {
        if (waiter.match(line)) {
          waiting.splice(waiting.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const server: Server = {
    child,
    lines,
    exited,
    waitFor: (match) => {
      const seen = lines.find(match);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => waiting.push({ match, resolve }));
    },
  };
  running.push(server);
  return server;
}

/** GET /healthz on a new connection; the status and the answering worker. */
function health(port: number): Promise<{ status: number; worker: string | undefined }> {
  return new Promise((resolve, reject) => {
    const call = request({ port, host: '127.0.0.1', path: '/healthz', agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, worker: response.headers['x-worker-id'] as string | undefined }));
    });
    call.on('error', reject);
    call.end();
  });
}

const isListening = (line: LogLine) => line.msg === 'worker listening';
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('WORKERS', () => {
  it('serves one port from two processes, replaces a worker that dies while requests flow, and stops all on SIGTERM', async () => {
    const server = startServer({ WORKERS: '2' });
    const first = await server.waitFor(isListening);
    const second = await server.waitFor((line) => isListening(line) && line.worker !== first.worker);
    expect(second.port).toBe(first.port);
    const port = Number(first.port);

    const seen = new Set<string | undefined>();
    while (seen.size < 2) {
      const reply = await health(port);
      expect(reply.status).toBe(200);
      seen.add(reply.worker);
    }
    expect([...seen].sort()).toEqual([String(first.worker), String(second.worker)].sort());

    process.kill(Number(first.worker_pid), 'SIGKILL');
    await server.waitFor((line) => line.msg === 'worker died; starting a replacement' && line.worker === first.worker);
    // The port keeps answering while the replacement starts, and afterwards from the replacement too.
    let replacement: LogLine | undefined;
    void server.waitFor((line) => isListening(line) && line.worker !== first.worker && line.worker !== second.worker).then((line) => {
      replacement = line;
    });
    const answeredBy = new Set<string | undefined>();
    while (!replacement || !answeredBy.has(String(replacement.worker))) {
      const reply = await health(port);
      expect(reply.status).toBe(200);
      expect(reply.worker).not.toBe(String(first.worker));
      answeredBy.add(reply.worker);
    }
    expect(alive(Number(replacement.worker_pid))).toBe(true);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    for (const worker of [second, replacement]) expect(alive(Number(worker.worker_pid))).toBe(false);
    expect(server.lines.filter((line) => line.msg === 'worker stopped')).toHaveLength(2);
  });

  it('migrates once in the primary, before any worker starts', async () => {
    const server = startServer({ WORKERS: '2' });
    await server.waitFor(isListening);
    const migrated = server.lines.findIndex((line) => line.msg === 'migrated');
    expect(server.lines[migrated]).toMatchObject({ role: 'primary', applied: expect.arrayContaining(['restfold.0001_initial', 'app.0002_posts_published_default']) });
    expect(server.lines.findIndex(isListening)).toBeGreaterThan(migrated);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('starts one worker per CPU with WORKERS=0', async () => {
    const cpus = availableParallelism();
    const server = startServer({ WORKERS: '0' });
    if (cpus === 1) {
      // One CPU: no cluster at all, the process serves by itself.
      await server.waitFor((line) => line.msg.startsWith('Server listening'));
      expect(server.lines.some((line) => line.msg === 'starting workers')).toBe(false);
    } else {
      expect((await server.waitFor((line) => line.msg === 'starting workers')).workers).toBe(cpus);
      const ids = new Set<unknown>();
      while (ids.size < cpus) ids.add((await server.waitFor((line) => isListening(line) && !ids.has(line.worker))).worker);
    }
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('stops with an error, rather than restarting forever, when workers cannot start', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const server = startServer({ WORKERS: '2', PORT: String((taken.address() as AddressInfo).port) });
      expect(await server.exited).toBe(1);
      expect(server.lines.some((line) => line.msg === 'worker failed to start; stopping')).toBe(true);
      expect(server.lines.filter((line) => line.msg === 'worker died; starting a replacement')).toEqual([]);
    } finally {
      taken.close();
    }
  });
});
