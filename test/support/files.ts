/** What file tests send and count: real PNGs made here, multipart bodies sent with fetch, objects on disk or in an S3 bucket. */
import { crc32, deflateSync } from 'node:zlib';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { s3Storage } from '../../src/store/files/s3.js';
import { startS3Server } from './s3-server.js';

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A valid PNG of `width`×`height` grey pixels. */
export function png(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // greyscale
  const rows = Buffer.alloc((width + 1) * height, 0x80);
  for (let row = 0; row < height; row++) rows[row * (width + 1)] = 0;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** A minimal PDF's bytes (its signature is what is sniffed). */
export const pdf = (): Buffer => Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

/** Every object in a disk storage folder (its files, partial ones included: none may be left). */
export async function objectsIn(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

export interface Sent {
  status: number;
  headers: Headers;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary shapes
  bytes: Buffer;
}

/** A request to a listening app, with a FormData body (fetch writes the multipart body) or none. */
export async function send(base: string, method: string, path: string, options: { token?: string; form?: FormData; json?: unknown; headers?: Record<string, string> } = {}): Promise<Sent> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: FormData | string | undefined = options.form;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(path.startsWith('http') ? path : `${base}${path}`, { method, headers, body, redirect: 'manual' });
  const bytes = Buffer.from(await response.arrayBuffer());
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, json, bytes };
}

/** A form with `fields` as text parts and `files` as file parts (name → [bytes, file name, claimed type]). */
export function formOf(fields: Record<string, string>, files: Record<string, [Buffer, string, string?]> = {}): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const [name, [bytes, fileName, type]] of Object.entries(files)) form.append(name, new Blob([new Uint8Array(bytes)], { type: type ?? 'application/octet-stream' }), fileName);
  return form;
}

/** Where a files suite stores its objects, and how it counts them. */
export interface TestStorage {
  /** FILES_STORAGE and whatever else the store needs. */
  readonly env: Record<string, string>;
  /** Every object stored (on disk, partial files included: none may be left). */
  objects(): Promise<string[]>;
  close(): Promise<void>;
}

/** A fresh folder on disk. */
export async function diskTestStorage(): Promise<TestStorage> {
  const folder = await mkdtemp(join(tmpdir(), 'restfold-files-'));
  return { env: { FILES_STORAGE: `file:${folder}` }, objects: () => objectsIn(folder), close: () => rm(folder, { recursive: true, force: true }) };
}

/** A fresh bucket on an S3 API server in this process (s3-server.ts), counted by listing it. */
export async function s3TestStorage(): Promise<TestStorage> {
  const server = await startS3Server();
  const env = { FILES_STORAGE: `s3://${server.bucket}/uploads`, ...server.env };
  const storage = s3Storage(env.FILES_STORAGE, env);
  return {
    env,
    async objects() {
      const keys: string[] = [];
      for await (const key of storage.list('')) keys.push(key);
      return keys;
    },
    async close() {
      await storage.close();
      await server.stop();
    },
  };
}

/** The storages a files suite runs against. */
export const TEST_STORAGES = { disk: diskTestStorage, s3: s3TestStorage } as const;
