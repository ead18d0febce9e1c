/**
 * The SQLite reader thread: runs the reads it is sent on a read-only connection of its own to the
 * same file (WAL lets it read beside the server's writes), so a long scan holds this thread, not
 * the server's event loop. See sqlite-readers.ts for the server's side.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { registerLikeFunctions } from './sqlite-functions.js';

export interface ReadRequest {
  readonly id: number;
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

export type ReadResponse =
  | { readonly id: number; readonly rows: unknown[] }
  | { readonly id: number; readonly error: { readonly message: string; readonly code?: string } };

if (parentPort) {
  const port = parentPort;
  const connection = new SQLite((workerData as { path: string }).path, { readonly: true, fileMustExist: true });
  connection.pragma('busy_timeout = 5000');
  registerLikeFunctions(connection);
  port.on('message', ({ id, sql, parameters }: ReadRequest) => {
    let response: ReadResponse;
    try {
      // Prepared anew each time: next to the scans sent here, preparing costs nothing worth keeping.
      response = { id, rows: connection.prepare(sql).all(parameters) };
    } catch (error) {
      const { message, code } = error as { message: string; code?: string };
      response = { id, error: { message, code } };
    }
    port.postMessage(response);
  });
}
