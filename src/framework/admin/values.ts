/**
 * What the change list, a change form's read-only fields and the inlines show of a record's values:
 * a date or time readably (its ISO value kept in <time datetime>), and a related record — a foreign
 * key's id or a nested record — by its display string, linked to its change page where the staff
 * user may view its collection. A foreign key whose record the row does not carry nested is read
 * through the related collection's own API, once per record, so its scope holds; a record it
 * refuses is shown by its id, unlinked.
 */
import type { FastifyRequest } from 'fastify';
import type { AuthUser } from '../base/auth-user.js';
import type { Serializer } from '../declare/serializer.js';
import { callApi } from './api.js';
import { recordOf } from './answers.js';
import { displayOf } from './display.js';
import { cellText } from './pages/cell.js';
import { readableDate, readableTime } from './pages/time.js';
import type { Shown } from './pages/value.js';
import { may, type AdminCollection, type AdminSite } from './site.js';

type Row = Readonly<Record<string, unknown>>;
const isRow = (value: unknown): value is Row => typeof value === 'object' && value !== null && !Array.isArray(value);

/** How a column names a related record: nested in it (`author`), or by a foreign key's id (`author_id`, whose record a `sibling` column may carry nested). */
interface RelatedColumn {
  readonly table: string;
  readonly nested: boolean;
  readonly sibling?: string;
}

/** The serializer's field shown as `shown`. */
export const fieldNamed = (serializer: Serializer, shown: string): string | undefined => serializer.fields.find((name) => serializer.shown(name) === shown);

/** The admin's entry for a table's records, if it shows them. */
export const adminOf = (site: AdminSite, table: string): AdminCollection | undefined => site.collections.find(({ collection }) => collection.serializer.model.table === table);

function relatedColumn(serializer: Serializer, shown: string): RelatedColumn | undefined {
  const name = fieldNamed(serializer, shown);
  if (name === undefined) return undefined;
  const nested = serializer.nested[name];
  if (nested) return { table: nested.serializer.model.table, nested: true };
  const table = serializer.model.fields[name]?.references;
  if (table === undefined) return undefined;
  const sibling = Object.keys(serializer.nested).find((other) => serializer.nested[other]!.source === name && serializer.fields.includes(other));
  return { table, nested: false, sibling: sibling === undefined ? undefined : serializer.shown(sibling) };
}

/** The link to a record's change page. */
const changeHref = (site: AdminSite, target: AdminCollection, key: unknown): string => `${site.root}${target.collection.name}/${encodeURIComponent(String(key))}/change/`;

/** `rows`' values of `columns` as the pages show them (see above). */
export async function shownRows(site: AdminSite, request: FastifyRequest, user: AuthUser, serializer: Serializer, columns: readonly string[], rows: readonly Row[]): Promise<Shown[][]> {
  const related = new Map(columns.map((column) => [column, relatedColumn(serializer, column)] as const));
  const read = new Map<string, Row | undefined>();
  const viewable = new Map<AdminCollection, boolean>();
  async function mayView(target: AdminCollection): Promise<boolean> {
    if (!viewable.has(target)) viewable.set(target, await may(user, target.collection, 'view'));
    return viewable.get(target)!;
  }
  async function recordFor(row: Row, column: string, relation: RelatedColumn): Promise<Row | undefined> {
    const value = row[column];
    if (relation.nested) return isRow(value) ? value : undefined;
    if (relation.sibling !== undefined && isRow(row[relation.sibling])) return row[relation.sibling] as Row;
    const target = adminOf(site, relation.table);
    // Read by the API's record key, which must then be the id the foreign key holds.
    if (!target || target.collection.recordKey.field !== 'id' || value === null || value === undefined) return undefined;
    const key = `${relation.table}\u0000${String(value)}`;
    if (!read.has(key)) {
      const answer = await callApi(request, { method: 'GET', url: target.detail(String(value)) });
      read.set(key, answer.status === 200 ? recordOf(target.collection, answer.body) : undefined);
    }
    return read.get(key);
  }
  async function shown(row: Row, column: string): Promise<Shown> {
    const value = row[column];
    const relation = related.get(column);
    if (relation && value !== null && value !== undefined) {
      const target = adminOf(site, relation.table);
      const record = await recordFor(row, column, relation);
      if (!record) return { text: cellText(relation.nested ? '-' : value) };
      const key = target && record[target.collection.recordKey.field];
      return { text: displayOf(target, record), href: target && key !== undefined && key !== null && (await mayView(target)) ? changeHref(site, target, key) : undefined };
    }
    const kind = serializer.model.fields[fieldNamed(serializer, column) ?? '']?.kind;
    const readable = typeof value !== 'string' ? undefined : kind === 'timestamp' ? readableTime(value) : kind === 'date' ? readableDate(value) : undefined;
    return readable === undefined ? { text: cellText(value) } : { text: readable, time: value as string };
  }
  const shownRows: Shown[][] = [];
  for (const row of rows) {
    const cells: Shown[] = [];
    for (const column of columns) cells.push(await shown(row, column));
    shownRows.push(cells);
  }
  return shownRows;
}
