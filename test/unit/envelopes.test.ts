/**
 * Envelopes (Conduit's `{"article": {...}}`, `{"articles": [...], "articlesCount": n}`): answers
 * wrapped on the way out, request bodies taken out of them on the way in.
 */
import { describe, expect, it } from 'vitest';
import { wrapResult } from '../../src/framework/render/envelopes.js';
import { unwrapBody } from '../../src/framework/stages/parsers.js';
import { written, type ActionResult } from '../../src/framework/actions/request.js';
import { strongEtag, weakEtag } from '../../src/framework/stages/conditional.js';
import type { Envelope } from '../../src/framework/declare/collection.js';
import type { Action } from '../../src/framework/declare/permission-classes.js';
import { ApiError } from '../../src/framework/base/errors.js';

const conduit: Envelope = { record: 'article', list: 'articles', count: 'articlesCount' };
const linked: Envelope = { ...conduit, next: 'nextPage', previous: 'previousPage' };

const article = { id: 1, title: 'Dune' };
const page = { count: 7, next: 'https://api.example.com/api/articles/?page=3', previous: 'https://api.example.com/api/articles/', results: [article] };

/** The answer a client reads: the wrapped result's JSON text, parsed. */
const sent = (envelope: Envelope | undefined, action: Action, result: ActionResult): unknown => JSON.parse(wrapResult(envelope, action, result).json!);

describe('answers in an envelope', () => {
  it.each([
    ['a page, with the count only (Conduit)', conduit, 'list', page, { articles: [article], articlesCount: 7 }],
    ['a page, with its links where named', linked, 'list', page, { articles: [article], articlesCount: 7, nextPage: page.next, previousPage: page.previous }],
    ['a cursor page, which has no count', linked, 'list', { next: null, previous: null, results: [] }, { articles: [], nextPage: null, previousPage: null }],
    ['a page of a count preferred away', conduit, 'list', { ...page, count: null }, { articles: [article], articlesCount: null }],
    ['an unpaginated list: one page of all of it', linked, 'list', [article, article], { articles: [article, article], articlesCount: 2, nextPage: null, previousPage: null }],
    ['a record read', conduit, 'retrieve', article, { article }],
    ['a record created', conduit, 'create', article, { article }],
    ['a record changed', conduit, 'partial_update', article, { article }],
    ['a bulk create: the records under the list key', conduit, 'create', [article, article], { articles: [article, article] }],
    ["a list action's answer that is no page: a record", conduit, 'list', { total: 7 }, { article: { total: 7 } }],
    ['a record whose own fields look like a page, outside a list', conduit, 'retrieve', { id: 2, results: [] }, { article: { id: 2, results: [] } }],
  ] as const)('%s', (_, envelope, action, body, expected) => {
    expect(sent(envelope, action, written(200, body, weakEtag))).toEqual(expected);
  });

  it("keeps the status, the Location and the bare record's ETag: the envelope is a fixed function of the record", () => {
    const result = written(201, article, strongEtag, 'https://api.example.com/api/articles/1/');
    const wrapped = wrapResult(conduit, 'create', result);
    expect(wrapped.status).toBe(201);
    expect(wrapped.headers).toEqual({ Location: 'https://api.example.com/api/articles/1/', ETag: strongEtag(JSON.stringify(article)) });
    expect(wrapped.body).toEqual({ article });
  });

  it('leaves alone an answer without a body, text in its own media type, and every answer of a collection without an envelope', () => {
    const deleted: ActionResult = { status: 204 };
    const csv: ActionResult = { status: 200, body: 'id,title\n1,Dune\n', type: 'text/csv' };
    const bare = written(200, page, weakEtag);
    expect(wrapResult(conduit, 'destroy', deleted)).toBe(deleted);
    expect(wrapResult(conduit, 'list', csv)).toBe(csv);
    expect(wrapResult(undefined, 'list', bare)).toBe(bare);
  });
});

describe('request bodies in an envelope', () => {
  /** The body the action receives, or the 400's details. */
  function unwrapped(envelope: Envelope | undefined, body: unknown): unknown {
    try {
      return { body: unwrapBody(envelope, body) };
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      const refused = error as ApiError;
      expect([refused.status, refused.code]).toEqual([400, 'validation_failed']);
      return { refused: refused.details };
    }
  }
  const required = { refused: { article: ['This field is required.'] } };

  it.each([
    ['a record under its key', { article: { title: 'Dune' } }, { body: { title: 'Dune' } }],
    ['records under the list key (a bulk create)', { articles: [{ title: 'Dune' }] }, { body: [{ title: 'Dune' }] }],
    ['whatever is under the record key, for the action to judge', { article: 'Dune' }, { body: 'Dune' }],
    ['the record key holding null', { article: null }, { body: null }],
    ['no body at all (a DELETE)', undefined, { body: undefined }],
    ['a bare record', { title: 'Dune' }, required],
    ['an empty object', {}, required],
    ['a bare array', [{ article: { title: 'Dune' } }], required],
    ['the list key not holding an array', { articles: { title: 'Dune' } }, required],
    ['null', null, required],
    ['a string', 'article', required],
    ['a number', 7, required],
    ['the key in another case', { Article: { title: 'Dune' } }, required],
    ['the key only under __proto__', JSON.parse('{"__proto__": {"article": {"title": "Dune"}}}'), required],
    ['the key only on the prototype', Object.create({ article: { title: 'Dune' } }), required],
  ])('%s', (_, body, expected) => {
    expect(unwrapped(conduit, body)).toEqual(expected);
  });

  it('passes every body through for a collection without an envelope', () => {
    for (const body of [{ title: 'Dune' }, [1], 'text', null, undefined]) expect(unwrapped(undefined, body)).toEqual({ body });
  });
});
