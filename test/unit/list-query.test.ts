import { describe, expect, it } from 'vitest';
import { parseListQuery } from '../../src/framework/stages/list-params.js';
import { ApiError } from '../../src/framework/base/errors.js';
import { fields } from '../../src/framework/declare/fields.js';
import type { QueryRules } from '../../src/framework/declare/collection.js';

const writer = fields.string();

/** A collection of books as its declaration would give the stage: filters by lookup, two orderings, pages of 20 up to 100. */
const rules: QueryRules = {
  fields: { id: fields.id(), title: fields.string({ maxLength: 300 }), rating: fields.integer({ bits: 32 }), published: fields.boolean(), writer },
  filters: new Map([
    ['title', ['exact', 'icontains', 'in']],
    ['rating', ['exact', 'gte', 'lte', 'in', 'range', 'isnull']],
    ['published', ['exact']],
    ['writer', ['exact']],
  ]),
  named: new Map([['writer', { field: 'author_username', lookup: 'iexact' }]]),
  ordering: ['title', 'rating'],
  defaultOrdering: [{ field: 'id', descending: true }],
  pageSize: 20,
  maxPageSize: 100,
};

type Query = Record<string, string> | ReadonlyMap<string, string>;

const parse = (query: Query, paging?: readonly string[]) =>
  parseListQuery(query instanceof Map ? query : new Map(Object.entries(query)), rules, paging);

