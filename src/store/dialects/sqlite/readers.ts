/**
 * Every read outside a transaction that Kysely runs (lists, counts, searches, lookups on JSON,
 * filters across relations) runs on a reader thread, so that however long one takes on a large
 * table the server keeps answering (better-sqlite3 runs each statement synchronously, and SQLite
 * offers it no way to pause one). Only for a database file: an in-memory one cannot be opened
 * twice. A few threads, started as reads need them, each running one read at a time; reads past
 * them wait in a bounded queue, and a thread that dies is replaced.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { sqliteDriver } from './driver.js';
import { DEFAULT_CACHE_KIB } from './page-cache.js';
import type { ReadRequest, ReadResponse, ReaderData } from './reader-thread.js';

export interface SqliteReaders {
  read(sql: string, parameters: readonly unknown[]): Promise<unknown[]>;
  /** Threads running, and their JavaScript heaps' resident bytes, summed, as each last reported. */
  stats(): ReaderStats;
  close(): Promise<void>;
}

export interface ReaderStats {
  readonly threads: number;
  readonly heapBytes: number;
}

const READER = new URL('./reader-thread.js', import.meta.url);

/**
 * Threads at most, by default: two at least, so that one client's slow reads leave a thread to
 * everyone else's; one per core up to four. Each thread holds a runtime of its own and its
 * connection's page cache (page-cache.ts): this and SQLITE_READER_CACHE_KIB bound the readers' memory (docs/databases.md).
 */
export const DEFAULT_READER_THREADS = Math.min(4, Math.max(2, availableParallelism()));

export interface ReaderLimits {
  readonly threads?: number;
  readonly cacheKib?: number;
}
/**
 * Each thread's young generation (`resourceLimits`), in MiB. Left to the runtime it grows as a
 * thread's reads run and is given back only now and then, so the readers' heaps rose through a soak
 * (bench/SOAK.md); a read's garbage is short-lived, and this much holds it. The old generation keeps
 * the runtime's own bound: a cap there would fail a read whose rows outgrow it.
 */
const YOUNG_GENERATION_MIB = 3;

/**
 * Reads waiting for a thread at most; past it a read fails as a busy database does (503). Each
 * request waits on one read at a time, so this is well above what the open connections can ask.
 */
const READS_QUEUED = 1024;

interface Waiting {
  readonly request: ReadRequest;
  readonly resolve: (rows: unknown[]) => void;
  readonly reject: (error: Error) => void;
}

/** A thread and the read it runs, if any. */
interface Thread {
  readonly worker: Worker;
  running?: Waiting;
  heapBytes: number;
}

/**
 * The readers for the database file at `path`, or undefined where reads stay on the event loop:
 * in memory, or run from the TypeScript sources (tests in process), where a thread has no
 * compiled script to start. Compiled, a missing script is an error: reads left on the event loop
 * would answer, slowly and blocking every other request, with nothing said.
 */
export function sqliteReaders(path: string, limits: ReaderLimits = {}): SqliteReaders | undefined {
  if (path === ':memory:' || path === '' || !import.meta.url.endsWith('.js')) return undefined;
  if (!existsSync(fileURLToPath(READER))) throw new Error(`The SQLite reader threads' script is missing: ${fileURLToPath(READER)}`);
  const most = limits.threads ?? DEFAULT_READER_THREADS;
  const workerData: ReaderData = { path, cacheKib: limits.cacheKib ?? DEFAULT_CACHE_KIB };
  const threads = new Set<Thread>();
  const idle: Thread[] = [];
  const queue: Waiting[] = [];
  let closed = false;

  const dispatch = (thread: Thread) => {
    const next = queue.shift();
    if (!next) {
      thread.running = undefined;
      // Idle, it keeps no process alive.
      thread.worker.unref();
      idle.push(thread);
      return;
    }
    thread.running = next;
    thread.worker.ref();
    thread.worker.postMessage(next.request);
  };
  const stopped = (thread: Thread, error: Error) => {
    if (!threads.delete(thread)) return;
    const index = idle.indexOf(thread);
    if (index >= 0) idle.splice(index, 1);
    thread.running?.reject(error);
    // The reads still waiting get a new thread.
    if (queue.length > 0 && !closed) dispatch(start());
  };
  const start = (): Thread => {
    const thread: Thread = { worker: new Worker(READER, { workerData, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MIB } }), heapBytes: 0 };
    threads.add(thread);
    thread.worker.on('message', (response: ReadResponse) => {
      thread.heapBytes = response.heapBytes;
      const running = thread.running;
      if (!running) return;
      if ('rows' in response) running.resolve(response.rows);
      // The driver's own error class, so callers tell a busy or missing database as they do on the event loop.
      else running.reject(new (sqliteDriver().SqliteError)(response.error.message, response.error.code ?? 'SQLITE_ERROR'));
      dispatch(thread);
    });
    thread.worker.on('error', (error) => stopped(thread, error));
    thread.worker.on('exit', () => stopped(thread, new Error('The SQLite reader thread stopped.')));
    return thread;
  };

  return {
    read(sql, parameters) {
      if (closed) return Promise.reject(new Error('The database is closed.'));
      if (queue.length >= READS_QUEUED) return Promise.reject(new (sqliteDriver().SqliteError)('Too many reads are waiting for a reader thread.', 'SQLITE_BUSY'));
      return new Promise<unknown[]>((resolve, reject) => {
        queue.push({ request: { sql, parameters }, resolve, reject });
        const free = idle.pop() ?? (threads.size < most ? start() : undefined);
        if (free) dispatch(free);
      });
    },
    stats: () => ({ threads: threads.size, heapBytes: [...threads].reduce((sum, thread) => sum + thread.heapBytes, 0) }),
    async close() {
      closed = true;
      // Anything still running or waiting fails, not hangs.
      const error = new Error('The database is closed.');
      for (const waiting of queue.splice(0)) waiting.reject(error);
      const running = [...threads];
      for (const thread of running) stopped(thread, error);
      await Promise.all(running.map((thread) => thread.worker.terminate()));
    },
  };
}
