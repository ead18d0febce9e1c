/**
 * What every FileStorage promises (src/store/files/storage.ts), as cases a
 * test file runs against one implementation: `fileStorageContract(...)`
 * inside its describe block. Each case works under keys of its own, so the
 * cases share one store.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ByteRange, FileStorage } from '../../src/store/files/storage.js';

export interface StorageUnderTest {
  storage: FileStorage;
  /** Bytes the store has taken in so far (a server's received bytes, a folder's size): how far a put has got. */
  takenBytes(): number;
}

export interface ContractOptions {
  /** Whether this kind of store serves presigned URLs (S3) or has no `presign` (disk). */
  presigns: boolean;
}

const MiB = 1_048_576;

/** A fresh folder-like prefix per case. */
const fresh = (): string => `c${randomBytes(6).toString('hex')}`;

async function bytesOf(bytes: Readable | Buffer | null): Promise<Buffer> {
  expect(bytes).not.toBeNull();
  if (Buffer.isBuffer(bytes)) return bytes;
  const chunks: Buffer[] = [];
  for await (const chunk of bytes!) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The size `open` finds for `key` (the object closed unread), or null. */
async function sizeOf(storage: FileStorage, key: string): Promise<{ size: number } | null> {
  const object = await storage.open(key);
  object?.close();
  return object && { size: object.size };
}

/** `key`'s bytes (or the range's) as `open` then `read` give them, or null. */
async function readOf(storage: FileStorage, key: string, range?: ByteRange): Promise<Readable | Buffer | null> {
  const object = await storage.open(key);
  return object && object.read(range);
}

/** Every key `list(prefix)` yields, sorted. */
export async function keysUnder(storage: FileStorage, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of storage.list(prefix)) keys.push(key);
  return keys.sort();
}

/** `total` bytes made as they are read, `chunk` at a time; `fail` errors (or, `'destroy'`, ends abruptly) once `at` bytes are out. */
function source(total: number, options: { chunk?: number; failAt?: number; fail?: 'error' | 'destroy'; onChunk?: (sent: number) => void } = {}) {
  const chunkBytes = options.chunk ?? 64 * 1024;
  const hash = createHash('sha256');
  let sent = 0;
  const stream = new Readable({
    read() {
      if (options.failAt !== undefined && sent >= options.failAt) {
        if (options.fail === 'destroy') this.destroy();
        else this.destroy(new Error('the client went away'));
        return;
      }
      if (sent >= total) return void this.push(null);
      const chunk = randomBytes(Math.min(chunkBytes, total - sent));
      hash.update(chunk);
      sent += chunk.length;
      options.onChunk?.(sent);
      this.push(chunk);
    },
  });
  return { stream, digest: () => hash.digest('hex') };
}

const HOSTILE_KEYS = ['', '../x', '/etc/passwd', 'a/../b', 'a/./b', 'a//b', 'a/', 'a\\b', 'a b', 'a%2Fb', 'x\u0000y', 'é', 'a.txt', 'a'.repeat(513)];

