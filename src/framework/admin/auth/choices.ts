/**
 * What the forms offer to pick: every permission name the admin knows of — the four model
 * permissions of each collection it shows, and the framework's own — with those already granted
 * (an app's own names, which no declaration lists, stay on the form); and every group, by name.
 */
import type { FastifyRequest } from 'fastify';
import { modelPermissionNames } from '../../declare/permission-classes.js';
import { CHANGE_USERS, MANAGE_GROUPS, VIEW_USERS } from '../../declare/users/group-collections.js';
import { callApi } from '../api.js';
import { listOf } from '../answers.js';
import type { AdminSite } from '../site.js';
import type { Choice } from './pages/multi-select.js';
import { apiPath } from './auth-paths.js';

/** A group list read further than this many pages is cut short (a form of ten thousand groups helps nobody). */
const MAX_GROUP_PAGES = 20;

export function permissionChoices(site: AdminSite, granted: readonly string[]): Choice[] {
  const names = new Set([...site.collections.flatMap(({ collection }) => modelPermissionNames(collection.name)), MANAGE_GROUPS, VIEW_USERS, CHANGE_USERS, ...granted]);
  return [...names].sort().map((name) => ({ value: name, label: name }));
}

/** Every group, by name, read page by page through the API's list. */
export async function groupChoices(site: AdminSite, request: FastifyRequest): Promise<Choice[]> {
  const choices: Choice[] = [];
  let url: string | undefined = `${apiPath(site.auth, 'groups')}?ordering=name`;
  for (let page = 0; url !== undefined && page < MAX_GROUP_PAGES; page++) {
    const answer = await callApi(request, { method: 'GET', url });
    const list = listOf(site.auth.groups, answer.body);
    choices.push(...list.rows.map((row) => ({ value: String(row.id), label: String(row.name) })));
    url = list.next === undefined ? undefined : ((next: URL) => `${next.pathname}${next.search}`)(new URL(list.next, 'http://admin.invalid'));
  }
  return choices;
}
