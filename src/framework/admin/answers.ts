/** How the admin reads the API's answers about records: a record out of its envelope, a list's records, a record's id. */
import type { Collection } from '../declare/collection.js';

type Row = Readonly<Record<string, unknown>>;
const isRow = (value: unknown): value is Row => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A record the API answered with (under its envelope's key, when the collection has one). */
export function recordOf(collection: Collection, body: unknown): Row {
  const record = collection.envelope && isRow(body) ? body[collection.envelope.record] : body;
  return isRow(record) ? record : {};
}

/** A list's records, count and links, wherever its pagination and envelope put them. */
export function listOf(collection: Collection, body: unknown): { rows: readonly Row[]; count?: number; next?: string; previous?: string } {
  if (Array.isArray(body)) return { rows: body.filter(isRow) };
  if (!isRow(body)) return { rows: [] };
  const keys = collection.envelope ?? { list: 'results', count: 'count', next: 'next', previous: 'previous' };
  const text = (key: string | undefined) => (key && typeof body[key] === 'string' ? (body[key] as string) : undefined);
  const rows = body[keys.list];
  const count = keys.count ? body[keys.count] : undefined;
  return { rows: Array.isArray(rows) ? rows.filter(isRow) : [], count: typeof count === 'number' ? count : undefined, next: text(keys.next), previous: text(keys.previous) };
}

export const idOf = (collection: Collection, record: Row): string => String(record[collection.recordKey.field] ?? '');

