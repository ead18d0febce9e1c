/**
 * Where uploaded files' bytes live: one interface, one implementation per
 * kind of store (a folder on local disk, an S3-compatible bucket), chosen by
 * FILES_STORAGE's scheme in `open.ts`. Rows name objects by key; the bytes
 * never enter the database.
 *
 * Keys are made by the framework (random, never a client's file name) and are
 * relative: `<prefix>/<random>`, letters, digits, `-`, `_` and `/` only. An
 * implementation refuses any other key rather than resolving it.
 */
import type { Readable } from 'node:stream';

/** An inclusive byte range, as HTTP's `Range: bytes=start-end` names it. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredObject {
  /** The object's size in bytes. */
  size: number;
}

/**
 * An object opened for reading: its size known before a byte is read (what a download answers
 * first), then its bytes read once, or it is closed unread. Exactly one of `read` and `close` is
 * called, once: a store may hold a file open until then.
 */
export interface OpenedObject extends StoredObject {
  /** The object's bytes (or the range's), streamed or, where few, whole; null when a store that holds nothing open (S3) finds it removed since. */
  read(range?: ByteRange): Promise<Readable | Buffer | null>;
  /** Releases the object unread. */
  close(): void;
}

export interface PresignOptions {
  /** Seconds the URL works for. */
  expiresIn: number;
  /** Sent back as the download's Content-Type. */
  contentType: string;
  /** Sent back as the download's Content-Disposition. */
  contentDisposition: string;
}

export interface FileStorage {
  /** `file` or `s3`: which implementation, for logs and /metrics, never a secret. */
  readonly kind: string;
  /**
   * Stores `body` under `key`, resolving once the object is durable and complete (a
   * partial object is never visible under `key`); rejects, leaving nothing, when `body`
   * errors or is destroyed.
   */
  put(key: string, body: Readable, contentType: string): Promise<StoredObject>;
  /** The object opened for reading, or null when no object has that key. */
  open(key: string): Promise<OpenedObject | null>;
  /** Removes the object; removing one that is absent is not an error. */
  remove(key: string): Promise<void>;
  /** Every key under `prefix` (all keys when empty), in no particular order. */
  list(prefix: string): AsyncIterable<string>;
  /** A short-lived URL the store itself serves the object at, where it can (S3); absent on disk. */
  presign?(key: string, options: PresignOptions): Promise<string>;
  /** Releases connections or handles. */
  close(): Promise<void>;
}

/** A key the framework made: refused otherwise, so no path or bucket key is ever built from other text. */
export function checkedKey(key: string): string {
  if (!/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/.test(key) || key.length > 512) throw new Error(`Not a stored file's key: ${JSON.stringify(key.slice(0, 80))}`);
  return key;
}
