/**
 * Limit/offset pagination (DRF's LimitOffsetPagination): `?limit=&offset=` choose the records,
 * the page is `{count, next, previous, results}` with links that move the offset by the limit.
 * A page past the end is empty, with the count (no 404: an offset names no page that could be missing).
 */
import type { FastifyRequest } from 'fastify';
import { emptyDetails, throwIfInvalid } from '../base/errors.js';
import { absoluteUrl } from '../base/hosts.js';
import type { Page } from './pagination.js';
import type { QueryRules } from '../declare/collection.js';

export const LIMIT_OFFSET_PARAMETERS = ['limit', 'offset'] as const;

/** The parameters that choose a page, of every pagination class. */
export const PAGING_PARAMETERS: readonly string[] = ['page', 'page_size', 'cursor', ...LIMIT_OFFSET_PARAMETERS];

export interface Window {
  readonly limit: number;
  readonly offset: number;
}

/** `limit` (default the page size, clamped to the largest) and `offset` (default 0); a 400 naming the bad one. */
export function parseWindow(parameters: ReadonlyMap<string, string>, rules: Pick<QueryRules, 'pageSize' | 'maxPageSize'>): Window {
  const details = emptyDetails();
  const limit = parameters.get('limit') ?? String(rules.pageSize);
  const offset = parameters.get('offset') ?? '0';
  // Any positive integer, however long, is clamped (as page_size is): only the offset must be one the database can take.
  if (!/^[1-9]\d*$/.test(limit)) details.limit = ['A positive integer is required.'];
  if (!/^\d{1,16}$/.test(offset) || !Number.isSafeInteger(Number(offset))) details.offset = ['A non-negative integer is required.'];
  throwIfInvalid(details, 'Invalid query parameters.');
  return { limit: Math.min(Number(limit), rules.maxPageSize), offset: Number(offset) };
}

function linkTo(request: FastifyRequest, limit: number, offset: number): string {
  const url = absoluteUrl(request);
  url.searchParams.set('limit', String(limit));
  if (offset === 0) url.searchParams.delete('offset');
  else url.searchParams.set('offset', String(offset));
  return url.toString();
}

export function windowPage<T>(request: FastifyRequest, { limit, offset }: Window, count: number | null, hasMore: boolean, results: T[]): Page<T> {
  return {
    count,
    next: hasMore ? linkTo(request, limit, offset + limit) : null,
    previous: offset > 0 ? linkTo(request, limit, Math.max(offset - limit, 0)) : null,
    results,
  };
}
