/**
 * An upload's file part handed to a storage that stops reading it part-way (a disk that fills, a
 * file over its field's maxBytes): the part's rest is read and dropped, so the multipart body goes
 * on to its next parts and ends, even when the part was held back waiting for a slow storage.
 */
import { Readable } from 'node:stream';
import busboy from 'busboy';
import { describe, expect, it } from 'vitest';
import type { FileStorage } from '../../src/store/files/storage.js';
import { storeFile } from '../../src/framework/stages/parsers/multipart.js';

const MiB = 1024 * 1024;
const boundary = 'restfold-upload-stream';

/** A body of one 10 MiB file part and a field after it, delivered in 64 KiB chunks as a socket does. */
function body(): Readable {
  const bytes = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    Buffer.alloc(10 * MiB, 7),
    Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="after"\r\n\r\nread\r\n--${boundary}--\r\n`),
  ]);
  return Readable.from((function* () {
    for (let offset = 0; offset < bytes.length; offset += 64 * 1024) yield bytes.subarray(offset, offset + 64 * 1024);
  })());
}

/** A storage that reads `failAfter` bytes (each chunk after a pause when `slow`), then fails; or reads it all. */
function storage(failAfter: number, slow: boolean): FileStorage {
  return {
    kind: 'test',
    async put(_key, stream) {
      let size = 0;
      for await (const chunk of stream) {
        size += (chunk as Buffer).length;
        if (slow) await new Promise((resolve) => setTimeout(resolve, 1));
        if (size > failAfter) throw new Error('the disk is full');
      }
      return { size };
    },
    open: () => Promise.resolve(null),
    remove: () => Promise.resolve(),
    list: async function* () {},
    close: () => Promise.resolve(),
  };
}

/** The file stored (or why not) and the fields read after it, once the whole body is parsed. */
async function upload(target: FileStorage, maxBytes: number): Promise<{ outcome: string; fields: string[] }> {
  const parser = busboy({ headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
  const fields: string[] = [];
  let stored: Promise<string> = Promise.resolve('no file');
  parser.on('field', (name, value) => fields.push(`${name}=${value}`));
  parser.on('file', (_name, file) => {
    stored = storeFile(file, 'a.bin', { maxBytes, keep: false }, { storage: target, prefix: 'uploads', stored: [] }).then(
      (file) => `stored ${file.size}`,
      (error: Error) => `refused: ${error.message}`,
    );
  });
  const closed = new Promise((resolve) => parser.on('close', resolve));
  body().pipe(parser);
  await closed;
  return { outcome: await stored, fields };
}

describe('a file part the storage stops reading', () => {
  it('stores the whole part when nothing fails', async () => {
    expect(await upload(storage(Infinity, false), 64 * MiB)).toEqual({ outcome: `stored ${10 * MiB}`, fields: ['after=read'] });
  });

  it('reads on past a storage that fails part-way, fast or slow, to the fields after the file', async () => {
    for (const slow of [false, true]) {
      expect(await upload(storage(3 * MiB, slow), 64 * MiB)).toEqual({ outcome: 'refused: the disk is full', fields: ['after=read'] });
    }
  });

  it('reads on past a file over its maxBytes, to the fields after it', async () => {
    expect(await upload(storage(Infinity, true), 5 * MiB)).toEqual({ outcome: 'refused: A file is too large.', fields: ['after=read'] });
  });
});