/** The ApiError `query` is refused with. */
function refusal(query: Query, paging?: readonly string[]): ApiError {
  try {
    parse(query, paging);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('The query was accepted.');
}

/** The details of a 400 validation_failed for `query`. */
function details(query: Query, paging?: readonly string[]) {
  const error = refusal(query, paging);
  expect([error.status, error.code, error.message]).toEqual([400, 'validation_failed', 'Invalid query parameters.']);
  return error.details ?? {};
}

describe('parseListQuery', () => {
  it('gives the first page at the declared size, in the default ordering, for an empty query', () => {
    expect(parse({})).toEqual({ page: 1, pageSize: 20, search: [], ordering: [{ field: 'id', descending: true }], filters: [] });
  });

  describe('filters', () => {
    it('reads a bare field name as exact, and `field__lookup` as that lookup, each value parsed by its field', () => {
      expect(parse({ title: 'Dune', rating__gte: '3', published: 'true' }).filters).toEqual([
        { field: 'title', lookup: 'exact', value: 'Dune' },
        { field: 'rating', lookup: 'gte', value: 3 },
        { field: 'published', lookup: 'exact', value: true },
      ]);
    });

    it('splits `in` and `range` operands at commas and reads `isnull` as a boolean', () => {
      expect(parse({ title__in: 'a,b', rating__range: '1,5', rating__isnull: '0' }).filters).toEqual([
        { field: 'title', lookup: 'in', value: ['a', 'b'] },
        { field: 'rating', lookup: 'range', value: [1, 5] },
        { field: 'rating', lookup: 'isnull', value: false },
      ]);
    });

    it('applies a named filter as the field and lookup it names', () => {
      expect(parse({ writer: 'Ann' }).filters).toEqual([{ field: 'author_username', lookup: 'iexact', value: 'Ann' }]);
    });

    it('refuses an unknown field, naming the parameter and the filterable fields', () => {
      expect(details({ author: '1' })).toEqual({ author: ['Unknown filter field "author". Allowed: title, rating, published, writer.'] });
    });

    it('refuses a lookup the field does not allow, naming those it does', () => {
      expect(details({ title__gt: 'a' })).toEqual({ title__gt: ['Unknown lookup "gt" for "title". Allowed: exact, icontains, in.'] });
      expect(details({ writer__icontains: 'a' })).toEqual({ writer__icontains: ['Unknown lookup "icontains" for "writer". Allowed: exact.'] });
    });

    it("refuses a value its field cannot parse, with the field's message", () => {
      expect(details({ rating: 'many' })).toEqual({ rating: ['A valid integer is required.'] });
      expect(details({ published: 'yes' })).toEqual({ published: ['Must be true, false, 1 or 0.'] });
      expect(details({ rating__isnull: 'maybe' })).toEqual({ rating__isnull: ['Must be true or false.'] });
      expect(details({ rating__range: '1' })).toEqual({ rating__range: ['Give exactly two comma-separated bounds.'] });
    });

    it('reports every bad parameter at once, each under its own name', () => {
      expect(Object.keys(details({ author: 'x', rating: 'many', title: 'fine', page: '0' })).sort()).toEqual(['author', 'page', 'rating']);
    });

    it('keeps a parameter named like an Object.prototype key as an ordinary detail', () => {
      const found = details(new Map([['__proto__', '1'], ['constructor', '1']]));
      expect(Object.keys(found).sort()).toEqual(['__proto__', 'constructor']);
    });

    it('refuses NUL in any value, reserved parameters included', () => {
      expect(details({ title: 'a\u0000b', format: '\u0000' })).toEqual({
        title: ['Null characters are not allowed.'],
        format: ['Null characters are not allowed.'],
      });
    });
  });

  describe('reserved and paging parameters', () => {
    it('never reads a reserved parameter as a filter', () => {
      const query = parse({ format: 'json', fields: 'title', omit: 'rating', cursor: 'abc', search: 'x', ordering: 'title', page: '1', page_size: '5' });
      expect(query.filters).toEqual([]);
    });

    it("leaves the pagination's own parameters to it, and refuses them where it has none", () => {
      expect(parse({ limit: '10', offset: '0' }, ['limit', 'offset']).filters).toEqual([]);
      expect(Object.keys(details({ limit: '10' }))).toEqual(['limit']);
    });
  });

  describe('ordering', () => {
    it('reads allowed fields in order, `-` for descending', () => {
      expect(parse({ ordering: '-rating, title' }).ordering).toEqual([
        { field: 'rating', descending: true },
        { field: 'title', descending: false },
      ]);
    });

    it('keeps the first mention of a field named twice', () => {
      expect(parse({ ordering: 'rating,-rating,title' }).ordering).toEqual([
        { field: 'rating', descending: false },
        { field: 'title', descending: false },
      ]);
    });

    it('refuses a field not allowed for ordering, naming those that are', () => {
      expect(details({ ordering: 'title,-published' })).toEqual({ ordering: ['Unknown ordering field "-published". Allowed: title, rating.'] });
    });

    it('falls back to the default for an empty ordering', () => {
      expect(parse({ ordering: ' ' }).ordering).toEqual(rules.defaultOrdering);
    });
  });

  describe('pages', () => {
    it('takes a page and a page size', () => {
      expect(parse({ page: '3', page_size: '5' })).toMatchObject({ page: 3, pageSize: 5 });
    });

    it('caps the page size at the maximum', () => {
      expect(parse({ page_size: '500' }).pageSize).toBe(100);
    });

    it.each(['0', '-1', '1.5', 'two', '01', ''])('refuses page=%j and page_size=%j', (text) => {
      expect(details({ page: text, page_size: text })).toEqual({ page: ['A positive integer is required.'], page_size: ['A positive integer is required.'] });
    });

    it('answers a page number past any possible page with 404', () => {
      const error = refusal({ page: '99999999999999999999' });
      expect([error.status, error.code, error.message]).toEqual([404, 'not_found', 'Invalid page.']);
    });
  });

  describe('search and long values', () => {
    it('splits search terms at whitespace', () => {
      expect(parse({ search: '  dune   herbert ' }).search).toEqual(['dune', 'herbert']);
    });

    it('refuses more than 50 search terms', () => {
      expect(parse({ search: Array(50).fill('a').join(' ') }).search).toHaveLength(50);
      expect(details({ search: Array(51).fill('a').join(' ') })).toEqual({ search: ['Use at most 50 search terms.'] });
    });

    it('refuses a search term or pattern over 200 characters, and a value longer than its field holds, counted in code points', () => {
      expect(parse({ search: '😀'.repeat(200), title: 'x'.repeat(300), title__icontains: 'x'.repeat(200) }).filters).toHaveLength(2);
      expect(details({ search: 'x'.repeat(201) })).toEqual({ search: ['Ensure each search term has no more than 200 characters.'] });
      expect(details({ title: 'x'.repeat(301) })).toEqual({ title: ['Ensure each value has no more than 300 characters.'] });
      expect(details({ title__icontains: 'x'.repeat(201) })).toEqual({ title__icontains: ['Ensure each value has no more than 200 characters.'] });
      expect(details({ title__in: `a,${'😀'.repeat(301)}` })).toEqual({ title__in: ['Ensure each value has no more than 300 characters.'] });
    });

    it("bounds every string value by the collection's maxFilterLength", () => {
      const capped = { ...rules, maxFilterLength: 10 };
      expect(() => parseListQuery(new Map([['title', 'x'.repeat(11)]]), capped)).toThrow(expect.objectContaining({ details: { title: ['Ensure each value has no more than 10 characters.'] } }));
    });

    it('refuses an `in` list of more than 1000 values', () => {
      expect(parse({ rating__in: Array(1000).fill('1').join(',') }).filters[0]!.value).toHaveLength(1000);
      expect(details({ rating__in: Array(1001).fill('1').join(',') })).toEqual({ rating__in: ['Give at most 1000 values.'] });
    });
  });
});
