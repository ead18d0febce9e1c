import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { API_REPRESENTATIONS, negotiate, preferredMediaType, type MediaType } from '../../src/framework/stages/negotiation.js';
import type { Representation } from '../../src/framework/declare/renderer.js';
import { ApiError } from '../../src/framework/base/errors.js';

/** What negotiation reads of a request: its Accept header, and its URL for `format=`. */
const request = (accept?: string, url = '/api/books/'): FastifyRequest =>
  ({ url, headers: accept === undefined ? {} : { accept } }) as unknown as FastifyRequest;

const chosen = (accept: string | undefined, format?: string, available: readonly Representation[] = API_REPRESENTATIONS): MediaType =>
  negotiate(request(accept), available, format);

/** The 406 negotiation answers with. */
function refusal(accept: string | undefined, format?: string, available: readonly Representation[] = API_REPRESENTATIONS): ApiError {
  try {
    chosen(accept, format, available);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const refused = error as ApiError;
    expect([refused.status, refused.code]).toEqual([406, 'not_acceptable']);
    return refused;
  }
  throw new Error('Negotiation succeeded.');
}

describe('negotiate', () => {
  it('renders JSON, the first media type, without an Accept header or with an empty one', () => {
    expect(chosen(undefined)).toBe('application/json');
    expect(chosen('  ')).toBe('application/json');
  });

  it('renders JSON for */*, and the first type a wildcard matches', () => {
    expect(chosen('*/*')).toBe('application/json');
    expect(chosen('text/*')).toBe('text/html');
    expect(chosen('application/*')).toBe('application/json');
  });

  it("renders the browsable page for a browser's Accept", () => {
    expect(chosen('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe('text/html');
  });

  it('follows q-values, and q=0 refuses a type', () => {
    expect(chosen('application/json;q=0.5, text/html')).toBe('text/html');
    expect(chosen('text/html;q=0.1, application/json;q=0.9')).toBe('application/json');
    expect(chosen('application/json;q=0, */*')).toBe('text/html');
    refusal('application/json;q=0');
  });

  it('ignores media-range parameters other than q', () => {
    expect(chosen('application/json; charset=utf-8')).toBe('application/json');
    expect(chosen('text/html; charset=utf-8; q=0.2, application/json; version=2; q=0.1')).toBe('text/html');
  });

  it('refuses an Accept header it cannot satisfy with 406, naming the available types', () => {
    expect(refusal('application/xml').message).toBe('Could not satisfy the Accept header. Available: application/json, text/html.');
    expect(refusal('text/html', undefined, [{ mediaType: 'application/json', format: 'json' }]).message).toBe('Could not satisfy the Accept header. Available: application/json.');
  });

  it('lets format= win over the Accept header', () => {
    expect(chosen('text/html', 'json')).toBe('application/json');
    expect(chosen('application/json', 'html')).toBe('text/html');
    expect(chosen('application/xml', 'json')).toBe('application/json');
  });

  it('refuses an unknown format, or one not available, with 406 naming the formats there are', () => {
    expect(refusal(undefined, 'xml').message).toBe('Unknown format "xml". Use format=json or format=html.');
    expect(refusal(undefined, '').message).toBe('Unknown format "". Use format=json or format=html.');
    expect(refusal(undefined, 'html', [{ mediaType: 'application/json', format: 'json' }]).message).toBe('Unknown format "html". Use format=json.');
  });
});

describe('preferredMediaType', () => {
  it("negotiates from the request's own Accept and format=", () => {
    expect(preferredMediaType(request('text/html'), API_REPRESENTATIONS)).toBe('text/html');
    expect(preferredMediaType(request('text/html', '/api/books/?format=json'), API_REPRESENTATIONS)).toBe('application/json');
    expect(preferredMediaType(request(undefined, '/api/books/?format=html'), API_REPRESENTATIONS)).toBe('text/html');
  });

  it('falls back to JSON where negotiation fails, so an error can still be rendered', () => {
    expect(preferredMediaType(request('application/xml'), API_REPRESENTATIONS)).toBe('application/json');
    expect(preferredMediaType(request('text/html', '/api/books/?format=xml'), API_REPRESENTATIONS)).toBe('application/json');
  });
});
