/**
 * Page-number and limit/offset pagination: the count a client may prefer, the window `limit` and
 * `offset` choose (and the 400s for bad ones), and the page's links, which keep every other
 * parameter of the request. Cursor pages have test/unit/cursor.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { paginate, preferredCount } from '../../src/framework/actions/pagination.js';
import { parseWindow, windowPage, type Window } from '../../src/framework/actions/limit-offset.js';
import { ApiError } from '../../src/framework/base/errors.js';
import type { CountMode } from '../../src/core/list-query.js';

/** What pagination reads of a request: its URL, the scheme and host it was addressed to, its headers. */
const request = (url: string, headers: Record<string, string> = {}, host = 'api.example.com'): FastifyRequest =>
  ({ url, headers, protocol: 'https', host, socket: { localAddress: '10.0.0.5', localPort: 8000 } }) as unknown as FastifyRequest;

/** A link's path and its parameters as the server reads them (decoded), in the order the link has them. */
function target(link: string | null): string | null {
  if (link === null) return null;
  const url = new URL(link);
  expect(url.origin).toBe('https://api.example.com');
  const parameters = [...url.searchParams].map(([name, value]) => `${name}=${value}`);
  return parameters.length === 0 ? url.pathname : `${url.pathname}?${parameters.join('&')}`;
}

const links = (page: { next: string | null; previous: string | null }) => ({ next: target(page.next), previous: target(page.previous) });

