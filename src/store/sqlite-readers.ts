/**
 * Reads that cost JavaScript for every row they scan (LIKE matching: search and the string
 * lookups) run on a reader thread, so that however long one takes on a large table the server
 * keeps answering (better-sqlite3 runs each statement synchronously, and SQLite offers it no way
 * to pause one). Only for a database file: an in-memory one cannot be opened twice. The thread
 * starts on the first such read and is replaced if it dies.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { ReadRequest, ReadResponse } from './sqlite-reader.js';

export interface SqliteReaders {
  read(sql: string, parameters: readonly unknown[]): Promise<unknown[]>;
  close(): Promise<void>;
}

const READER = new URL('./sqlite-reader.js', import.meta.url);

/**
 * The reader for the database file at `path`, or undefined where reads stay on the event loop:
 * in memory, or run from the TypeScript sources (tests in process), where the thread has no
 * compiled script to start.
 */
export function sqliteReaders(path: string): SqliteReaders | undefined {
  if (path === ':memory:' || path === '' || !existsSync(fileURLToPath(READER))) return undefined;
  let worker: Worker | undefined;
  let nextId = 0;
  const pending = new Map<number, { resolve: (rows: unknown[]) => void; reject: (error: Error) => void }>();

  const failAll = (stopped: Worker, error: Error) => {
    if (worker !== stopped) return;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
    worker = undefined;
  };
  const start = (): Worker => {
    const started = new Worker(READER, { workerData: { path } });
    started.on('message', (response: ReadResponse) => {
      const waiting = pending.get(response.id);
      pending.delete(response.id);
      if (!waiting) return;
      if ('rows' in response) waiting.resolve(response.rows);
      // The driver's own error class, so callers tell a busy or missing database as they do on the event loop.
      else waiting.reject(new SQLite.SqliteError(response.error.message, response.error.code ?? 'SQLITE_ERROR'));
    });
    started.on('error', (error) => failAll(started, error));
    started.on('exit', () => failAll(started, new Error('The SQLite reader thread stopped.')));
    // Idle, it keeps no process alive.
    started.unref();
    return started;
  };

  return {
    read(sql, parameters) {
      worker ??= start();
      const id = nextId++;
      const request: ReadRequest = { id, sql, parameters };
      const answer = new Promise<unknown[]>((resolve, reject) => pending.set(id, { resolve, reject }));
      worker.ref();
      worker.postMessage(request);
      return answer.finally(() => {
        if (pending.size === 0) worker?.unref();
      });
    },
    async close() {
      const running = worker;
      if (!running) return;
      // Requests in flight are finished before the database closes; anything left fails, not hangs.
      failAll(running, new Error('The database is closed.'));
      await running.terminate();
    },
  };
}
