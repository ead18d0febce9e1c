/**
 * Signed download links (as Active Storage's and S3's presigned URLs). A link names the record and
 * the field that hold the file, `<record path>/_files/<field>/`, so that the same path answers a
 * request with ordinary credentials (the collection's own pipeline: its permissions and scope
 * decide, as for the record). Its query carries the stored object's key, name, type and expiry,
 * signed together with the record and field under the key SECRET_KEY derives for files: such a
 * link works without credentials until it expires. It is bound to that object: a replaced or
 * deleted record's old object is removed, and its link then answers 404.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { StoredFile } from '../../core/file-fields.js';
import { absoluteLink } from './hosts.js';
import { pathEnd } from './style.js';

/** The path segment under a record's path that its files' downloads are mounted at. */
export const FILES_SEGMENT = '_files';

/** The download path's parameter naming the file field (its name as the serializer shows it). */
export const FILE_FIELD_PARAMETER = 'fileField';

/** Where a record's files are downloaded: the collection and record the path names, and the path itself. */
export interface FilePlace {
  readonly collection: string;
  /** The record key's value as the path's parameter reads it (decoded); '' for a singleton. */
  readonly record: string;
  /** The path under the router's prefix, up to and including `_files/` (the field's name follows). */
  readonly path: string;
}

/** What a signed link names. */
export interface LinkedFile {
  readonly collection: string;
  readonly record: string;
  readonly field: string;
  readonly key: string;
  readonly name: string;
  readonly type: string;
  /** Unix seconds. */
  readonly expires: number;
}

const signature = (secret: Uint8Array, file: LinkedFile): Buffer =>
  createHmac('sha256', secret)
    .update(['restfold file', file.collection, file.record, file.field, file.key, file.type, file.name, String(file.expires)].join('\n'))
    .digest();

/** The link's query, valid until `expires`. */
export function signedQuery(secret: Uint8Array, file: LinkedFile): string {
  return new URLSearchParams({ key: file.key, name: file.name, type: file.type, expires: String(file.expires), signature: signature(secret, file).toString('base64url') }).toString();
}

/** A request's query as the router parsed it: a name given more than once holds every value. */
export type LinkQuery = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The link's file when its signature is good for that record and field; undefined otherwise (expiry is the caller's to judge). */
export function verifiedLink(secret: Uint8Array, place: Pick<LinkedFile, 'collection' | 'record' | 'field'>, query: LinkQuery): LinkedFile | undefined {
  const { key, name, type, expires: expiry, signature: signed } = query;
  // Each named once: a link this module made never repeats a name.
  if (typeof key !== 'string' || typeof name !== 'string' || typeof type !== 'string' || typeof expiry !== 'string' || typeof signed !== 'string') return undefined;
  const expires = Number(expiry);
  if (!Number.isSafeInteger(expires)) return undefined;
  const file = { ...place, key, name, type, expires };
  const given = Buffer.from(signed, 'base64url');
  const expected = signature(secret, file);
  return given.length === expected.length && timingSafeEqual(given, expected) ? file : undefined;
}

/** How a response renders its file fields: the stored metadata with a fresh signed link. */
export interface FileLinks {
  /** The absolute signed URL of `field`'s file `stored`, held by the record at `place`, as `request` reaches the API. */
  url(request: FastifyRequest, place: FilePlace, field: string, stored: StoredFile): string;
}

/** A link's path from `place` on (the router's prefix and the origin go before it), valid until `expires`; `end`: the router's path end. */
export function linkPath(secret: Uint8Array, place: FilePlace, field: string, { key, name, content_type }: Pick<StoredFile, 'key' | 'name' | 'content_type'>, expires: number, end: string): string {
  const query = signedQuery(secret, { collection: place.collection, record: place.record, field, key, name, type: content_type, expires });
  return `${place.path}${encodeURIComponent(field)}${end}?${query}`;
}

export function fileLinks(secret: Uint8Array, seconds: number, now: () => number = Date.now): FileLinks {
  return {
    url(request, place, field, stored) {
      const expires = Math.floor(now() / 1000) + seconds;
      return absoluteLink(request, `${request.server.prefix}${linkPath(secret, place, field, stored, expires, pathEnd(request))}`);
    },
  };
}

/** A file field's rendering: its object with a signed link, or with a null one where no link can be made (no request, or no path serves the record). */
export function renderFile(stored: StoredFile | null, url: string | null): Record<string, unknown> | null {
  if (stored === null) return null;
  const { name, size, content_type, width, height } = stored;
  return { url, name, size, content_type, ...(width !== undefined && { width, height }) };
}
