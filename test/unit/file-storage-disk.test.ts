/**
 * Disk storage (FILES_STORAGE=file:<folder>) against the shared FileStorage contract: what S3's is
 * held to, on a folder of its own. How far a put has got is the folder's bytes, partial files
 * included.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
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
