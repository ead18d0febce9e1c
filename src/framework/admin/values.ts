/**
 * What the change list, a change form's read-only fields and the inlines show of a record's values:
 * a date or time readably (its ISO value kept in <time datetime>), and a related record — a foreign
 * key's id or a nested record — by its display string, linked to its change page where the staff
 * user may view its collection. A foreign key whose record the row does not carry nested is read
 * through the related collection's own API (one list request, or one read per record), so its
 * scope holds; a record it refuses is shown by its id, unlinked.
 */
import type { FastifyRequest } from 'fastify';
import type { AuthUser } from '../base/auth-user.js';
import type { Serializer } from '../declare/serializer.js';
import { callApi } from './api.js';
import { idOf, listOf, recordOf } from './answers.js';
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

/**
 * The records of `ids` the API shows the user, by id: one list request where the collection filters
 * its `id` with `in` (as `?id__in=…`), else — or for those past its page — one read each, side by side.
 */
async function readRecords(request: FastifyRequest, target: AdminCollection, ids: readonly string[]): Promise<Map<string, Row>> {
  const found = new Map<string, Row>();
  let complete = false;
  if (target.collection.queryRules.filters.get('id')?.includes('in')) {
    const answer = await callApi(request, { method: 'GET', url: `${target.list}?${new URLSearchParams({ id__in: ids.join(',') }).toString()}` });
    const list = listOf(target.collection, answer.body);
    for (const record of list.rows) found.set(idOf(target.collection, record), record);
    complete = answer.status === 200 && list.next === undefined;
  }
  if (!complete) {
    const missing = ids.filter((id) => !found.has(id));
    const answers = await Promise.all(missing.map((id) => callApi(request, { method: 'GET', url: target.detail(id) })));
    answers.forEach((answer, index) => answer.status === 200 && found.set(missing[index]!, recordOf(target.collection, answer.body)));
  }
  return found;
}

/** `rows`' values of `columns` as the pages show them (see above). */
export async function shownRows(site: AdminSite, request: FastifyRequest, user: AuthUser, serializer: Serializer, columns: readonly string[], rows: readonly Row[]): Promise<Shown[][]> {
  const related = new Map(columns.map((column) => [column, relatedColumn(serializer, column)] as const));
  // The foreign keys' records the rows do not carry nested, by table: read through their collections' API, once each.
  const wanted = new Map<AdminCollection, Set<string>>();
  for (const [column, relation] of related) {
    const target = relation && !relation.nested ? adminOf(site, relation.table) : undefined;
    // Read by the API's record key, which must then be the id the foreign key holds.
    if (!target || target.collection.recordKey.field !== 'id') continue;
    const ids = wanted.get(target) ?? new Set<string>();
    wanted.set(target, ids);
    // Not where the row carries it nested (a refused form's posted values do not).
    const carried = (row: Row): boolean => relation!.sibling !== undefined && isRow(row[relation!.sibling]);
    for (const row of rows) if (row[column] !== null && row[column] !== undefined && !carried(row)) ids.add(String(row[column]));
  }
  const read = new Map<AdminCollection, Map<string, Row>>();
  for (const [target, ids] of wanted) if (ids.size > 0) read.set(target, await readRecords(request, target, [...ids]));
  const viewable = new Map<AdminCollection, boolean>();
  for (const relation of related.values()) {
    const target = relation && adminOf(site, relation.table);
    if (target && !viewable.has(target)) viewable.set(target, await may(user, target.collection, 'view'));
  }
  function recordFor(row: Row, column: string, relation: RelatedColumn): Row | undefined {
    const value = row[column];
    if (relation.nested) return isRow(value) ? value : undefined;
    if (relation.sibling !== undefined && isRow(row[relation.sibling])) return row[relation.sibling] as Row;
    const target = adminOf(site, relation.table);
    return target && read.get(target)?.get(String(value));
  }
  function shown(row: Row, column: string): Shown {
    const value = row[column];
    const relation = related.get(column);
    if (relation && value !== null && value !== undefined) {
      const target = adminOf(site, relation.table);
      const record = recordFor(row, column, relation);
      if (!record) return { text: cellText(relation.nested ? '-' : value) };
      const key = target && record[target.collection.recordKey.field];
      return { text: displayOf(target, record), href: target && key !== undefined && key !== null && viewable.get(target) ? changeHref(site, target, key) : undefined };
    }
    const kind = serializer.model.fields[fieldNamed(serializer, column) ?? '']?.kind;
    const readable = typeof value !== 'string' ? undefined : kind === 'timestamp' ? readableTime(value) : kind === 'date' ? readableDate(value) : undefined;
    return readable === undefined ? { text: cellText(value) } : { text: readable, time: value as string };
  }
  return rows.map((row) => columns.map((column) => shown(row, column)));
}
