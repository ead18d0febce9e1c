/**
 * Page-number pagination: the `{count, next, previous, results}` envelope,
 * with absolute links that keep every parameter of the request.
 */
import type { FastifyRequest } from 'fastify';
import { absoluteUrl } from '../base/hosts.js';
import type { CountMode } from '../../core/list-query.js';

export interface Page<T> {
  /** null when the client preferred no count (`Prefer: count=none`). */
  count: number | null;
  next: string | null;
  previous: string | null;
  results: T[];
}

/**
 * The count the client prefers (`Prefer: count=estimated|none`, RFC 7240),
 * if the collection allows it; exact otherwise.
 */
export function preferredCount(request: FastifyRequest, allowed: readonly CountMode[]): CountMode {
  const prefer = request.headers.prefer;
  const match = typeof prefer === 'string' ? /(?:^|[,;]\s*)count=(exact|estimated|none)\b/i.exec(prefer) : null;
  const mode = match?.[1]?.toLowerCase() as CountMode | undefined;
  return mode && allowed.includes(mode) ? mode : 'exact';
}

function linkToPage(request: FastifyRequest, page: number): string {
  const url = absoluteUrl(request);
  if (page === 1) url.searchParams.delete('page');
  else url.searchParams.set('page', String(page));
  return url.toString();
}

export function paginate<T>(request: FastifyRequest, page: number, count: number | null, hasNext: boolean, results: T[]): Page<T> {
  return {
    count,
    next: hasNext ? linkToPage(request, page + 1) : null,
    previous: page > 1 ? linkToPage(request, page - 1) : null,
    results,
  };
}
