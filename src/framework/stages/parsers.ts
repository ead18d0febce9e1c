/**
 * Request parsing. Bodies arrive as raw bytes (see router.ts) and are parsed
 * here, after authentication and permissions, in the pipeline's order: JSON (then taken out of
 * the collection's envelope when it has one), or an HTML form's fields (DRF's JSONParser and
 * FormParser), within the same limits.
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { ApiError, emptyDetails, parseError, throwIfInvalid, validationFailed } from '../base/errors.js';
import { assertCleanText, type FieldError } from '../../core/fields.js';
import type { Envelope } from '../declare/collection.js';
import { isJsonObject } from '../../core/json.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

const unsupportedMediaType = (type: string, accepted = 'application/json'): ApiError =>
  new ApiError(415, 'unsupported_media_type', `Unsupported media type "${type}" in request. Send ${accepted}.`);

/** The media types a record's body may come in: JSON, or an HTML form's fields. */
export const BODY_MEDIA_TYPES = ['application/json', 'application/x-www-form-urlencoded'] as const;
const FORM = BODY_MEDIA_TYPES[1];

/** Whether a Content-Type names an HTML form's fields, in UTF-8 (a form's charset is the page's: ours is UTF-8). */
function isForm(contentType: string): boolean {
  const [type = '', ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase());
  return type === FORM && parameters.every((parameter) => !parameter.startsWith('charset=') || /^charset="?utf-8"?$/.test(parameter));
}

/** Whether a Content-Type names JSON in UTF-8 (the only charset JSON allows). */
function isJson(contentType: string): boolean {
  // The bare type, as most clients send it, needs no splitting into parts.
  if (contentType === 'application/json') return true;
  const [type = '', ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return false;
  return parameters.every((parameter) => !parameter.startsWith('charset=') || /^charset="?utf-8"?$/.test(parameter));
}

/** The decoders of the content codings a body may come in, each bounded by `maxOutputLength`. */
const DECODERS: Readonly<Record<string, (bytes: Buffer, options: { maxOutputLength: number }) => Buffer>> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/**
 * The bytes a request carried (empty when it carried none), decoded where its Content-Encoding is
 * gzip, deflate or br: decoded bytes past the body limit (MAX_BODY_BYTES) stop the decoder there,
 * 413, so a small bomb never becomes a large buffer; bytes that are no such coding, 400; any other
 * coding (or several), 415.
 */
export function rawBody(request: FastifyRequest): Buffer {
  const bytes = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const header = request.headers['content-encoding'];
  const coding = header?.trim().toLowerCase();
  if (coding === undefined || coding === '' || coding === 'identity') return bytes;
  const decode = Object.hasOwn(DECODERS, coding) ? DECODERS[coding] : undefined;
  if (!decode) throw new ApiError(415, 'unsupported_media_type', `Unsupported Content-Encoding "${header}" in request. Send gzip, deflate, br or none.`);
  const limit = request.routeOptions.bodyLimit ?? bytes.length;
  try {
    return decode(bytes, { maxOutputLength: limit });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ApiError(413, 'payload_too_large', `The decoded body is larger than ${limit} bytes.`);
    }
    throw parseError(`The body is not valid ${coding}.`);
  }
}

/** The request's body as JSON, or 415 / 400 parse_error. */
export function parseJsonBody(request: FastifyRequest): unknown {
  const bytes = rawBody(request);
  const contentType = request.headers['content-type'];
  if (bytes.length === 0 && contentType === undefined) throw parseError('A JSON body is required.');
  if (contentType === undefined || !isJson(contentType)) throw unsupportedMediaType(contentType ?? '');
  return decodeJson(bytes);
}

/**
 * A record's body that is text: JSON taken out of the envelope, or an HTML form's fields read by
 * `fromForm` (the serializer's, by each field's kind; a form is one record, never in an envelope).
 * A multipart body is parsers/record-body.ts's.
 */