export function fileStorageContract(open: () => Promise<StorageUnderTest>, options: ContractOptions): void {
  let under: StorageUnderTest;
  let storage: FileStorage;
  beforeAll(async () => {
    under = await open();
    storage = under.storage;
  });
  afterAll(async () => {
    await storage?.close();
  });

  it('stores bytes under a key and reads them back, whole and as a range', async () => {
    const key = `${fresh()}/object`;
    const bytes = randomBytes(300_000);
    await expect(storage.put(key, Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]), 'application/octet-stream')).resolves.toEqual({ size: bytes.length });
    expect(await sizeOf(storage, key)).toEqual({ size: bytes.length });
    expect((await bytesOf(await readOf(storage, key))).equals(bytes)).toBe(true);
    expect((await bytesOf(await readOf(storage, key, { start: 10, end: 19 }))).equals(bytes.subarray(10, 20))).toBe(true);
    expect((await bytesOf(await readOf(storage, key, { start: bytes.length - 1, end: bytes.length - 1 }))).equals(bytes.subarray(-1))).toBe(true);
  });

  it('stores an empty file', async () => {
    const key = `${fresh()}/empty`;
    await expect(storage.put(key, Readable.from([]), 'text/plain')).resolves.toEqual({ size: 0 });
    expect(await sizeOf(storage, key)).toEqual({ size: 0 });
    expect((await bytesOf(await readOf(storage, key))).length).toBe(0);
  });

  it('answers null for a key with no object, and removing one twice is no error', async () => {
    const key = `${fresh()}/gone`;
    expect(await readOf(storage, key)).toBeNull();
    expect(await sizeOf(storage, key)).toBeNull();
    await storage.put(key, Readable.from([Buffer.from('bytes')]), 'text/plain');
    await storage.remove(key);
    await storage.remove(key);
    expect(await sizeOf(storage, key)).toBeNull();
    expect(await readOf(storage, key)).toBeNull();
  });

  it('lists the keys under a prefix of whole segments, and all keys for an empty prefix', async () => {
    const prefix = fresh();
    const keys = [`${prefix}/a/1`, `${prefix}/a/2`, `${prefix}/a/deeper/3`, `${prefix}/ab/4`];
    for (const key of keys) await storage.put(key, Readable.from([Buffer.from(key)]), 'text/plain');
    expect(await keysUnder(storage, `${prefix}/a`)).toEqual([`${prefix}/a/1`, `${prefix}/a/2`, `${prefix}/a/deeper/3`]);
    expect(await keysUnder(storage, prefix)).toEqual(keys);
    expect(await keysUnder(storage, `${prefix}/none`)).toEqual([]);
    const all = await keysUnder(storage, '');
    expect(keys.every((key) => all.includes(key))).toBe(true);
  });

  for (const [how, fail] of [['errors', 'error'], ['is destroyed', 'destroy']] as const) {
    for (const failAt of [1 * MiB, 7 * MiB]) {
      it(`leaves no object when the body ${how} after ${failAt / MiB} MiB`, async () => {
        const prefix = fresh();
        const body = source(20 * MiB, { failAt, fail });
        await expect(storage.put(`${prefix}/broken`, body.stream, 'application/octet-stream')).rejects.toThrow();
        expect(await sizeOf(storage, `${prefix}/broken`)).toBeNull();
        expect(await readOf(storage, `${prefix}/broken`)).toBeNull();
        expect(await keysUnder(storage, prefix)).toEqual([]);
      });
    }
  }

  it('passes on the body’s own error, so a caller can tell a refused upload from a failed store', async () => {
    for (const failAt of [0, 1 * MiB, 6 * MiB]) {
      const body = source(20 * MiB, { failAt });
      await expect(storage.put(`${fresh()}/broken`, body.stream, 'application/octet-stream')).rejects.toThrow('the client went away');
    }
  });

  it('streams a 30 MiB file of unknown length, holding a bounded part of it at a time', async () => {
    const key = `${fresh()}/large`;
    const total = 30 * MiB;
    let lead = 0;
    // How far the source has been read ahead of what the store has taken in.
    const body = source(total, { onChunk: (sent) => (lead = Math.max(lead, sent - under.takenBytes())) });
    await expect(storage.put(key, body.stream, 'application/octet-stream')).resolves.toEqual({ size: total });
    expect(await sizeOf(storage, key)).toEqual({ size: total });
    const readBack = createHash('sha256');
    const stream = await readOf(storage, key);
    expect(stream).toBeInstanceOf(Readable);
    for await (const chunk of stream as Readable) readBack.update(chunk as Buffer);
    expect(readBack.digest('hex')).toBe(body.digest());
    expect(lead).toBeLessThan(24 * MiB);
  });

  it('refuses keys it did not make, and creates nothing for them', async () => {
    const before = (await keysUnder(storage, '')).length;
    for (const key of HOSTILE_KEYS) {
      await expect(async () => storage.put(key, Readable.from([Buffer.from('x')]), 'text/plain'), key).rejects.toThrow(/key/);
      await expect(async () => storage.open(key), key).rejects.toThrow(/key/);
      await expect(async () => storage.remove(key), key).rejects.toThrow(/key/);
      if (storage.presign) await expect(async () => storage.presign!(key, { expiresIn: 60, contentType: 'text/plain', contentDisposition: 'attachment' }), key).rejects.toThrow(/key/);
      if (key !== '') await expect(async () => keysUnder(storage, key), key).rejects.toThrow(/key/);
    }
    expect((await keysUnder(storage, '')).length).toBe(before);
  });

  if (!options.presigns) {
    it('has no presigned URLs', () => {
      expect(storage.presign).toBeUndefined();
    });
    return;
  }

  it('presigns a URL that serves the bytes, a range of them, and the headers asked for, without credentials', async () => {
    const key = `${fresh()}/signed`;
    const bytes = randomBytes(50_000);
    await storage.put(key, Readable.from([bytes]), 'application/octet-stream');
    const disposition = `attachment; filename="report.pdf"; filename*=UTF-8''r%C3%A9port.pdf`;
    const url = await storage.presign!(key, { expiresIn: 300, contentType: 'application/pdf', contentDisposition: disposition });
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('application/pdf');
    expect(whole.headers.get('content-disposition')).toBe(disposition);
    expect(Buffer.from(await whole.arrayBuffer()).equals(bytes)).toBe(true);
    const part = await fetch(url, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(100, 200))).toBe(true);
    // The signature covers the key and the headers asked for: changing either is refused.
    const plain = await storage.presign!(key, { expiresIn: 300, contentType: 'application/pdf', contentDisposition: 'attachment' });
    expect((await fetch(plain)).status).toBe(200);
    const otherKey = plain.replace('/signed?', '/signed2?');
    expect(otherKey).not.toBe(plain);
    expect((await fetch(otherKey)).status).toBe(403);
    const otherType = plain.replace('application%2Fpdf', 'text%2Fhtml');
    expect(otherType).not.toBe(plain);
    expect((await fetch(otherType)).status).toBe(403);
  });
}
