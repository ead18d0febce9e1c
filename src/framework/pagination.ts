/**
 * Page-number pagination: the `{count, next, previous, results}` envelope,
 * with absolute links that keep every parameter of the request.
 */
import type { FastifyRequest } from 'fastify';
import { invalidPage } from './query.js';

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** The request's own absolute URL (scheme and host from X-Forwarded-* only behind a trusted proxy). */
export function absoluteUrl(request: FastifyRequest, path = request.url): URL {
  return new URL(path, `${request.protocol}://${request.host}`);
}

/** 404 `Invalid page.` past the last page; page 1 of nothing is a valid, empty page. */
export function assertPageExists(page: number, pageSize: number, count: number): void {
  if (page > 1 && (page - 1) * pageSize >= count) throw invalidPage();
}

function linkToPage(request: FastifyRequest, page: number): string {
  const url = absoluteUrl(request);
  if (page === 1) url.searchParams.delete('page');
  else url.searchParams.set('page', String(page));
  return url.toString();
}

export function paginate<T>(request: FastifyRequest, page: number, pageSize: number, count: number, results: T[]): Page<T> {
  return {
    count,
    next: page * pageSize < count ? linkToPage(request, page + 1) : null,
    previous: page > 1 ? linkToPage(request, page - 1) : null,
    results,
  };
}
