/**
 * A record's file downloads, `<record path>/_files/<field>/` (base/file-links.ts). With a signed
 * link's query (`key`, `name`, `type`, `expires`, `signature`) the object answers without
 * credentials; without one, the request passes the collection's own pipeline as the record's GET
 * does (authentication, permissions, throttling, scope, object checks), and the bytes of the file
 * the record holds now answer. GET and HEAD send the bytes (as the store reads them: streamed, or
 * in one buffer when few), with their type, an ETag (the key
 * names one version of the bytes, so it never changes), their length, and single byte ranges
 * (206, 416). Nothing downloaded runs in the API's origin: `nosniff`, a sandboxing
 * Content-Security-Policy, and anything but a raster image (SVG is no image here) as an
 * attachment under its original name, RFC 6266-encoded.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StoredFile } from '../../core/file-fields.js';
import { ApiError, notFound } from '../base/errors.js';
import { FILE_FIELD_PARAMETER, verifiedLink, type LinkQuery } from '../base/file-links.js';
import { fileTransfer } from '../base/transfer-heap.js';
import { checkedKey, type ByteRange, type OpenedObject } from '../../store/files/storage.js';
import type { Collection } from '../declare/collection.js';
import { loadRecord, type ActionResult, type ActionRoute } from '../actions/request.js';
import { dispatch, type ApiRuntime, type FilesRuntime } from '../views.js';

/** Longest a presigned URL of a redirected download lives, in seconds. */
const PRESIGNED_SECONDS = 300;

/** An ASCII name for old clients, and the UTF-8 one (RFC 5987) for all others. */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** Shown in the browser only when a raster image; anything else (SVG, HTML, PDF) is saved. */
const inline = (type: string): boolean => type.startsWith('image/') && type !== 'image/svg+xml';

/** The one range of a `Range` header (`bytes=a-b`, `a-`, `-n`); undefined: serve it whole (none, several, or not bytes); null: unsatisfiable. */
function rangeOf(header: string | undefined, size: number): ByteRange | null | undefined {
  const match = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    return suffix === 0 || size === 0 ? null : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  return start >= size || end < start ? null : { start, end };
}

/** The object's answer, as a result the pipeline sends as it is (its `type` set, so it is never rendered). */
async function fileAnswer(request: FastifyRequest, files: FilesRuntime, stored: Pick<StoredFile, 'key' | 'name' | 'content_type'>, presignedSeconds: number): Promise<ActionResult & { type: string }> {
  const { key, name, content_type: type } = stored;
  const disposition = contentDisposition(inline(type) ? 'inline' : 'attachment', name);
  if (files.redirect && files.storage.presign) {
    const url = await files.storage.presign(key, { expiresIn: presignedSeconds, contentType: type, contentDisposition: disposition });
    return { status: 302, headers: { location: url, 'cache-control': 'no-store' }, type: 'text/plain; charset=utf-8' };
  }
  const object = await files.storage.open(key);
  if (!object) throw notFound();
  const { size } = object;
  const etag = `"${key.slice(key.lastIndexOf('/') + 1)}"`;
  const headers: Record<string, string> = {
    etag,
    'accept-ranges': 'bytes',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "sandbox; default-src 'none'",
    'content-disposition': disposition,
    'cache-control': 'private, max-age=3600',
  };
  // Every answer but the bytes' own closes the object unread.
  if (request.headers['if-none-match'] === etag) return closed(object, { status: 304, headers, type });
  const range = rangeOf(request.headers.range, size);
  if (range === null) return closed(object, { status: 416, headers: { ...headers, 'content-range': `bytes */${size}` }, type });
  if (range) headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`;
  headers['content-length'] = String(range ? range.end - range.start + 1 : size);
  const status = range ? 206 : 200;
  // An empty stream: Fastify's HEAD route keeps the length set above for a stream (it would call no body 0).
  if (request.method === 'HEAD') return closed(object, { status, headers, type, body: Readable.from([]) });
  const transferred = fileTransfer();
  const bytes = await object.read(range).catch((error: unknown) => {
    transferred();
    throw error;
  });
  if (bytes instanceof Readable) bytes.once('close', transferred);
  else transferred();
  if (!bytes) throw notFound();
  return { status, headers, type, body: bytes };
}

/** `answer`, once `object` is closed unread. */
function closed<T>(object: OpenedObject, answer: T): T {
  object.close();
  return answer;
}

/** A signed link's download: the signature, not a credential, is the right to the bytes. */
async function signedDownload(request: FastifyRequest, reply: FastifyReply, files: FilesRuntime, collection: Collection, query: LinkQuery): Promise<FastifyReply> {
  const params = request.params as Record<string, string | undefined>;
  const place = { collection: collection.name, record: collection.singleton ? '' : (collection.recordKey.segmentIn(params) ?? ''), field: params[FILE_FIELD_PARAMETER] ?? '' };
  const file = verifiedLink(files.linkKey, place, query);
  if (!file) throw notFound();
  try {
    checkedKey(file.key);
  } catch {
    throw notFound();
  }
  const left = file.expires - Math.floor(Date.now() / 1000);
  if (left < 0) throw new ApiError(403, 'permission_denied', 'This link has expired: read the record again for a new one.');
  const answer = await fileAnswer(request, files, { key: file.key, name: file.name, content_type: file.type }, Math.max(1, Math.min(PRESIGNED_SECONDS, left)));
  reply.code(answer.status).headers(answer.headers ?? {});
  return reply.type(answer.type).send(answer.body);
}

/** A download with ordinary credentials, as the pipeline runs it: the record's GET, its file field's bytes in place of its body. */
function downloadRoute(collection: Collection, files: FilesRuntime): ActionRoute {
  return {
    action: 'retrieve',
    mediaTypes: collection.representations,
    takesBody: false,
    enveloped: false,
    async run(action) {
      const serializer = action.collection.serializerFor(action);
      const shown = (action.request.params as Record<string, string | undefined>)[FILE_FIELD_PARAMETER];
      // A field the request's serializer shows, and a file: any other name has no download.
      const name = serializer.fields.find((each) => serializer.shown(each) === shown && serializer.model.fields[each]?.file);
      if (name === undefined) throw notFound();
      const { row } = await loadRecord(action, serializer);
      const stored = serializer.model.fields[name]!.render(row[name]) as StoredFile | null;
      if (!stored) throw notFound();
      return fileAnswer(action.request, files, stored, PRESIGNED_SECONDS);
    },
  };
}

/** What answers at a collection's records' files (documented by docs/openapi.ts, downloadSchema): by signature, or through the pipeline. */
export function downloadHandler(runtime: ApiRuntime, files: FilesRuntime, collection: Collection): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  const route = downloadRoute(collection, files);
  return (request, reply) => {
    // The query as Fastify parsed it for the route, not parsed again.
    const query = request.query as LinkQuery;
    return query.signature !== undefined ? signedDownload(request, reply, files, collection, query) : dispatch(request, reply, runtime, collection, route);
  };
}
