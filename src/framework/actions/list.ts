/**
 * list: a page of the records the request selects (by page number, limit and offset, or cursor),
 * or every one of them when the collection is unpaginated; or, for a renderer that takes whole
 * lists (CSV), every one of them streamed in batches.
 */
import type { Filter, Keyset, ListQuery } from '../../core/list-query.js';
import type { ListPlan } from '../../store/read/list.js';
import { weakEtag } from '../stages/conditional.js';
import { validationFailed } from '../base/errors.js';
import { absoluteUrl } from '../base/hosts.js';
import { LIMIT_OFFSET_PARAMETERS, parseWindow, windowPage } from './limit-offset.js';
import { paginate, preferredCount } from './pagination.js';
import { invalidPage, parseListQuery } from '../stages/list-params.js';
import type { Row, Selection } from '../../core/rows.js';
import { chosenFields, type Serializer } from '../declare/serializer.js';
import { boundaryOf, cursorAt, decodeCursor, encodeCursor, orderingKey } from './cursor.js';
import type { RenderContext } from '../declare/computed.js';
import { selectionOf, written, type ActionRequest, type ActionResult } from './request.js';

/** What a list's records render with: the user and the records' URLs, and no credential (RenderContext.credentials). */
const listContext = ({ user, request, links, version, fileLinks }: ActionRequest): RenderContext => ({ user, request, links, version, fileLinks });

/**
 * `narrowing`: conditions a custom list action adds (CustomAction's `where`), ANDed with the
 * scope's as a collection's own `where` is, so the page, its count and its links are the list's.
 */
export async function list(action: ActionRequest, narrowing: readonly Filter[] = []): Promise<ActionResult> {
  const { request, reader, collection, parameters } = action;
  const scope = narrowing.length === 0 ? action.scope?.conditions : [...(action.scope?.conditions ?? []), ...narrowing];
  const byWindow = collection.pagination === 'limit_offset';
  const parsed = parseListQuery(parameters, collection.queryRules, byWindow ? LIMIT_OFFSET_PARAMETERS : []);
  const window = byWindow ? parseWindow(parameters, collection.queryRules) : undefined;
  // Unpaginated: the whole list, read one record past the most it may hold.
  const whole = collection.pagination === 'none' && { page: 1, pageSize: collection.queryRules.maxPageSize };
  const query = { ...parsed, ...(window && { pageSize: window.limit, offset: window.offset }), ...whole, scope };
  const serializer = chosenFields(collection.serializerFor(action), parameters);
  const source = { ...collection.listSource, selection: orderedBy(selectionOf(action, serializer), action, query) };
  const plan = { source, query, estimateThreshold: collection.estimateThreshold };
  if (action.wholeLists && !PAGING_PARAMETERS.some((name) => parameters.has(name))) {
    return { status: 200, records: await everyRecord(action, serializer, { ...plan, query: { ...parsed, scope } }), fields: serializer.shownFields };
  }
  if (collection.pagination === 'cursor') return listByCursor(action, serializer, plan);
  if (whole) return wholeList(action, serializer, plan);
  const mode = preferredCount(request, collection.countModes);
  const read = await reader.list({ ...plan, paging: { by: 'number' }, count: mode });
  if (!window && query.page > 1 && read.rows.length === 0) throw invalidPage();
  const context = listContext(action);
  const results = read.rows.map((row) => serializer.render(row, context));
  const body = window ? windowPage(request, window, read.count, read.hasMore, results) : paginate(request, query.page, read.count, read.hasMore, results);
  const result = { ...written(200, body, weakEtag), fields: serializer.shownFields };
  return mode === 'exact' ? result : { ...result, headers: { ...result.headers, 'Preference-Applied': `count=${mode}` } };
}

/** The parameters that name a page, under any pagination: a request naming one gets that page, whatever renders it. */
const PAGING_PARAMETERS = ['page', 'cursor', ...LIMIT_OFFSET_PARAMETERS];

/** Records read per statement when a list is streamed whole. */
const STREAM_BATCH = 500;

/**
 * Every record the list selects, read STREAM_BATCH at a time as the renderer asks for them (never
 * all held at once), through the request's reader: its scope, filters, search and ordering. By
 * keyset where the ordering's fields can bound one (not nullable, not computed), which reads each
 * batch from an index; else by page number. Not one snapshot: a record written meanwhile may be
 * missed or, by page number, seen twice, as a client paging through would. The first batch is read
 * before the answer starts, so that a failure to read (an outage: 503) is still answered whole.
 */