export function parseFormOrJson(request: FastifyRequest, envelope: Envelope | undefined, fromForm: (form: URLSearchParams) => unknown): unknown {
  const contentType = request.headers['content-type'];
  if (contentType !== undefined && isForm(contentType)) return fromForm(parseForm(rawBody(request)));
  if (contentType !== undefined && !isJson(contentType)) throw unsupportedMediaType(contentType, `application/json or ${FORM}`);
  return unwrapBody(envelope, parseJsonBody(request));
}

/** A form's bytes → its fields: UTF-8, percent-decoded; NUL or a lone surrogate in a value is 400 naming its key. */
function parseForm(bytes: Buffer): URLSearchParams {
  return checkedForm(new URLSearchParams(utf8Text(bytes)));
}

/** A form's fields (urlencoded, or a multipart body's), refused with 400 naming the key where one holds NUL or a lone surrogate. */
export function checkedForm(form: URLSearchParams): URLSearchParams {
  const details = emptyDetails();
  for (const [key, value] of form) {
    const messages = uncleanText(key) ?? uncleanText(value);
    if (messages) details[key] = messages;
  }
  throwIfInvalid(details);
  return form;
}

function utf8Text(bytes: Buffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw parseError('The body is not valid UTF-8.');
  }
}

/** UTF-8 bytes → a JSON value; invalid UTF-8 or JSON throws parse_error with the parser's reason. */
export function decodeJson(bytes: Buffer): unknown {
  const text = utf8Text(bytes);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw parseError(`JSON parse error: ${(error as Error).message}`);
  }
  if (UNCLEAN_ESCAPE.test(text)) assertCleanStrings(body);
  return body;
}

/** JSON text holds NUL and lone surrogates only as `\u` escapes: a body without one needs no walk. */
const UNCLEAN_ESCAPE = /\\u(?:0000|d[89a-f])/i;

/**
 * NUL (which PostgreSQL text cannot hold) or a lone surrogate anywhere in a body → 400 naming the
 * field, for every JSON body at once (records, credentials, tokens), before any of it is used.
 */
function assertCleanStrings(body: unknown): void {
  const details = emptyDetails();
  for (const [name, value] of topLevelFields(body)) {
    const messages = uncleanText(value);
    if (messages) details[name] = messages;
  }
  throwIfInvalid(details);
}

/** A body's fields by the names its errors use: `<field>`, or `<index>.<field>` in an array (as bulk creates report). */
function* topLevelFields(body: unknown): Generator<[string, unknown]> {
  if (typeof body !== 'object' || body === null) {
    yield ['non_field_errors', body];
    return;
  }
  if (!Array.isArray(body)) {
    yield* Object.entries(body);
    return;
  }
  for (const [index, item] of body.entries()) {
    if (isJsonObject(item)) {
      for (const [name, value] of Object.entries(item)) yield [`${index}.${name}`, value];
    } else yield [String(index), item];
  }
}

/** What is wrong with the first unclean string anywhere in `value`; walked without recursion (bodies may nest deeply). */
function uncleanText(value: unknown): string[] | undefined {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      try {
        assertCleanText(next);
      } catch (error) {
        return (error as FieldError).messages;
      }
    } else if (typeof next === 'object' && next !== null) {
      for (const member of Object.values(next)) pending.push(member);
    }
  }
  return undefined;
}

/**
 * The body inside its envelope: a record under `record`, or several (a bulk create) under `list`.
 * A body without it is a 400 naming the key, as a missing field is.
 */
export function unwrapBody(envelope: Envelope | undefined, body: unknown): unknown {
  if (!envelope || body === undefined) return body;
  if (isJsonObject(body) && Array.isArray(body[envelope.list])) return body[envelope.list];
  if (isJsonObject(body) && Object.hasOwn(body, envelope.record)) return body[envelope.record];
  throw validationFailed({ [envelope.record]: ['This field is required.'] });
}
