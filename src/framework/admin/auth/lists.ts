/**
 * The change lists of groups and users (Django's `auth` app): read through `/auth/groups/` and
 * `/auth/users/` with the admin's `q`, `o` and `p` as the API's search, ordering and page, shown as
 * every change list is.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthUser } from '../../base/auth-user.js';
import { callApi } from '../api.js';
import { idOf, listOf } from '../answers.js';
import { TO_API, adminLink, renamed } from '../change-list.js';
import { ChangeListPage, type ListFilter } from '../pages/change-list.js';
import { refusedPage, sendPage, staffFrame, staffOnly, type AdminSite } from '../site.js';
import { AUTH_GROUP, apiPath, pagePath, type AuthKind } from './auth-paths.js';
import { managesGroups, viewsUsers } from './rights.js';

const COLUMNS: Readonly<Record<AuthKind, readonly string[]>> = { groups: ['name'], users: ['username', 'is_staff', 'is_superuser', 'is_active'] };
/** Django's UserAdmin.list_filter (but `groups`, which the API filters not). */
const FILTERS: Readonly<Record<AuthKind, readonly string[]>> = { groups: [], users: ['is_staff', 'is_superuser', 'is_active'] };

/** Whether the user may see the kind's pages at all. */
export const mayView = (user: AuthUser, kind: AuthKind): Promise<boolean> => (kind === 'groups' ? managesGroups(user) : viewsUsers(user));

export async function authList(site: AdminSite, kind: AuthKind, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply);
  if (!staff) return reply;
  const path = pagePath(site.root, kind);
  const frame = staffFrame(site, request, reply, staff, `Select ${kind === 'groups' ? 'group' : 'user'} to change`, [{ label: AUTH_GROUP }, { label: kind }]);
  if (!(await mayView(staff.user, kind))) return refusedPage(reply, frame, 403, `You do not have permission to view ${kind}.`);
  const collection = site.auth[kind];
  const query = new URLSearchParams(request.url.split('?')[1] ?? '');
  const apiQuery = renamed(query, TO_API);
  const answer = await callApi(request, { method: 'GET', url: `${apiPath(site.auth, kind)}${apiQuery.size > 0 ? `?${apiQuery.toString()}` : ''}` });
  const list = listOf(collection, answer.body);
  const columns = COLUMNS[kind];
  const filters: ListFilter[] = FILTERS[kind].map((name) => ({ name, choices: ['true', 'false'], value: query.get(name) ?? '' }));
  const manages = kind === 'groups' && (await managesGroups(staff.user));
  const model = {
    path,
    columns,
    orderable: new Set(collection.queryRules.ordering),
    rows: list.rows.map((record) => ({ id: idOf(collection, record), cells: columns.map((column) => record[column]) })),
    count: list.count,
    search: true,
    query,
    filters,
    previous: adminLink(path, list.previous),
    next: adminLink(path, list.next),
    addHref: manages ? pagePath(site.root, kind, 'add') : undefined,
    canDelete: manages,
    actions: [],
  };
  const error = answer.status >= 400 ? `The list could not be read: ${String((answer.body as { message?: unknown } | undefined)?.message ?? answer.status)}` : undefined;
  return sendPage(reply, answer.status >= 400 && answer.status !== 400 ? answer.status : 200, ChangeListPage, { frame: { ...frame, error }, model });
}
