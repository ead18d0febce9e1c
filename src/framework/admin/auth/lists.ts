/**
 * The change lists of groups and users (Django's `auth` app): read through `/auth/groups/` and
 * `/auth/users/` with the admin's `q`, `o` and `p` as the API's search, ordering and page, shown as
 * every change list is.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthUser } from '../../base/auth-user.js';
import { readPage, sendList } from '../change-list.js';
import type { ListFilter } from '../pages/change-list.js';
import { refusedPage, staffFrame, staffOnly, type AdminSite } from '../site.js';
import { AUTH_GROUP, apiPath, authBucket, pagePath, type AuthKind } from './auth-paths.js';
import { managesGroups, viewsUsers } from './rights.js';

const COLUMNS: Readonly<Record<AuthKind, readonly string[]>> = { groups: ['name'], users: ['username', 'is_staff', 'is_superuser', 'is_active'] };
/** Django's UserAdmin.list_filter (but `groups`, which the API filters not). */
const FILTERS: Readonly<Record<AuthKind, readonly string[]>> = { groups: [], users: ['is_staff', 'is_superuser', 'is_active'] };

/** Whether the user may see the kind's pages at all. */
const mayView = (user: AuthUser, kind: AuthKind): Promise<boolean> => (kind === 'groups' ? managesGroups(user) : viewsUsers(user));

export async function authList(site: AdminSite, kind: AuthKind, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, undefined, authBucket(kind));
  if (!staff) return reply;
  const path = pagePath(site.root, kind);
  const frame = staffFrame(site, request, reply, staff, `Select ${kind === 'groups' ? 'group' : 'user'} to change`, [{ label: AUTH_GROUP }, { label: kind }]);
  if (!(await mayView(staff.user, kind))) return refusedPage(reply, frame, 403, `You do not have permission to view ${kind}.`);
  const columns = COLUMNS[kind];
  const { answer, page } = await readPage(site, request, staff.user, site.auth[kind], apiPath(site.auth, kind), path, columns);
  const manages = kind === 'groups' && (await managesGroups(staff.user));
  const model = {
    ...page,
    search: true,
    filters: FILTERS[kind].map((name): ListFilter => ({ name, choices: ['true', 'false'], value: page.query.get(name) ?? '' })),
    addHref: manages ? pagePath(site.root, kind, 'add') : undefined,
    addLabel: kind === 'groups' ? 'Add group' : 'Add user',
    canDelete: manages,
    actions: [],
  };
  return sendList(reply, frame, answer, model);
}