describe('page-number links', () => {
  it.each([
    ['the first page, with more', '/api/books/', 1, true, { next: '/api/books/?page=2', previous: null }],
    ['the only page', '/api/books/', 1, false, { next: null, previous: null }],
    ['page 2, with more: its previous is the bare URL', '/api/books/?page=2', 2, true, { next: '/api/books/?page=3', previous: '/api/books/' }],
    ['the last page', '/api/books/?page=3', 3, false, { next: null, previous: '/api/books/?page=2' }],
    ['a page with its filters, ordering and size', '/api/books/?rating__gte=3&page=4&ordering=-title&page_size=5', 4, true, {
      next: '/api/books/?rating__gte=3&page=5&ordering=-title&page_size=5',
      previous: '/api/books/?rating__gte=3&page=3&ordering=-title&page_size=5',
    }],
    ['a page size over the maximum, kept as sent (the server caps it again)', '/api/books/?page_size=100000', 1, true, { next: '/api/books/?page_size=100000&page=2', previous: null }],
    ['a search with spaces and non-ASCII text', '/api/books/?search=h%C3%A9l%C3%A8ne%20dune', 1, true, { next: '/api/books/?search=hélène dune&page=2', previous: null }],
    ['the largest page a query may name', `/api/books/?page=${Number.MAX_SAFE_INTEGER}`, Number.MAX_SAFE_INTEGER, false, {
      next: null,
      previous: `/api/books/?page=${Number.MAX_SAFE_INTEGER - 1}`,
    }],
  ])('%s', (_, url, page, hasNext, expected) => {
    expect(links(paginate(request(url), page, 42, hasNext, []))).toEqual(expected);
  });

  it('carries the count (null when the client preferred none) and the results as given', () => {
    expect(paginate(request('/api/books/'), 1, null, false, [{ id: 1 }])).toEqual({ count: null, next: null, previous: null, results: [{ id: 1 }] });
    expect(paginate(request('/api/books/'), 1, 0, false, [])).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('writes one page parameter however many the request sent (the last one is the page served)', () => {
    expect(target(paginate(request('/api/books/?page=2&page=9&title=a'), 9, 1, true, []).next)).toBe('/api/books/?page=10&title=a');
  });

  it('addresses links to the host the request named, or to the server when it named none (HTTP/1.0)', () => {
    expect(paginate(request('/api/books/', {}, 'API.Example.com:8443'), 1, 1, true, []).next).toBe('https://api.example.com:8443/api/books/?page=2');
    expect(paginate(request('/api/books/', {}, ''), 1, 1, true, []).next).toBe('https://10.0.0.5:8000/api/books/?page=2');
  });
});

describe('Prefer: count=', () => {
  const all: readonly CountMode[] = ['exact', 'estimated', 'none'];
  it.each([
    [undefined, all, 'exact'],
    ['count=none', all, 'none'],
    ['count=estimated', all, 'estimated'],
    ['COUNT=NONE', all, 'none'],
    ['return=minimal, count=none', all, 'none'],
    ['return=minimal;count=estimated', all, 'estimated'],
    ['count=none; foo=bar', all, 'none'],
    ['count=none', ['exact', 'estimated'], 'exact'],
    ['count=estimated', ['exact'], 'exact'],
    ['count=planned', all, 'exact'],
    ['count=nonesuch', all, 'exact'],
    ['xcount=none', all, 'exact'],
    ['count="none"', all, 'exact'],
    ['', all, 'exact'],
  ] as const)('%j with %j allowed is %s', (prefer, allowed, mode) => {
    expect(preferredCount(request('/api/books/', prefer === undefined ? {} : { prefer }), allowed)).toBe(mode);
  });
});

describe('limit/offset', () => {
  const rules = { pageSize: 20, maxPageSize: 100 };
  const window = (query: Record<string, string>): Window => parseWindow(new Map(Object.entries(query)), rules);

  /** The details of the 400 `query` is refused with. */
  function refusal(query: Record<string, string>) {
    try {
      window(query);
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      const refused = error as ApiError;
      expect([refused.status, refused.code, refused.message]).toEqual([400, 'validation_failed', 'Invalid query parameters.']);
      return refused.details;
    }
    throw new Error('The window was accepted.');
  }

  it.each([
    [{}, { limit: 20, offset: 0 }],
    [{ limit: '5' }, { limit: 5, offset: 0 }],
    [{ limit: '5', offset: '10' }, { limit: 5, offset: 10 }],
    [{ limit: '100' }, { limit: 100, offset: 0 }],
    [{ limit: '101' }, { limit: 100, offset: 0 }],
    [{ limit: '9999999999999999' }, { limit: 100, offset: 0 }],
    [{ limit: '99999999999999999' }, { limit: 100, offset: 0 }],
    [{ limit: '9'.repeat(40) }, { limit: 100, offset: 0 }],
    [{ offset: '0' }, { limit: 20, offset: 0 }],
    [{ offset: String(Number.MAX_SAFE_INTEGER) }, { limit: 20, offset: Number.MAX_SAFE_INTEGER }],
  ])('reads %j as %j (a limit over the maximum is the maximum)', (query, expected) => {
    expect(window(query)).toEqual(expected);
  });

  it.each(['0', '-1', '1.5', '1e3', 'ten', '', ' 5', '0x10', '05'])('refuses limit=%j', (limit) => {
    expect(refusal({ limit })).toEqual({ limit: ['A positive integer is required.'] });
  });

  it.each(['-1', '1.5', 'ten', '', '9007199254740992', '99999999999999999', '+3'])('refuses offset=%j', (offset) => {
    expect(refusal({ offset })).toEqual({ offset: ['A non-negative integer is required.'] });
  });

  it('names both when both are bad', () => {
    expect(Object.keys(refusal({ limit: '0', offset: '-5' }) ?? {}).sort()).toEqual(['limit', 'offset']);
  });

  it.each([
    ['the first window, with more', '/api/books/', { limit: 20, offset: 0 }, true, { next: '/api/books/?limit=20&offset=20', previous: null }],
    ['a middle window', '/api/books/?limit=20&offset=40', { limit: 20, offset: 40 }, true, {
      next: '/api/books/?limit=20&offset=60',
      previous: '/api/books/?limit=20&offset=20',
    }],
    ['a window less than a limit in: its previous starts at 0', '/api/books/?offset=5', { limit: 20, offset: 5 }, true, {
      next: '/api/books/?offset=25&limit=20',
      previous: '/api/books/?limit=20',
    }],
    ['the last window', '/api/books/?limit=20&offset=20', { limit: 20, offset: 20 }, false, { next: null, previous: '/api/books/?limit=20' }],
    ['a limit over the maximum: the links carry the limit served', '/api/books/?title=a&limit=5000', { limit: 100, offset: 0 }, true, {
      next: '/api/books/?title=a&limit=100&offset=100',
      previous: null,
    }],
    ['a window far past the end', '/api/books/?offset=1000000', { limit: 20, offset: 1_000_000 }, false, { next: null, previous: '/api/books/?offset=999980&limit=20' }],
  ])('%s', (_, url, served, hasMore, expected) => {
    expect(links(windowPage(request(url), served, 7, hasMore, []))).toEqual(expected);
  });
});
