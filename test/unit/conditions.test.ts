/**
 * The condition language (core/conditions.ts): every form a condition is written in, from every
 * origin, through the one parser, and what it refuses. Scopes, `where`s, record stores and
 * aggregates read code's form; the query string (named filters included) reads text.
 */
import { describe, expect, it } from 'vitest';
import { checkFilter, ConditionError, parseConditions, type ConditionOrigin, type ConditionVocabulary } from '../../src/core/conditions.js';
import { conditionTerms } from '../../src/core/constraints.js';
import { Day } from '../../src/core/fields.js';
import { fields } from '../../src/framework/declare/fields.js';

const book: ConditionVocabulary = {
  fields: {
    id: fields.id(),
    title: fields.string({ maxLength: 300 }),
    author_id: fields.integer({ bits: 32 }),
    published: fields.boolean(),
    released: fields.timestamp({ nullable: true }),
    key: fields.uuid(),
    meta: fields.json(),
  },
};

/** The query string's rules: narrower lookups, and a named filter standing for another. */
const queryString: ConditionVocabulary = {
  fields: { ...book.fields, writer: fields.string() },
  filters: new Map([
    ['author_id', ['exact', 'in', 'gte', 'isnull']],
    ['title', ['exact', 'icontains']],
    ['writer', ['exact']],
  ]),
  named: new Map([['writer', { field: 'author_username', lookup: 'iexact' }]]),
};

const DAY = new Date('2024-05-01T00:00:00.000Z');

describe('one parser, every form', () => {
  it.each<[string, ConditionOrigin, ConditionVocabulary, Record<string, unknown>, unknown[]]>([
    ['a bare field is exact', 'code', book, { author_id: 7 }, [{ field: 'author_id', lookup: 'exact', value: 7 }]],
    ['an array under a bare field is in', 'code', book, { author_id: [1, 2] }, [{ field: 'author_id', lookup: 'in', value: [1, 2] }]],
    ['an empty array is in nothing', 'code', book, { author_id: [] }, [{ field: 'author_id', lookup: 'in', value: [] }]],
    ['null under a bare field is isnull', 'code', book, { released: null }, [{ field: 'released', lookup: 'isnull', value: true }]],
    ['field__lookup', 'code', book, { author_id__gte: 3, title__icontains: 'dune' }, [
      { field: 'author_id', lookup: 'gte', value: 3 },
      { field: 'title', lookup: 'icontains', value: 'dune' },
    ]],
    ['field__in with a list', 'code', book, { author_id__in: [1, 2] }, [{ field: 'author_id', lookup: 'in', value: [1, 2] }]],
    ['field__range with two bounds', 'code', book, { released__range: [DAY, DAY] }, [{ field: 'released', lookup: 'range', value: [DAY, DAY] }]],
    ['field__isnull', 'code', book, { released__isnull: false }, [{ field: 'released', lookup: 'isnull', value: false }]],
    ['an integer as its digits, kept as given', 'code', book, { author_id: '7' }, [{ field: 'author_id', lookup: 'exact', value: '7' }]],
    ['a Date for a timestamp', 'code', book, { released__lt: DAY }, [{ field: 'released', lookup: 'lt', value: DAY }]],
    ['a JSON key', 'code', book, { meta__has_key: 'colour' }, [{ field: 'meta', lookup: 'has_key', value: 'colour' }]],
    ['text: a bare name is exact, read by the field', 'text', queryString, { author_id: '7' }, [{ field: 'author_id', lookup: 'exact', value: 7 }]],
    ['text: in is a comma-separated list', 'text', queryString, { author_id__in: '1,2' }, [{ field: 'author_id', lookup: 'in', value: [1, 2] }]],
    ['text: a comma under exact is no list', 'text', queryString, { title: 'a,b' }, [{ field: 'title', lookup: 'exact', value: 'a,b' }]],
    ['text: isnull reads true and false', 'text', queryString, { author_id__isnull: 'true' }, [{ field: 'author_id', lookup: 'isnull', value: true }]],
    ['text: a named filter is the filter it names', 'text', queryString, { writer: 'Ann' }, [{ field: 'author_username', lookup: 'iexact', value: 'Ann' }]],
    ['text: a bare date is its whole day', 'text', { fields: book.fields }, { released: '2024-05-01' }, [
      { field: 'released', lookup: 'exact', value: new Day(DAY, new Date('2024-05-02T00:00:00.000Z')) },
    ]],
  ])('%s', (_name, origin, vocabulary, input, filters) => {
    expect(parseConditions(vocabulary, input, origin)).toEqual(filters);
  });

  it('reads a filter written out as its key: the same checks, no shorthand', () => {
    expect(checkFilter(book, { field: 'author_id', lookup: 'in', value: [1, 2] })).toEqual({ field: 'author_id', lookup: 'in', value: [1, 2] });
    expect(() => checkFilter(book, { field: 'author_id', lookup: 'exact', value: [1, 2] })).toThrow('use the lookup in');
    expect(() => checkFilter(book, { field: 'released', lookup: 'exact', value: null })).toThrow('use the lookup isnull');
    expect(() => checkFilter(book, { field: 'author_id', lookup: 'regex', value: 'a' })).toThrow('Unknown lookup "regex"');
  });

  it('gives constraints the same key and the same list: an array under a bare field is in', () => {
    expect(conditionTerms({ status: ['a', 'b'], stock__gte: 0 })).toEqual([
      { kind: 'compare', field: 'status', lookup: 'in', value: ['a', 'b'] },
      { kind: 'compare', field: 'stock', lookup: 'gte', value: 0 },
    ]);
  });
});

