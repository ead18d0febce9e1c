/**
 * The admin's index and change lists. The admin's own query parameters are Django's (`q` to search,
 * `o` to order, `p` for the page); the rest are the API's filters, passed on as they are.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callApi, type ApiAnswer } from './api.js';
import type { Collection } from '../declare/collection.js';
import type { Frame } from './pages/layout.js';
import { IndexPage, type IndexGroup } from './pages/index.js';
import { ChangeListPage, type ChangeListModel, type ListFilter } from './pages/change-list.js';
import { idOf, listOf } from './answers.js';
import { authIndexGroup } from './auth/index-group.js';
import type { AuthUser } from '../base/auth-user.js';
import { displayOf, verboseNames } from './display.js';
import { adminOf, shownRows } from './values.js';
import { may, refusedPage, sendPage, staffFrame, staffOnly, type AdminCollection, type AdminSite } from './site.js';

/** The admin's parameter → the API's. */
const TO_API: Readonly<Record<string, string>> = { q: 'search', o: 'ordering', p: 'page' };
const FROM_API: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(TO_API).map(([admin, api]) => [api, admin]));

const renamed = (query: URLSearchParams, names: Readonly<Record<string, string>>): URLSearchParams =>
  new URLSearchParams([...query].map(([name, value]) => [names[name] ?? name, value]));

export async function index(site: AdminSite, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply);
  if (!staff) return reply;
  const groups = new Map<string, IndexGroup['collections'][number][]>();
  for (const entry of site.collections) {
    const { collection, group } = entry;
    if (!(await may(staff.user, collection, 'view'))) continue;
    const href = `${site.root}${collection.name}/`;
    const addHref = collection.builtInActions.has('create') && (await may(staff.user, collection, 'add')) ? `${href}add/` : undefined;
    groups.set(group, [...(groups.get(group) ?? []), { name: verboseNames(entry).many, href, addHref }]);
  }
  // Django lists its auth app among the others; first here, as it sorts first by its label.
  const auth = await authIndexGroup(site, staff.user);
  const shown = [...(auth ? [auth] : []), ...[...groups].map(([label, collections]) => ({ label, collections }))];
  return sendPage(reply, 200, IndexPage, { frame: staffFrame(site, request, reply, staff, 'Site administration', undefined), groups: shown });
}

/** A foreign key's filter lists a link per related record (Django's RelatedFieldListFilter) up to this many; past it, the picker. */
export const FILTER_LINKS = 20;

/**
 * The sidebar's filters, each declared filter field's exact lookup: a choice list where the field
 * has one; for a foreign key to a collection the admin shows and the user may view, a link per
 * related record (read through its API) when they are few, else the change form's picker; else a text box.
 */
async function filtersOf(site: AdminSite, entry: AdminCollection, request: FastifyRequest, user: AuthUser, query: URLSearchParams): Promise<ListFilter[]> {
  const { filters, fields } = entry.collection.queryRules;
  const shown: ListFilter[] = [];
  for (const name of entry.options.filters ?? [...filters.keys()]) {
    const field = fields[name];
    const value = query.get(name) ?? '';
    const choices = field?.valueType === 'boolean' ? ['true', 'false'] : field?.choices;
    const target = field?.references === undefined ? undefined : adminOf(site, field.references);
    // A related record's filter value is its id: the admin's record key must be it.
    if (choices || !target || target.collection.recordKey.field !== 'id' || !(await may(user, target.collection, 'view'))) {
      shown.push({ name, ...(choices && { choices }), value });
      continue;
    }
    const answer = await callApi(request, { method: 'GET', url: target.list });
    const related = listOf(target.collection, answer.body);
    const few = answer.status === 200 && related.next === undefined && related.rows.length <= FILTER_LINKS;
    shown.push(
      few
        ? { name, value, links: related.rows.map((record) => ({ value: idOf(target.collection, record), text: displayOf(target, record) })) }
        : { name, value, lookup: `${site.root}${target.collection.name}/lookup/` },
    );
  }
  return shown;
}

