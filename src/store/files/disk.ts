/**
 * Files on local disk: each object is one file under the folder, at its key's path. An object is
 * written under a temporary name beside it and renamed into place once complete and synced, so a
 * reader (or a crash) never sees part of one under its key.
 */
import { randomBytes } from 'node:crypto';
import { close, createReadStream, createWriteStream, fdatasync, fstat, fsync, open as openFd, read as readFd } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { checkedKey, type FileStorage, type OpenedObject, type StoredObject } from './storage.js';

/** Temporary names end so: never a key (keys have no dot), so `list` skips them. */
const PARTIAL = '.partial';

const missing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * What an upload's write buffers while the file system is busy with the last write: the chunks
 * that arrive meanwhile go out in one writev, so a large file takes far fewer trips to the thread
 * pool than at the stream's default. Held per upload in flight (see docs/performance.md, Files).
 */
const WRITE_BUFFER_BYTES = 256 * 1024;

/**
 * A download's reads, larger than the stream's default: fewer reads, socket writes and buffers for
 * the collector per byte (see docs/performance.md, Files). Held per download in flight, which
 * MAX_CONNECTIONS bounds; a smaller object reads at its own size, in one read into one buffer.
 */
const READ_BUFFER_BYTES = 256 * 1024;

/**
 * An upload's draft is synced in the background each time this much more of it has been received,
 * so that the sync before it is renamed into place finds little left to write: the disk works while
 * the rest of the body arrives, not after it (see docs/performance.md, Files).
 */
const SYNC_EVERY_BYTES = 4 * 1024 * 1024;

/**
 * Background syncs under way at once in the process, at most: each holds one of the thread pool's
 * threads until the disk answers, and the uploads' writes (and every other file system call) share them.
 */
const MOST_BACKGROUND_SYNCS = 1;
let backgroundSyncs = 0;

/** Syncs `fd` in the background each SYNC_EVERY_BYTES `body` yields, while no other background sync is under way. */
function syncWhileReceiving(body: Readable, fd: number): void {
  let unsynced = 0;
  body.on('data', (chunk: Buffer) => {
    unsynced += chunk.length;
    if (unsynced < SYNC_EVERY_BYTES || backgroundSyncs >= MOST_BACKGROUND_SYNCS) return;
    unsynced = 0;
    backgroundSyncs++;
    // The final sync is what makes the file durable; one that fails here (the file already closed,
    // or its descriptor reused by then, so another file synced) changes nothing.
    fdatasync(fd, () => backgroundSyncs--);
  });
}

const openFile = promisify(openFd);
const statFile = promisify(fstat);
const readAt = promisify(readFd);
const syncFile = promisify(fsync);
const closeFile = promisify(close);

/**
 * A folder's entries made durable: without it a power cut could lose a file renamed into it (or a
 * folder made in it) after the row naming it committed. Windows cannot open a folder to sync it.
 */
async function syncFolder(folder: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fd = await openFile(folder, 'r');
  try {
    await syncFile(fd);
  } finally {
    await closeFile(fd);
  }
}

/**
 * `length` bytes from `position` of `fd`, which is closed after: bytes that fit one read need no
 * stream around them, whose making, piping and closing cost a small download more CPU than its
 * read (docs/performance.md, Files).
 */
async function readOnce(fd: number, position: number, length: number): Promise<Buffer> {
  try {
    const buffer = Buffer.allocUnsafe(length);
    const { bytesRead } = length === 0 ? { bytesRead: 0 } : await readAt(fd, buffer, 0, length, position);
    // An object is never changed once under its key (only replaced or removed), so a short read is a fault.
    if (bytesRead !== length) throw new Error(`A stored file ended after ${bytesRead} of the ${length} bytes its size names.`);
    return buffer;
  } finally {
    close(fd, () => {});
  }
}

export function diskStorage(folder: string): FileStorage {
  const root = resolve(folder);
  const pathOf = (key: string): string => join(root, ...checkedKey(key).split('/'));

  /**
   * The draft opened for writing. Its folder is made only when the open finds it missing (the first
   * object under a prefix, or after the folder was removed), not before every upload: a trip to the
   * thread pool each, queued behind the writes of the uploads in flight. A bare descriptor, written
   * through the callback API: a FileHandle's writes each make promises, which cost CPU per MiB
   * (docs/performance.md, Files).
   */
  async function openDraft(draft: string): Promise<number> {
    try {
      return await openFile(draft, 'wx', 0o600);
    } catch (error) {
      if (!missing(error)) throw error;
      const made = await mkdir(dirname(draft), { recursive: true });
      // Each folder made is an entry of its parent, which is synced too (the last one's own entries are, after the rename).
      for (let folder = dirname(draft); made !== undefined; folder = dirname(folder)) {
        await syncFolder(dirname(folder));
        if (folder === made || folder === dirname(folder)) break;
      }
      return openFile(draft, 'wx', 0o600);
    }
  }

  async function put(key: string, body: Readable): Promise<StoredObject> {
    const path = pathOf(key);
    const draft = `${path}.${randomBytes(6).toString('hex')}${PARTIAL}`;
    let renamed = false;
    try {
      const fd = await openDraft(draft);
      // Synced (flush) before the stream closes its file, which it does however it ends.
      const file = createWriteStream('', { fd, flush: true, highWaterMark: WRITE_BUFFER_BYTES });
      const written = pipeline(body, file);
      syncWhileReceiving(body, fd);
      await written;
      await rename(draft, path);
      renamed = true;
      await syncFolder(dirname(path));
      return { size: file.bytesWritten };
    } catch (error) {
      await rm(renamed ? path : draft, { force: true });
      throw error;
    }
  }

  /**
   * Opened once, by a bare descriptor through the callback API, and its size read from that
   * descriptor: a FileHandle's promises and a stat by path before the open each cost a download
   * CPU (docs/performance.md, Files). The read stream closes the descriptor however it ends.
   */
  async function openObject(key: string): Promise<OpenedObject | null> {
    const fd = await openFile(pathOf(key), 'r').catch((error: unknown) => {
      if (missing(error)) return null;
      throw error;
    });
    if (fd === null) return null;
    let size: number;
    try {
      ({ size } = await statFile(fd));
    } catch (error) {
      close(fd, () => {});
      throw error;
    }
    return {
      size,
      async read(range) {
        // Up to the end its size names: the stream then never asks the file for the end of it.
        const { start, end } = range ?? { start: 0, end: size - 1 };
        const length = Math.max(0, end - start + 1);
        if (length <= READ_BUFFER_BYTES) return readOnce(fd, start, length);
        return createReadStream('', { fd, autoClose: true, highWaterMark: READ_BUFFER_BYTES, start, end });
      },
      close() {
        close(fd, () => {});
      },
    };
  }

  async function* walk(folderPath: string): AsyncGenerator<string> {
    const entries = await readdir(folderPath, { withFileTypes: true }).catch((error: unknown) => {
      if (missing(error)) return [];
      throw error;
    });
    for (const entry of entries) {
      const path = join(folderPath, entry.name);
      if (entry.isDirectory()) yield* walk(path);
      else if (entry.isFile() && !entry.name.endsWith(PARTIAL)) yield relative(root, path).split(sep).join('/');
    }
  }

  return {
    kind: 'file',
    put,
    open: openObject,
    async remove(key) {
      await rm(pathOf(key), { force: true });
    },
    list(prefix) {
      return walk(prefix === '' ? root : pathOf(prefix));
    },
    async close() {},
  };
}
