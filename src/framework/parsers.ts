/**
 * Request parsing. Bodies arrive as raw bytes (see router.ts) and are parsed
 * here, after authentication and permissions, in the seed's stage order.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError, parseError } from './errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export const unsupportedMediaType = (type: string): ApiError =>
  new ApiError(415, 'unsupported_media_type', `Unsupported media type "${type}" in request. Send application/json.`);

/** Whether a Content-Type names JSON in UTF-8 (the only charset JSON allows). */
function isJson(contentType: string): boolean {
  const [type = '', ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return false;
  return parameters.every((parameter) => !parameter.startsWith('charset=') || /^charset="?utf-8"?$/.test(parameter));
}

/** The bytes a request carried (empty when it carried none). */
export const rawBody = (request: FastifyRequest): Buffer => (Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));

/** The request's body as JSON, or 415 / 400 parse_error. */
export function parseJsonBody(request: FastifyRequest): unknown {
  const bytes = rawBody(request);
  const contentType = request.headers['content-type'];
  if (bytes.length === 0 && contentType === undefined) throw parseError('A JSON body is required.');
  if (contentType === undefined || !isJson(contentType)) throw unsupportedMediaType(contentType ?? '');
  return decodeJson(bytes);
}

/** UTF-8 bytes → a JSON value; invalid UTF-8 or JSON throws parse_error with the parser's reason. */
export function decodeJson(bytes: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw parseError('The body is not valid UTF-8.');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw parseError(`JSON parse error: ${(error as Error).message}`);
  }
}
