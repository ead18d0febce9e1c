import { describe, expect, it } from 'vitest';
import { boundaryOf, cursorAt, decodeCursor, encodeCursor, orderingKey, type Cursor } from '../../src/framework/actions/cursor.js';
import { ApiError } from '../../src/framework/base/errors.js';
import { fields } from '../../src/framework/declare/fields.js';
import type { Ordering } from '../../src/core/list-query.js';

const key = new Uint8Array(32).fill(1);
const otherKey = new Uint8Array(32).fill(2);

const ordering: Ordering[] = [
  { field: 'rating', descending: true },
  { field: 'published_at', descending: false },
];
const ORDERING = '-rating,published_at';
const cursor: Cursor = { ordering: ORDERING, values: [4, '2024-05-01T10:00:00.000Z', 17], direction: 'next' };

/** The cursor error `run` throws: 400 under `cursor`, as every invalid query parameter is. */
function cursorRefusal(run: () => unknown): string[] | undefined {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const refused = error as ApiError;
    expect([refused.status, refused.code, refused.message]).toEqual([400, 'validation_failed', 'Invalid query parameters.']);
    expect(Object.keys(refused.details ?? {})).toEqual(['cursor']);
    return refused.details?.cursor;
  }
  throw new Error('The cursor was accepted.');
}

/** `text` with its payload replaced by `payload`, the signature kept. */
const withPayload = (text: string, payload: unknown): string => `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${text.split('.')[1]}`;

describe('orderingKey', () => {
  it('spells an ordering as the ordering parameter does', () => {
    expect(orderingKey(ordering)).toBe(ORDERING);
    expect(orderingKey([])).toBe('');
  });
});

describe('encodeCursor and decodeCursor', () => {
  it('round-trip a cursor through URL-safe text', () => {
    const text = encodeCursor(cursor, key);
    expect(text).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(decodeCursor(text, key, ORDERING)).toEqual(cursor);
    const previous = { ...cursor, direction: 'previous' } as const;
    expect(decodeCursor(encodeCursor(previous, key), key, ORDERING)).toEqual(previous);
  });

  it('refuses a cursor whose payload was changed', () => {
    const text = encodeCursor(cursor, key);
    expect(cursorRefusal(() => decodeCursor(withPayload(text, [ORDERING, [5, '2024-05-01T10:00:00.000Z', 17], 'next']), key, ORDERING))).toEqual(['Invalid cursor.']);
  });

  it('refuses a cursor whose signature was changed, cut or left out', () => {
    const text = encodeCursor(cursor, key);
    const [payload, signature = ''] = text.split('.');
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    for (const changed of [`${payload}.${flipped}`, `${payload}.${signature.slice(0, -2)}`, `${payload}.`, payload!, '', 'not-a-cursor']) {
      expect(cursorRefusal(() => decodeCursor(changed, key, ORDERING))).toEqual(['Invalid cursor.']);
    }
  });

  it('refuses a cursor signed with another key', () => {
    expect(cursorRefusal(() => decodeCursor(encodeCursor(cursor, otherKey), key, ORDERING))).toEqual(['Invalid cursor.']);
  });

  it('refuses a cursor made for another ordering, saying so', () => {
    expect(cursorRefusal(() => decodeCursor(encodeCursor(cursor, key), key, 'rating'))).toEqual([
      'This cursor was made for another ordering; drop it or keep the ordering.',
    ]);
  });
});

describe('cursorAt and boundaryOf', () => {
  const modelFields = { id: fields.id(), rating: fields.integer(), published_at: fields.timestamp() };
  const row = { id: 17, rating: '4', published_at: new Date('2024-05-01T10:00:00Z') };

  it("make a boundary row's cursor from its rendered ordering values and id, and read them back as driver parameters", () => {
    const at = cursorAt(row, ordering, modelFields, 'next');
    expect(at).toEqual({ values: [4, '2024-05-01T10:00:00.000Z', 17], direction: 'next' });
    const decoded = decodeCursor(encodeCursor({ ordering: ORDERING, ...at }, key), key, ORDERING);
    expect(boundaryOf(decoded, ordering, modelFields)).toEqual([4, '2024-05-01T10:00:00.000Z', 17]);
  });

  it("refuses a cursor whose values do not fit the ordering's fields", () => {
    expect(cursorRefusal(() => boundaryOf({ ...cursor, values: [4, 17] }, ordering, modelFields))).toEqual(['Invalid cursor.']);
  });
});
