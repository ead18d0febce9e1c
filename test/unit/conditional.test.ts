/**
 * Conditional requests (RFC 9110 §13): the ETags records and pages carry, when If-None-Match makes a
 * read a 304, and when If-Match refuses a write with 412.
 */
import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { assertMatches, notModified, pageEtag, strongEtag, weakEtag } from '../../src/framework/stages/conditional.js';
import { ApiError } from '../../src/framework/base/errors.js';

/** What the stage reads of a request: its method, its headers, and for a page its viewer. */
const request = (method: string, headers: Record<string, string> = {}, viewer: Partial<Pick<FastifyRequest, 'user' | 'csrfToken'>> = {}): FastifyRequest =>
  ({ method, headers, user: null, csrfToken: undefined, ...viewer }) as unknown as FastifyRequest;

const record = strongEtag('{"id":1,"title":"Dune"}');
const other = strongEtag('{"id":1,"title":"Dune Messiah"}');
const page = weakEtag('[{"id":1,"title":"Dune"}]');

/** Whether a write carrying `ifMatch` goes ahead against a record whose ETag is `current` (false: refused with 412). */
function writes(ifMatch: string | undefined, current = record): boolean {
  try {
    assertMatches(request('PATCH', ifMatch === undefined ? {} : { 'if-match': ifMatch }), () => current);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const refused = error as ApiError;
    expect([refused.status, refused.code, refused.message]).toEqual([412, 'precondition_failed', 'The record has changed since it was read (If-Match does not match).']);
    return false;
  }
}

describe('ETags', () => {
  it('are a quoted opaque tag of the JSON text: the same text, the same tag; other text, another', () => {
    expect(record).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(strongEtag('{"id":1,"title":"Dune"}')).toBe(record);
    expect(other).not.toBe(record);
    expect(strongEtag('')).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
  });

  it("are weak for list pages: W/ before the same opaque tag a record's would have", () => {
    expect(weakEtag('{"id":1,"title":"Dune"}')).toBe(`W/${record}`);
    expect(page).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
  });
});

describe('If-None-Match on a read (304)', () => {
  it.each([
    ['the same tag', record, true],
    ['its weak form (weak comparison)', `W/${record}`, true],
    ['another tag', other, false],
    ['*', '*', true],
    ['a list holding the tag', `${other}, ${record}`, true],
    ['a list without it', `${other}, W/${other}`, false],
    ['a list without spaces, with empty members', `,,${other},${record},`, true],
    ['the tag without its quotes', record.slice(1, -1), false],
    ['the tag in other case (tags are case-sensitive)', record.toUpperCase(), false],
    ['a quoted *', '"*"', false],
    ['W/ alone', 'W/', false],
    ['an empty header', '', false],
    ['commas only', ' , ,', false],
    ['a tag of the tag', `"${record}"`, false],
  ])('%s: %s', (_, header, current) => {
    expect(notModified(request('GET', { 'if-none-match': header }), record)).toBe(current);
    expect(notModified(request('HEAD', { 'if-none-match': header }), record)).toBe(current);
  });

  it("matches a list page's weak tag by its strong form, or weak", () => {
    const opaque = page.slice(2);
    expect(notModified(request('GET', { 'if-none-match': opaque }), page)).toBe(true);
    expect(notModified(request('GET', { 'if-none-match': page }), page)).toBe(true);
  });

  it('is not a 304 without the header, nor on a write', () => {
    expect(notModified(request('GET'), record)).toBe(false);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) expect(notModified(request(method, { 'if-none-match': record }), record)).toBe(false);
    expect(notModified(request('PATCH', { 'if-none-match': '*' }), record)).toBe(false);
  });

  it('ignores If-Modified-Since: no answer carries a Last-Modified (RFC 9110 §13.1.3), and If-None-Match decides when both come', () => {
    const future = new Date(Date.now() + 86_400_000).toUTCString();
    expect(notModified(request('GET', { 'if-modified-since': future }), record)).toBe(false);
    expect(notModified(request('GET', { 'if-modified-since': future, 'if-none-match': other }), record)).toBe(false);
    expect(notModified(request('GET', { 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT', 'if-none-match': record }), record)).toBe(true);
  });
});

describe('If-Match on a write (412)', () => {
  it.each([
    ['the current tag', record, true],
    ['*', '*', true],
    ['a list holding the current tag', `${other} , ${record}`, true],
    ['a stale tag', other, false],
    ["the current tag's weak form (strong comparison)", `W/${record}`, false],
    ['a list of weak forms only', `W/${other}, W/${record}`, false],
    ['the tag without its quotes', record.slice(1, -1), false],
    ['a quoted *', '"*"', false],
    ['an empty header', '', false],
    ['commas only', ',,', false],
    ['garbage', 'not an etag at all; "', false],
  ])('%s: %s', (_, header, proceeds) => {
    expect(writes(header)).toBe(proceeds);
  });

  it('lets a write without If-Match go ahead, never rendering the record to compute a tag', () => {
    let computed = 0;
    assertMatches(request('PATCH'), () => {
      computed += 1;
      return record;
    });
    expect(computed).toBe(0);
    expect(writes(undefined, other)).toBe(true);
  });

  it("refuses a list page's weak tag, which names no record", () => {
    expect(writes(page, page)).toBe(false);
  });
});

describe("a browsable page's ETag", () => {
  const alice = { id: 7, username: 'alice' } as FastifyRequest['user'];
  const bob = { id: 8, username: 'bob' } as FastifyRequest['user'];
  const pageFor = (viewer: Partial<Pick<FastifyRequest, 'user' | 'csrfToken'>>) => pageEtag(record, request('GET', {}, viewer));

  it("is weak, and differs from the data's tag", () => {
    expect(pageFor({})).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
    expect(pageFor({}).slice(2)).not.toBe(record);
  });

  it('is the same for the same viewer and data, and differs with the viewer, their session or the data', () => {
    expect(pageFor({ user: alice, csrfToken: 'c1' })).toBe(pageFor({ user: alice, csrfToken: 'c1' }));
    const tags = [
      pageFor({}),
      pageFor({ user: alice, csrfToken: 'c1' }),
      pageFor({ user: alice, csrfToken: 'c2' }),
      pageFor({ user: alice }),
      pageFor({ user: bob, csrfToken: 'c1' }),
      pageEtag(other, request('GET', {}, { user: alice, csrfToken: 'c1' })),
    ];
    expect(new Set(tags).size).toBe(tags.length);
  });

  it("does not make the JSON's tag a 304 of the page, and If-Match refuses it", () => {
    const tag = pageFor({ user: alice });
    expect(notModified(request('GET', { 'if-none-match': record }), tag)).toBe(false);
    expect(notModified(request('GET', { 'if-none-match': tag }), tag)).toBe(true);
    expect(writes(tag)).toBe(false);
  });
});
