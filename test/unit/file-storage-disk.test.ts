/**
 * Disk storage (FILES_STORAGE=file:<folder>) against the shared FileStorage contract: what S3's is
 * held to, on a folder of its own. How far a put has got is the folder's bytes, partial files
 * included.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { openFileStorage } from '../../src/store/files/open.js';
import { fileStorageContract } from '../support/file-storage-contract.js';

const folder = mkdtempSync(join(tmpdir(), 'restfold-disk-contract-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** The bytes of every file under the folder (one renamed or removed since it was listed counts none). */
const folderBytes = (): number =>
  readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((sum, entry) => sum + (statSync(join(entry.parentPath, entry.name), { throwIfNoEntry: false })?.size ?? 0), 0);

describe('disk storage: the FileStorage contract', () => {
  fileStorageContract(async () => ({ storage: await openFileStorage({ url: `file:${folder}`, env: {} }), takenBytes: folderBytes }), { presigns: false });
});

describe('disk storage: descriptors', () => {
  /** Open descriptors of this process (Linux lists them under /proc). */
  const descriptors = (): number => readdirSync('/proc/self/fd').length;

  it.skipIf(process.platform !== 'linux')('holds none once an object is closed unread, read whole, or its stream destroyed part way', async () => {
    const storage = await openFileStorage({ url: `file:${folder}`, env: {} });
    const key = 'descriptors/object';
    await storage.put(key, Readable.from([randomBytes(1024 * 1024)]), 'application/octet-stream');
    const before = descriptors();
    for (let time = 0; time < 20; time++) {
      (await storage.open(key))!.close();
      expect(await (await storage.open(key))!.read({ start: 0, end: 99 })).toHaveLength(100);
      const partWay = (await (await storage.open(key))!.read()) as Readable;
      await new Promise((resolve) => partWay.once('data', resolve));
      partWay.destroy();
      await new Promise((resolve) => partWay.once('close', resolve));
    }
    // Closing unread gives the descriptor back a moment later (the close is not awaited).
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(descriptors()).toBe(before);
    await storage.close();
  });
});
