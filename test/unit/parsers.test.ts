import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { parseJsonBody } from '../../src/framework/stages/parsers.js';
import { queryParameters } from '../../src/framework/base/query-string.js';
import { ApiError } from '../../src/framework/base/errors.js';

/** A request as the router hands it on: the body's raw bytes (routing keeps them unparsed), or no body at all. */
const request = (contentType: string | undefined, body?: string | Buffer): FastifyRequest =>
  ({
    headers: contentType === undefined ? {} : { 'content-type': contentType },
    body: typeof body === 'string' ? Buffer.from(body) : body,
  }) as unknown as FastifyRequest;

/** The ApiError `run` throws. */
function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('Nothing was refused.');
}

const parseError = (message: string) => ({ status: 400, code: 'parse_error', message, details: { non_field_errors: [message] } });

describe('parseJsonBody', () => {
  it('parses a JSON body', () => {
    expect(parseJsonBody(request('application/json', '{"title":"Dune","tags":["sf"],"n":1}'))).toEqual({ title: 'Dune', tags: ['sf'], n: 1 });
    expect(parseJsonBody(request('application/json', '[1, null]'))).toEqual([1, null]);
  });

  it('takes JSON types with parameters, in any case, and +json types, in UTF-8', () => {
    for (const type of ['application/json; charset=utf-8', 'Application/JSON; Charset="UTF-8"', 'application/vnd.api+json', 'application/json; version=2']) {
      expect(parseJsonBody(request(type, '{"a":1}'))).toEqual({ a: 1 });
    }
  });

  it('refuses another media type or charset with 415, naming it', () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin-1', 'application/jsonx']) {
      expect(refusal(() => parseJsonBody(request(type, '{"a":1}')))).toMatchObject({
        status: 415,
        code: 'unsupported_media_type',
        message: `Unsupported media type "${type}" in request. Send application/json.`,
      });
    }
  });

  it('refuses a body sent without a Content-Type with 415', () => {
    expect(refusal(() => parseJsonBody(request(undefined, '{"a":1}')))).toMatchObject({ status: 415, message: 'Unsupported media type "" in request. Send application/json.' });
  });

  it('asks for a body when none was sent', () => {
    expect(refusal(() => parseJsonBody(request(undefined)))).toMatchObject(parseError('A JSON body is required.'));
  });

  it("refuses an empty or malformed body with 400 parse_error and the parser's reason", () => {
    for (const body of ['', '{"title":', "{'a':1}", '{"a":1}}']) {
      const error = refusal(() => parseJsonBody(request('application/json', body)));
      expect([error.status, error.code]).toEqual([400, 'parse_error']);
      expect(error.message).toMatch(/^JSON parse error: ./);
      expect(error.details).toEqual({ non_field_errors: [error.message] });
    }
  });

  it('refuses bytes that are not UTF-8', () => {
    expect(refusal(() => parseJsonBody(request('application/json', Buffer.from([0x22, 0xff, 0x22]))))).toMatchObject(parseError('The body is not valid UTF-8.'));
  });

  it('refuses NUL and lone surrogates anywhere in the body, under the top-level field that holds them', () => {
    const error = refusal(() => parseJsonBody(request('application/json', '{"ok":"x","title":"a\\u0000b","tags":[{"deep":["\\ud800"]}]}')));
    expect([error.status, error.code]).toEqual([400, 'validation_failed']);
    expect(error.details).toEqual({ title: ['Null characters are not allowed.'], tags: ['Text must be valid Unicode.'] });
  });

  it('names a bulk body by index and field, and a bare value as non_field_errors', () => {
    expect(refusal(() => parseJsonBody(request('application/json', '[{"a":"ok"},{"a":"\\u0000"},"\\udfff"]'))).details).toEqual({
      '1.a': ['Null characters are not allowed.'],
      '2': ['Text must be valid Unicode.'],
    });
    expect(refusal(() => parseJsonBody(request('application/json', '"\\u0000"'))).details).toEqual({ non_field_errors: ['Null characters are not allowed.'] });
  });

  it('takes escaped surrogate pairs and an escaped NUL look-alike', () => {
    expect(parseJsonBody(request('application/json', '{"face":"\\ud83d\\ude00","text":"\\\\u0000"}'))).toEqual({ face: '😀', text: '\\u0000' });
  });
});

describe('queryParameters', () => {
  it('gives no parameters for a URL without a query string', () => {
    expect(queryParameters('/api/books/').size).toBe(0);
    expect(queryParameters('/api/books/?').size).toBe(0);
  });

  it('reads each parameter, the last value winning when one is repeated', () => {
    expect([...queryParameters('/api/books/?page=2&title=a&title=b&flag')]).toEqual([
      ['page', '2'],
      ['title', 'b'],
      ['flag', ''],
    ]);
  });

  it('decodes percent-escapes and + in names and values', () => {
    expect([...queryParameters('/api/books/?ti%74le=caf%C3%A9+au+lait&q=%2B1%26x')]).toEqual([
      ['title', 'café au lait'],
      ['q', '+1&x'],
    ]);
  });

  it('keeps a % that starts no escape as it is', () => {
    expect(queryParameters('/?q=100%&r=%zz').get('q')).toBe('100%');
    expect(queryParameters('/?q=100%&r=%zz').get('r')).toBe('%zz');
  });

  it('refuses escapes that are not UTF-8 with 400, by parameter', () => {
    expect(refusal(() => queryParameters('/?ok=%C3%A9&title=%FF&q=%C3'))).toMatchObject({
      status: 400,
      code: 'validation_failed',
      message: 'Invalid query parameters.',
      details: { title: ['Not valid percent-encoded UTF-8.'], q: ['Not valid percent-encoded UTF-8.'] },
    });
  });
});