async function everyRecord(action: ActionRequest, serializer: Serializer, plan: Omit<ListPlan, 'paging' | 'count'>): Promise<AsyncIterable<Row>> {
  const { reader, collection } = action;
  const { fields } = collection.queryRules;
  const { ordering } = plan.query;
  const byKeyset = ordering.every(({ field }) => fields[field] !== undefined && !fields[field].nullable);
  const key = orderingKey(ordering);
  const context = listContext(action);
  const batch = (page: number, from: Keyset | undefined) =>
    reader.list({ ...plan, query: { ...plan.query, page, pageSize: STREAM_BATCH }, paging: byKeyset ? { by: 'keyset', from } : { by: 'number' }, count: 'none' });
  const first = await batch(1, undefined);
  return (async function* () {
    let { rows, hasMore } = first;
    for (let page = 2; ; page += 1) {
      for (const row of rows) yield serializer.render(row, context);
      if (!hasMore) return;
      const from = byKeyset ? { boundary: boundaryOf({ ordering: key, ...cursorAt(rows.at(-1)!, ordering, fields, 'next') }, ordering, fields), backwards: false } : undefined;
      ({ rows, hasMore } = await batch(byKeyset ? 1 : page, from));
    }
  })();
}

/**
 * An unpaginated list (DRF's `pagination_class = None`): a JSON array of every record the request
 * selects, at most the collection's `maxPageSize`. More is refused rather than cut short, so that no
 * client takes part of a list for all of it.
 */
async function wholeList(action: ActionRequest, serializer: Serializer, plan: Omit<ListPlan, 'paging' | 'count'>): Promise<ActionResult> {
  const { rows, hasMore } = await action.reader.list({ ...plan, paging: { by: 'number' }, count: 'none' });
  const max = plan.query.pageSize;
  if (hasMore) throw validationFailed({ non_field_errors: [`More than ${max} records match; this list answers at most ${max}. Narrow it with its filters.`] }, 'Too many records to list at once.');
  const context = listContext(action);
  return { ...written(200, rows.map((row) => serializer.render(row, context)), weakEtag), fields: serializer.shownFields };
}

/** The selection with the aggregates the ordering names, when `fields`/`omit` (or the list's own serializer) left them out. */
function orderedBy(selection: Selection, action: ActionRequest, query: ListQuery): Selection {
  const names = new Set(query.ordering.map(({ field }) => field));
  const shown = new Set((selection.aggregates ?? []).map(({ name }) => name));
  // The collection's `serializer` declares what may be ordered by.
  const missing = (selectionOf(action, action.collection.serializer).aggregates ?? []).filter(({ name }) => names.has(name) && !shown.has(name));
  return missing.length === 0 ? selection : { ...selection, aggregates: [...(selection.aggregates ?? []), ...missing] };
}

/** A cursor page: `{count: null, next, previous, results}`, with links that carry signed cursors from the page's boundary rows. */
async function listByCursor(action: ActionRequest, serializer: Serializer, plan: Omit<ListPlan, 'paging' | 'count'>): Promise<ActionResult> {
  const { request, reader, collection, parameters, cursorKey } = action;
  const { ordering } = plan.query;
  const { fields } = collection.queryRules;
  const key = orderingKey(ordering);
  const text = parameters.get('cursor');
  const cursor = text ? decodeCursor(text, cursorKey, key) : undefined;
  const from = cursor && { boundary: boundaryOf(cursor, ordering, fields), backwards: cursor.direction === 'previous' };
  const { rows, boundary } = await reader.list({ ...plan, paging: { by: 'keyset', from }, count: 'none' });
  const context = listContext(action);
  const link = (row: Row | undefined, direction: 'next' | 'previous'): string | null => {
    if (!row) return null;
    const url = absoluteUrl(request);
    url.searchParams.delete('page');
    url.searchParams.set('cursor', encodeCursor({ ordering: key, ...cursorAt(row, ordering, fields, direction) }, cursorKey));
    return url.toString();
  };
  const body = {
    count: null,
    next: link(boundary?.next, 'next'),
    previous: link(boundary?.previous, 'previous'),
    results: rows.map((row) => serializer.render(row, context)),
  };
  return { ...written(200, body, weakEtag), fields: serializer.shownFields };
}
