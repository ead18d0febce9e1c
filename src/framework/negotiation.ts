/**
 * Content negotiation: which representation the client accepts. `format=json`
 * in the query string wins over the Accept header (a browser asking for JSON).
 */
import Negotiator from 'negotiator';
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import { queryParameters } from './query.js';

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

export function negotiate(request: FastifyRequest, available: readonly MediaType[], format: string | undefined): MediaType {
  if (format !== undefined) {
    if (format === 'json') return 'application/json';
    throw new ApiError(404, 'not_found', `Unknown format "${format}". Use format=json.`);
  }
  if (!request.headers.accept) return available[0]!;
  const chosen = new Negotiator(request).mediaType([...available]) as MediaType | undefined;
  if (!chosen) {
    throw new ApiError(406, 'not_acceptable', `Could not satisfy the Accept header. Available: ${available.join(', ')}.`);
  }
  return chosen;
}
