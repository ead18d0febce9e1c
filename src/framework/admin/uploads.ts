/**
 * The admin's forms with files: a `multipart/form-data` post (bounded by FILES_MAX_BODY_BYTES, the
 * parser's body limit, and FILES_MAX_PARTS) read into its fields and its files, then sent on to the
 * collection's API as a multipart body of its own, so the API's upload path (sniffing, limits,
 * storage) judges each file as for any client.
 */
import busboy from 'busboy';
import type { FastifyRequest } from 'fastify';

export interface AdminUpload {
  readonly name: string;
  readonly filename: string;
  readonly type: string;
  readonly data: Buffer;
}

export interface Posted {
  readonly form: URLSearchParams;
  readonly files: readonly AdminUpload[];
}

/** A part's text this long is more than any form field the admin sends (the API bounds its own fields too). */
const MAX_FIELD_BYTES = 1024 * 1024;

/** The posted form: urlencoded text, or a multipart body; a malformed one reads as empty (and fails its CSRF check). */
export async function readPosted(request: FastifyRequest, maxParts: number): Promise<Posted> {
  if (typeof request.body === 'string') return { form: new URLSearchParams(request.body), files: [] };
  if (!Buffer.isBuffer(request.body)) return { form: new URLSearchParams(), files: [] };
  const body = request.body;
  return new Promise((resolve) => {
    const form = new URLSearchParams();
    const files: AdminUpload[] = [];
    let parser;
    try {
      parser = busboy({ headers: request.headers, limits: { parts: maxParts, fieldSize: MAX_FIELD_BYTES } });
    } catch {
      resolve({ form: new URLSearchParams(), files: [] });
      return;
    }
    parser.on('field', (name, value) => form.append(name, value));
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const data = Buffer.concat(chunks);
        // A file input left empty sends an empty part without a name: not an upload (the file stays).
        if (info.filename || data.length > 0) files.push({ name, filename: info.filename || name, type: info.mimeType, data });
      });
    });
    parser.on('error', () => resolve({ form: new URLSearchParams(), files: [] }));
    parser.on('partsLimit', () => resolve({ form: new URLSearchParams(), files: [] }));
    parser.on('close', () => resolve({ form, files }));
    parser.end(body);
  });
}

/** `form` and `files` as one multipart body, with its Content-Type (its boundary). */
export async function multipartOf(form: URLSearchParams, files: readonly AdminUpload[]): Promise<{ body: Buffer; contentType: string }> {
  const data = new FormData();
  for (const [name, value] of form) data.append(name, value);
  for (const file of files) data.append(file.name, new Blob([new Uint8Array(file.data)], { type: file.type }), file.filename);
  const encoded = new Response(data);
  return { body: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}
