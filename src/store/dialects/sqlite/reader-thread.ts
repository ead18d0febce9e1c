/**
 * A SQLite reader thread: runs the reads it is sent, one at a time, on a read-only connection of
 * its own to the same file (WAL lets it read beside the server's writes, and each statement reads
 * what was committed when it starts), so a long scan holds this thread, not the server's event
 * loop. See sqlite-readers.ts for the server's side.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { cached } from '../../../core/cache.js';
import { registerSqlFunctions } from './functions.js';
import { limitPageCache } from './page-cache.js';

export interface ReadRequest {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/** What a thread is started with: the file, and its page cache's bound in KiB. */
export interface ReaderData {
  readonly path: string;
  readonly cacheKib: number;
}

/** Rows or an error, and the bytes of this thread's JavaScript heap resident (measured at most a second before): the server's metrics count them (its own heap statistics are its thread's alone). */
export type ReadResponse = ({ readonly rows: unknown[] } | { readonly error: { readonly message: string; readonly code?: string } }) & { readonly heapBytes: number };

/**
 * Where cores are short, a scan here must not take them from the event loop: this thread runs at
 * the lowest priority (nice 19), so it takes what the loop leaves; with a core to itself it runs
 * as fast as ever. Linux alone schedules threads apart (a thread id given to setpriority);
 * elsewhere, or where the system refuses, it keeps the process's priority.
 */
function lowerPriority(): void {
  try {
    const thread = Number(readlinkSync('/proc/thread-self').split('/').pop());
    setPriority(thread, 19);
  } catch {
    // Not Linux, or not allowed: the same priority as the event loop.
  }
}

/** As the server's own connection keeps them: a list runs the same few SQL texts over and over. */
const STATEMENTS_KEPT = 500;
/** How old the heap's size a read reports may be. */
const HEAP_EVERY_MS = 1000;

if (parentPort) {
  const port = parentPort;
  const { path, cacheKib } = workerData as ReaderData;
  const connection = new SQLite(path, { readonly: true, fileMustExist: true });
  connection.pragma('busy_timeout = 5000');
  limitPageCache(connection, cacheKib);
  lowerPriority();
  registerSqlFunctions(connection);
  const statements = new Map<string, SQLite.Statement>();
  // Read at most once a second, not on every read: the metrics are sampled far less often.
  let measured = { at: 0, bytes: 0 };
  const heapBytes = (): number => {
    const now = Date.now();
    if (now - measured.at >= HEAP_EVERY_MS) measured = { at: now, bytes: getHeapStatistics().total_physical_size };
    return measured.bytes;
  };
  port.on('message', ({ sql, parameters }: ReadRequest) => {
    let answer: { rows: unknown[] } | { error: { message: string; code?: string } };
    try {
      answer = { rows: cached(statements, sql, STATEMENTS_KEPT, () => connection.prepare(sql)).all(parameters) };
    } catch (error) {
      const { message, code } = error as { message: string; code?: string };
      answer = { error: { message, code } };
    }
    port.postMessage({ ...answer, heapBytes: heapBytes() } satisfies ReadResponse);
  });
}
