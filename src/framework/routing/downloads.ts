/**
 * The download route, `<prefix>/_files/<key>?name&type&expires&signature` (base/file-links.ts):
 * GET and HEAD stream the object's bytes, with its type, an ETag (the key names one version of the
 * bytes, so it never changes), its length, and single byte ranges (206, 416). Nothing downloaded
 * runs in the API's origin: `nosniff`, a sandboxing Content-Security-Policy, and anything but a
 * raster image (SVG is no image here) as an attachment under its original name, RFC 6266-encoded.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, notFound } from '../base/errors.js';
import { DOWNLOAD_PATH, verifiedLink, type LinkedFile } from '../base/file-links.js';
import { checkedKey, type ByteRange } from '../../store/files/storage.js';
import type { FilesRuntime } from '../views.js';

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

function linked(request: FastifyRequest, files: FilesRuntime): { key: string; file: LinkedFile } {
  const key = (request.params as Record<string, string>)['*'] ?? '';
  try {
    checkedKey(key);
  } catch {
    throw notFound();
  }
  const file = verifiedLink(files.linkKey, key, new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1)));
  if (!file) throw notFound();
  if (file.expires * 1000 < Date.now()) throw new ApiError(403, 'permission_denied', 'This link has expired: read the record again for a new one.');
  return { key, file };
}

async function download(request: FastifyRequest, reply: FastifyReply, files: FilesRuntime): Promise<FastifyReply> {
  const { key, file } = linked(request, files);
  const disposition = contentDisposition(inline(file.type) ? 'inline' : 'attachment', file.name);
  if (files.redirect && files.storage.presign) {
    const seconds = Math.max(1, Math.min(300, file.expires - Math.floor(Date.now() / 1000)));
    const url = await files.storage.presign(key, { expiresIn: seconds, contentType: file.type, contentDisposition: disposition });
    return reply.code(302).header('location', url).header('cache-control', 'no-store').send();
  }
  const stat = await files.storage.stat(key);
  if (!stat) throw notFound();
  const etag = `"${key.slice(key.lastIndexOf('/') + 1)}"`;
  reply
    .header('content-type', file.type)
    .header('etag', etag)
    .header('accept-ranges', 'bytes')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "sandbox; default-src 'none'")
    .header('content-disposition', disposition)
    .header('cache-control', 'private, max-age=3600');
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  const range = rangeOf(request.headers.range, stat.size);
  if (range === null) return reply.code(416).header('content-range', `bytes */${stat.size}`).send();
  if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${stat.size}`);
  reply.header('content-length', range ? range.end - range.start + 1 : stat.size);
  if (request.method === 'HEAD') return reply.send();
  const bytes = await files.storage.read(key, range);
  if (!bytes) throw notFound();
  return reply.send(bytes);
}

/** Mounts the download route under the router's prefix (the links the router's records render point here). */
export function mountDownloads(api: FastifyInstance, files: FilesRuntime): void {
  api.route({
    method: ['GET', 'HEAD'],
    url: `${DOWNLOAD_PATH}*`,
    schema: { hide: true },
    handler: (request, reply) => download(request, reply, files),
  });
}
