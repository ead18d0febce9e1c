/**
 * The app's file storage as its database carries it to code that writes records outside a request
 * (recordStore): set once when the app is built, on the database it hands out, and kept by every
 * database made from it (a transaction's is a copy of its own properties).
 */
import type { Database } from '../connection/database.js';
import type { FileStorage } from './storage.js';
import type { Row } from '../../core/rows.js';

/** What the app lends its database for files. */
export interface AttachedFiles {
  readonly storage: FileStorage;
  /** FILES_MAX_BYTES: the largest file any field accepts. */
  readonly maxFileBytes: number;
  /**
   * A signed link to the file `file` held by `field` (its shown name) of `row`, of `table`, as a
   * path from the app's origin under its first router's prefix (no request names a host); null
   * where no collection of that router serves the table.
   */
  link(table: string, row: Row, field: string, file: { key: string; name: string; content_type: string }): string | null;
}

const FILES = Symbol('restfold files');

type Carrying = Database & { [FILES]?: AttachedFiles };

export function attachFiles(database: Database, files: AttachedFiles): void {
  // Configurable: an app built again on the same database (a restart in tests) attaches its own.
  Object.defineProperty(database, FILES, { value: files, enumerable: true, configurable: true, writable: true });
}

/** The files the app attached to `database` (or to the database it was made from); none outside an app. */
export const attachedFiles = (database: Database): AttachedFiles | undefined => (database as Carrying)[FILES];