/** The API's next or previous page link → the same page of the change list. */
function adminLink(path: string, apiLink: string | undefined): string | undefined {
  if (!apiLink) return undefined;
  const query = renamed(new URL(apiLink, 'http://admin.invalid').searchParams, FROM_API);
  return query.size > 0 ? `${path}?${query.toString()}` : path;
}

export async function changeList(site: AdminSite, entry: AdminCollection, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, undefined, entry.collection.name);
  if (!staff) return reply;
  const { collection } = entry;
  const path = `${site.root}${collection.name}/`;
  const names = verboseNames(entry);
  const frame = staffFrame(site, request, reply, staff, `Select ${names.one} to change`, [{ label: names.many }]);
  if (!(await may(staff.user, collection, 'view'))) return refusedPage(reply, frame, 403, 'You do not have permission to view this collection.');
  const shown = collection.serializerFor({ action: 'list', user: staff.user }).shownFields;
  // A declared column the user's serializer does not show (another serializer for them) is left out.
  const columns = entry.options.columns?.filter((column) => shown.includes(column)) ?? shown;
  const { answer, page } = await readPage(site, request, staff.user, collection, entry.list, path, columns);
  const model = {
    ...page,
    search: entry.options.search !== false && collection.serializer.search.length > 0,
    filters: await filtersOf(site, entry, request, staff.user, page.query),
    addHref: collection.builtInActions.has('create') && (await may(staff.user, collection, 'add')) ? `${path}add/` : undefined,
    addLabel: `Add ${names.one}`,
    canDelete: collection.builtInActions.has('destroy') && (await may(staff.user, collection, 'delete')),
    // The app's own actions: each is its custom action's POST, which the API checks per record; shown to those who may change.
    actions: (await may(staff.user, collection, 'change')) ? Object.entries(entry.options.actions ?? {}).map(([name, label]) => ({ name, label })) : [],
  };
  return sendList(reply, frame, answer, model);
}

/** What every change list shows of a page the API answered (the app's collections' and the framework's: auth/lists.ts). */
type ListPage = Pick<ChangeListModel, 'path' | 'columns' | 'orderable' | 'rows' | 'count' | 'query' | 'previous' | 'next'>;

/** One page of `apiList`, read with the request's `q`, `o`, `p` as the API's parameters (the rest passed on), shown at `path` with `columns`. */
export async function readPage(site: AdminSite, request: FastifyRequest, user: AuthUser, collection: Collection, apiList: string, path: string, columns: readonly string[]): Promise<{ answer: ApiAnswer; page: ListPage }> {
  const query = new URLSearchParams(request.url.split('?')[1] ?? '');
  const apiQuery = renamed(query, TO_API);
  const answer = await callApi(request, { method: 'GET', url: apiQuery.size > 0 ? `${apiList}?${apiQuery.toString()}` : apiList });
  const list = listOf(collection, answer.body);
  return {
    answer,
    page: {
      path,
      columns,
      orderable: new Set(collection.queryRules.ordering),
      rows: (await shownRows(site, request, user, collection.serializerFor({ action: 'list', user }), columns, list.rows)).map((cells, index) => ({ id: idOf(collection, list.rows[index]!), cells })),
      count: list.count,
      query,
      previous: adminLink(path, list.previous),
      next: adminLink(path, list.next),
    },
  };
}

export function sendList(reply: FastifyReply, frame: Frame, answer: ApiAnswer, model: ChangeListModel): FastifyReply {
  // A query the API refuses (a bad filter value, say) shows its message above an empty list, as Django's "?e=1".
  const error = answer.status >= 400 ? `The list could not be read: ${String((answer.body as { message?: unknown } | undefined)?.message ?? answer.status)}` : undefined;
  return sendPage(reply, answer.status >= 400 && answer.status !== 400 ? answer.status : 200, ChangeListPage, { frame: { ...frame, error }, model });
}
