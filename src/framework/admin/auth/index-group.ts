/** The index's "Authentication and authorization" group (Django's `auth` app): the framework's groups and users, as far as the user may see them. */
import type { AuthUser } from '../../base/auth-user.js';
import type { IndexGroup } from '../pages/index.js';
import type { AdminSite } from '../site.js';
import { AUTH_GROUP, pagePath } from './auth-paths.js';
import { managesGroups, viewsUsers } from './rights.js';

/** The index's group of the framework's own, with what the user may see; undefined when nothing. */
export async function authIndexGroup(site: AdminSite, user: AuthUser): Promise<IndexGroup | undefined> {
  const collections: IndexGroup['collections'][number][] = [];
  if (await managesGroups(user)) collections.push({ name: 'groups', href: pagePath(site.root, 'groups'), addHref: pagePath(site.root, 'groups', 'add') });
  if (await viewsUsers(user)) collections.push({ name: 'users', href: pagePath(site.root, 'users') });
  return collections.length > 0 ? { label: AUTH_GROUP, collections } : undefined;
}

