/**
 * Content negotiation: which representation the client accepts, among the
 * ones the route can render (the first is the default, for a missing
 * Accept or one that takes anything). `format=<name>` in the query string
 * wins over the Accept header (a browser asking for JSON). Serving another
 * type is one representation plus its renderer: the API's own
 * (declare/renderer.ts), or a collection's `renderers`.
 */
import Negotiator from 'negotiator';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../base/errors.js';
import { queryParameters } from '../base/query-string.js';
import type { Representation } from '../declare/renderer.js';

export type MediaType = string;

export { API_REPRESENTATIONS } from '../declare/renderer.js';

/** What to render an error as: the negotiated type, or JSON when negotiation itself fails. */
export function preferredMediaType(request: FastifyRequest, available: readonly Representation[]): MediaType {
  try {
    return negotiate(request, available, queryParameters(request.url).get('format'));
  } catch {
    return 'application/json';
  }
}

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

export function negotiate(request: FastifyRequest, available: readonly Representation[], format: string | undefined): MediaType {
  const types = available.map(({ mediaType }) => mediaType);
  if (format !== undefined) {
    const forced = available.find((representation) => representation.format === format);
    if (forced) return forced.mediaType;
    const named = available.flatMap((representation) => (representation.format ? [`format=${representation.format}`] : []));
    throw notAcceptable(`Unknown format "${format}". Use ${named.join(' or ')}.`);
  }
  const accept = request.headers.accept?.trim();
  if (!accept) return types[0]!;
  const chosen = new Negotiator({ headers: { accept: weightsOnly(accept) } }).mediaType(types);
  if (!chosen) throw notAcceptable(`Could not satisfy the Accept header. Available: ${types.join(', ')}.`);
  // The negotiator answers in the case the client wrote; the route's own spelling is the one rendered.
  return types.find((type) => type.toLowerCase() === chosen.toLowerCase()) ?? chosen;
}
