/**
 * Content negotiation: which representation the client accepts, among the
 * media types the API can render (the first is the default, for a missing
 * Accept or one that takes anything). `format=<name>` in the query string
 * wins over the Accept header (a browser asking for JSON). Serving another
 * type is one entry in the API's media types plus its renderer.
 */
import Negotiator from 'negotiator';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../base/errors.js';
import { queryParameters } from '../base/query-string.js';

export type MediaType = 'application/json' | 'text/html';

// The API's representations: JSON first (for any type, or no Accept), the browsable page for browsers.
export const API_MEDIA_TYPES: readonly MediaType[] = ['application/json', 'text/html'];

/** What to render an error as: the negotiated type, or JSON when negotiation itself fails. */
export function preferredMediaType(request: FastifyRequest, available: readonly MediaType[]): MediaType {
  try {
    return negotiate(request, available, queryParameters(request.url).get('format'));
  } catch {
    return 'application/json';
  }
}

/** The `format=` name of each media type. */
const FORMATS: Readonly<Record<MediaType, string>> = { 'application/json': 'json', 'text/html': 'html' };

const notAcceptable = (message: string): ApiError => new ApiError(406, 'not_acceptable', message);

/**
 * The Accept header with every media-range parameter but `q` dropped: the
 * negotiator would otherwise refuse `application/json; charset=utf-8`, and no
 * parameter changes what we render (JSON is always UTF-8).
 */
function weightsOnly(accept: string): string {
  return accept
    .split(',')
    .map((range) => {
      const [type = '', ...parameters] = range.split(';').map((part) => part.trim());
      const q = parameters.find((parameter) => /^q\s*=/i.test(parameter));
      return q ? `${type};${q}` : type;
    })
    .join(',');
}

export function negotiate(request: FastifyRequest, available: readonly MediaType[], format: string | undefined): MediaType {
  if (format !== undefined) {
    const forced = available.find((type) => FORMATS[type] === format);
    if (forced) return forced;
    throw notAcceptable(`Unknown format "${format}". Use ${available.map((type) => `format=${FORMATS[type]}`).join(' or ')}.`);
  }
  const accept = request.headers.accept?.trim();
  if (!accept) return available[0]!;
  const chosen = new Negotiator({ headers: { accept: weightsOnly(accept) } }).mediaType([...available]) as MediaType | undefined;
  if (!chosen) throw notAcceptable(`Could not satisfy the Accept header. Available: ${available.join(', ')}.`);
  return chosen;
}