describe('what it refuses, under the key', () => {
  it.each<[string, ConditionOrigin, ConditionVocabulary, Record<string, unknown>, string, string]>([
    ['an unknown field', 'code', book, { writer_id: 1 }, 'writer_id', 'Unknown filter field "writer_id". Allowed: id, title, author_id, published, released, key, meta.'],
    ['a lookup the field does not take', 'code', book, { published__gt: true }, 'published__gt', 'Unknown lookup "gt" for "published". Allowed: exact, in, isnull.'],
    ['no lookup at all', 'code', book, { title__regex: 'a' }, 'title__regex', 'Unknown lookup "regex" for "title"'],
    ['undefined', 'code', book, { author_id: undefined }, 'author_id', 'undefined is no value'],
    ['null under a lookup', 'code', book, { author_id__gte: null }, 'author_id__gte', 'null compares with nothing'],
    ['a string of no integer', 'code', book, { author_id: 'seven' }, 'author_id', 'A valid integer is required.'],
    ['a string for a boolean', 'code', book, { published: 'true' }, 'published', 'Must be true or false'],
    ['a number for text', 'code', book, { title: 3 }, 'title', 'is not a value of this string field'],
    ['an object as a value', 'code', book, { author_id: { id: 1 } }, 'author_id', 'An object is not a value'],
    ['no UUID', 'code', book, { key: 'not-a-uuid' }, 'key', 'UUID'],
    ['a list that is no list of the type', 'code', book, { author_id: [1, 'x'] }, 'author_id', 'A valid integer is required.'],
    ['in without a list', 'code', book, { author_id__in: 1 }, 'author_id__in', 'Give a list of values.'],
    ['range of one bound', 'code', book, { released__range: [DAY] }, 'released__range', 'exactly two bounds'],
    ['a pattern that is no string', 'code', book, { title__icontains: 3 }, 'title__icontains', 'Give a string'],
    ['isnull that is no boolean', 'code', book, { released__isnull: 'yes' }, 'released__isnull', 'Must be true or false.'],
    ['text: a lookup the collection does not allow', 'text', queryString, { title__startswith: 'a' }, 'title__startswith', 'Unknown lookup "startswith" for "title". Allowed: exact, icontains.'],
    ['text: a field it does not filter', 'text', queryString, { published: 'true' }, 'published', 'Unknown filter field "published". Allowed: author_id, title, writer.'],
    ['text: a named filter takes one value', 'text', queryString, { writer__in: 'a,b' }, 'writer__in', 'Unknown lookup "in" for "writer". Allowed: exact.'],
    ['text: no integer', 'text', queryString, { author_id: 'x' }, 'author_id', 'A valid integer is required.'],
    ['text: a string longer than its field holds', 'text', queryString, { title: 'x'.repeat(301) }, 'title', 'no more than 300 characters'],
    ['text: too long a pattern', 'text', queryString, { title__icontains: 'x'.repeat(201) }, 'title__icontains', 'no more than 200 characters'],
    ['text: too many values', 'text', queryString, { author_id__in: Array.from({ length: 1001 }, (_, i) => i).join(',') }, 'author_id__in', 'at most 1000 values'],
  ])('%s', (_name, origin, vocabulary, input, key, message) => {
    let refused: unknown;
    try {
      parseConditions(vocabulary, input, origin);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ConditionError);
    expect((refused as ConditionError).key).toBe(key);
    expect((refused as ConditionError).messages.join(' ')).toContain(message);
  });

  it('refuses what is no object of conditions', () => {
    for (const input of [[{ author_id: 1 }], new Date(), null, 'author_id=1']) expect(() => parseConditions(book, input, 'code')).toThrow(ConditionError);
  });
});
