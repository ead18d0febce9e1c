/**
 * Cursor pagination, for collections too large to count or to page by
 * offset: `?cursor=` names the row a page starts after (or before), so pages
 * stay stable while records are inserted. Cursors are opaque and signed with
 * a key derived from SECRET_KEY; a changed one is a 400, never a wrong page.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Field } from '../../core/fields.js';
import { validationFailed } from '../base/errors.js';
import type { Ordering } from '../../core/list-query.js';
import type { Row } from '../../core/rows.js';

export interface Cursor {
  /** The ordering it was made for, as in the `ordering` parameter. */
  readonly ordering: string;
  /** The boundary row's ordering values (rendered), then its id. */
  readonly values: readonly unknown[];
  readonly direction: 'next' | 'previous';
}

export const orderingKey = (ordering: readonly Ordering[]): string =>
  ordering.map(({ field, descending }) => `${descending ? '-' : ''}${field}`).join(',');

const invalidCursor = (message = 'Invalid cursor.') => validationFailed({ cursor: [message] }, 'Invalid query parameters.');

const signature = (payload: string, key: Uint8Array): Buffer => createHmac('sha256', key).update(payload).digest().subarray(0, 16);

export function encodeCursor(cursor: Cursor, key: Uint8Array): string {
  const payload = Buffer.from(JSON.stringify([cursor.ordering, cursor.values, cursor.direction])).toString('base64url');
  return `${payload}.${signature(payload, key).toString('base64url')}`;
}

export function decodeCursor(text: string, key: Uint8Array, ordering: string): Cursor {
  const [payload = '', signed = ''] = text.split('.');
  const expected = signature(payload, key);
  const given = Buffer.from(signed, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor();
  const [cursorOrdering, values, direction] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [string, unknown[], Cursor['direction']];
  if (cursorOrdering !== ordering) throw invalidCursor('This cursor was made for another ordering; drop it or keep the ordering.');
  return { ordering: cursorOrdering, values, direction };
}

/** The cursor of a boundary row: its ordering values (as rendered) and id. */
export function cursorAt(row: Row, ordering: readonly Ordering[], fields: Readonly<Record<string, Field>>, direction: Cursor['direction']): Omit<Cursor, 'ordering'> {
  return { values: [...ordering.map(({ field }) => fields[field]!.render(row[field])), row.id], direction };
}

/** A signed cursor's values → driver parameters, by each field's own parsing. */
export function boundaryOf(cursor: Cursor, ordering: readonly Ordering[], fields: Readonly<Record<string, Field>>): unknown[] {
  if (cursor.values.length !== ordering.length + 1) throw invalidCursor();
  return cursor.values.map((value, index) => {
    const field = fields[index < ordering.length ? ordering[index]!.field : 'id']!;
    return field.toDriver(field.parseText(String(value)));
  });
}
