/**
 * Signed download links (as Active Storage's and S3's presigned URLs): the stored object's key in
 * the path, and its name, type and expiry in the query, signed together with HMAC-SHA256 under
 * the key SECRET_KEY derives for files. A link is bound to that object: a replaced or deleted
 * record's old object is removed, and its link then answers 404. It is rendered only where the
 * record is (scopes and permissions decided that), so holding a link is the right to the bytes
 * until it expires.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { StoredFile } from '../../core/file-fields.js';
import { absoluteLink } from './hosts.js';

/** The path segment the download route is mounted at under a router's prefix. */
export const DOWNLOAD_PATH = '/_files/';

/** What a valid link says of the object beside its key. */
export interface LinkedFile {
  readonly name: string;
  readonly type: string;
  /** Unix seconds. */
  readonly expires: number;
}

const signature = (secret: Uint8Array, key: string, file: LinkedFile): Buffer =>
  createHmac('sha256', secret).update(`restfold file\n${key}\n${file.type}\n${file.name}\n${file.expires}`).digest();

/** The link's path and query (under the router's prefix), valid until `expires`. */
export function signedPath(secret: Uint8Array, key: string, file: LinkedFile): string {
  const query = new URLSearchParams({ name: file.name, type: file.type, expires: String(file.expires), signature: signature(secret, key, file).toString('base64url') });
  return `${DOWNLOAD_PATH}${key}?${query.toString()}`;
}

/** The link's file when its signature is good; undefined otherwise (expiry is the caller's to judge). */
export function verifiedLink(secret: Uint8Array, key: string, query: URLSearchParams): LinkedFile | undefined {
  const name = query.get('name');
  const type = query.get('type');
  const expires = Number(query.get('expires'));
  const given = Buffer.from(query.get('signature') ?? '', 'base64url');
  if (name === null || type === null || !Number.isSafeInteger(expires)) return undefined;
  const file = { name, type, expires };
  const expected = signature(secret, key, file);
  return given.length === expected.length && timingSafeEqual(given, expected) ? file : undefined;
}

/** How a response renders its file fields: the stored metadata with a fresh signed link. */
export interface FileLinks {
  render(request: FastifyRequest, stored: StoredFile): Record<string, unknown>;
}

export function fileLinks(secret: Uint8Array, seconds: number, now: () => number = Date.now): FileLinks {
  return {
    render(request, { key, name, size, content_type, width, height }) {
      const expires = Math.floor(now() / 1000) + seconds;
      const url = absoluteLink(request, `${request.server.prefix}${signedPath(secret, key, { name, type: content_type, expires })}`);
      return { url, name, size, content_type, ...(width !== undefined && { width, height }) };
    },
  };
}

/** A file field's rendering: its object with a signed link, or without one (null) outside a request's collection routes. */
export function renderFile(stored: StoredFile | null, request: FastifyRequest | undefined, links: FileLinks | undefined): Record<string, unknown> | null {
  if (stored === null) return null;
  if (request && links) return links.render(request, stored);
  const { name, size, content_type, width, height } = stored;
  return { url: null, name, size, content_type, ...(width !== undefined && { width, height }) };
}
