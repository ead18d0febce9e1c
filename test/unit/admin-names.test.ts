/** How the admin writes times and names collections for people: Django's formats, in UTC; verbose names from a collection's name. */
import { describe, expect, it } from 'vitest';
import { collection, fields, model, serializer } from '../../src/framework/index.js';
import { counted, displayOf, verboseNames } from '../../src/framework/admin/display.js';
import { readableDate, readableTime } from '../../src/framework/admin/pages/time.js';

describe('readable dates and times', () => {
  it("writes Django's formats in UTC, and refuses what is no date", () => {
    expect(readableTime('2026-11-29T15:49:22.123Z')).toBe('Nov. 29, 2026, 3:49 p.m. UTC');
    expect(readableTime('2026-05-01T03:00:00+02:00')).toBe('May 1, 2026, 1 a.m. UTC');
    expect(readableTime('2026-09-10T12:00:00Z')).toBe('Sept. 10, 2026, noon UTC');
    expect(readableTime('2026-03-02T00:00:00Z')).toBe('March 2, 2026, midnight UTC');
    expect(readableTime('not a time')).toBeUndefined();
    expect(readableDate('2026-03-01')).toBe('March 1, 2026');
    expect(readableDate('2026-13-01')).toBeUndefined();
  });
});

describe('verbose names and display strings', () => {
  const named = (name: string, options = {}) => ({ collection: collection(name, { serializer: serializer(model(name, { id: fields.id(), name: fields.string({ maxLength: 9 }) }), { fields: ['id', 'name'] }) }), options });

  it('makes the singular of a plural name, or takes the declared ones', () => {
    expect(verboseNames(named('articles'))).toEqual({ one: 'article', many: 'articles' });
    expect(verboseNames(named('categories')).one).toBe('category');
    expect(verboseNames(named('boxes')).one).toBe('box');
    expect(verboseNames(named('order_lines'))).toEqual({ one: 'order line', many: 'order lines' });
    expect(verboseNames(named('people', { verboseName: 'person' }))).toEqual({ one: 'person', many: 'people' });
    expect(counted(named('articles'), 1)).toBe('1 article');
    expect(counted(named('articles'), 0)).toBe('0 articles');
  });

  it('names a record by its declared field, else a name-like one with text, else its key', () => {
    expect(displayOf(named('tags'), { id: 3, name: 'tea' })).toBe('tea');
    expect(displayOf(named('tags'), { id: 3, name: '' })).toBe('3');
    expect(displayOf(named('tags', { display: 'code' }), { id: 3, code: 'T-3', name: 'tea' })).toBe('T-3');
    expect(displayOf(undefined, { id: 7, username: 'ann' })).toBe('ann');
  });
});
