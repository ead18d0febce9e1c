/**
 * A group's add, change and delete pages: its name written by a POST or PATCH of `/auth/groups/`,
 * its permissions one grant at a time through `/auth/groups/<id>/permissions/` (grants.ts), a
 * deletion by its DELETE (its grants and memberships go with it), each after the API's own check.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callApi, refusal } from '../api.js';
import { flash } from '../access.js';
import { recordOf } from '../answers.js';
import { DeletePage } from '../pages/delete.js';
import { refusedPage, sendPage, staffFrame, staffOnly, type AdminSite } from '../site.js';
import type { StaffSession } from '../access.js';
import { GroupFormPage, type GroupFormModel } from './pages/group-form.js';
import { badNames, initialOf, picked, saveLinks } from './grants.js';
import { permissionChoices } from './choices.js';
import { AUTH_GROUP, apiPath, authBucket, pagePath } from './auth-paths.js';
import { managesGroups } from './rights.js';

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

/** Where a saved form goes next, by the button pressed (Django's), with its message. */
function saved(site: AdminSite, request: FastifyRequest, reply: FastifyReply, form: URLSearchParams, id: string, what: string, refused: readonly string[]): FastifyReply {
  const list = pagePath(site.root, 'groups');
  const next = form.has('_addanother') ? pagePath(site.root, 'groups', 'add') : form.has('_continue') || refused.length > 0 ? pagePath(site.root, 'groups', id, 'change') : list;
  const failed = refused.length > 0 ? ` Not saved: ${refused.join('; ')}.` : '';
  flash(request, reply, `The group “${what}” was saved successfully.${failed}`);
  return reply.redirect(next, 302);
}

async function allowed(site: AdminSite, request: FastifyRequest, reply: FastifyReply, title: string, crumb: string, form?: URLSearchParams): Promise<StaffSession | undefined> {
  const staff = await staffOnly(site, request, reply, form, authBucket('groups'));
  if (!staff) return undefined;
  if (await managesGroups(staff.user)) return staff;
  refusedPage(reply, staffFrame(site, request, reply, staff, title, [{ label: AUTH_GROUP }, { label: 'groups', href: pagePath(site.root, 'groups') }, { label: crumb }]), 403, 'You do not have permission to manage groups.');
  return undefined;
}

/** `/auth/groups/add/` (`id` undefined) and `/auth/groups/<id>/change/`; `form`: a POST's fields. */
export async function groupForm(site: AdminSite, request: FastifyRequest, reply: FastifyReply, id: string | undefined, form?: URLSearchParams): Promise<FastifyReply> {
  const title = id === undefined ? 'Add group' : 'Change group';
  const staff = await allowed(site, request, reply, title, id ?? 'Add', form);
  if (!staff) return reply;
  const frame = staffFrame(site, request, reply, staff, title, [{ label: AUTH_GROUP }, { label: 'groups', href: pagePath(site.root, 'groups') }, { label: id ?? 'Add' }]);
  let stored = { name: '', permissions: [] as string[] };
  if (id !== undefined) {
    const found = await callApi(request, { method: 'GET', url: apiPath(site.auth, 'groups', id) });
    if (found.status !== 200) return refusedPage(reply, frame, 404, `group with ID “${id}” doesn’t exist. Perhaps it was deleted?`);
    const record = recordOf(site.auth.groups, found.body);
    stored = { name: String(record.name ?? ''), permissions: strings(record.permissions) };
  }
  const model = (values: { name: string; permissions: readonly string[] }, initial: readonly string[], errors: GroupFormModel['errors']): GroupFormModel => ({
    action: id === undefined ? pagePath(site.root, 'groups', 'add') : pagePath(site.root, 'groups', id, 'change'),
    ...values,
    initial,
    choices: permissionChoices(site, [...values.permissions, ...initial]),
    errors,
    deleteHref: id === undefined ? undefined : pagePath(site.root, 'groups', id, 'delete'),
  });
  if (!form) return sendPage(reply, 200, GroupFormPage, { frame, model: model(stored, stored.permissions, {}) });

  const posted = { name: form.get('name') ?? '', permissions: picked(form, 'permissions') };
  const initial = id === undefined ? [] : initialOf(form, 'permissions');
  const bad = badNames(posted.permissions);
  if (bad) return sendPage(reply, 400, GroupFormPage, { frame, model: model(posted, initial, { permissions: bad }) });
  const answer = await callApi(request, {
    method: id === undefined ? 'POST' : 'PATCH',
    url: id === undefined ? apiPath(site.auth, 'groups') : apiPath(site.auth, 'groups', id),
    form: new URLSearchParams([['name', posted.name]]),
    csrfToken: staff.csrfToken,
  });
  if (answer.status >= 300) {
    const { message, details } = refusal(answer);
    const errors = Object.keys(details).length > 0 ? details : { non_field_errors: [message] };
    return sendPage(reply, answer.status === 404 ? 404 : 400, GroupFormPage, { frame, model: model(posted, initial, errors) });
  }
  const groupId = id ?? String(recordOf(site.auth.groups, answer.body).id);
  const refused = await saveLinks(request, staff.csrfToken, { url: apiPath(site.auth, 'groups', groupId, 'permissions'), key: 'name', styled: site.auth.groups }, initial, posted.permissions);
  return saved(site, request, reply, form, groupId, posted.name, refused);
}

/** Deleting groups: one (`/auth/groups/<id>/delete/`) or the change list's selection (`bulk`); a confirmation first. */
export async function deleteGroups(site: AdminSite, request: FastifyRequest, reply: FastifyReply, ids: readonly string[], bulk: boolean, form?: URLSearchParams): Promise<FastifyReply> {
  const staff = await allowed(site, request, reply, 'Are you sure?', 'Delete', form);
  if (!staff) return reply;
  const list = pagePath(site.root, 'groups');
  const frame = staffFrame(site, request, reply, staff, 'Are you sure?', [{ label: AUTH_GROUP }, { label: 'groups', href: list }, { label: 'Delete' }]);
  const chosen = [...new Set(ids)];
  if (chosen.length === 0) {
    flash(request, reply, 'Items must be selected in order to perform actions on them. No items have been changed.');
    return reply.redirect(list, 302);
  }
  if (form?.get('post') !== 'yes') {
    const items = [];
    for (const id of chosen) {
      const found = await callApi(request, { method: 'GET', url: apiPath(site.auth, 'groups', id) });
      if (found.status === 200) items.push({ id, label: `group “${String(recordOf(site.auth.groups, found.body).name)}” (its permissions and memberships go with it)` });
    }
    if (items.length === 0) return refusedPage(reply, frame, 404, 'Nothing to delete: the groups are gone.');
    const action = bulk ? list : pagePath(site.root, 'groups', chosen[0]!, 'delete');
    return sendPage(reply, 200, DeletePage, { frame, action, items, cancel: bulk ? list : pagePath(site.root, 'groups', chosen[0]!, 'change'), bulk });
  }
  const refused: string[] = [];
  for (const id of chosen) {
    const answer = await callApi(request, { method: 'DELETE', url: apiPath(site.auth, 'groups', id), csrfToken: staff.csrfToken });
    if (answer.status >= 300) refused.push(id);
  }
  const failed = refused.length > 0 ? ` Not deleted (refused or gone): ${refused.join(', ')}.` : '';
  flash(request, reply, `Successfully deleted ${chosen.length - refused.length} groups.${failed}`);
  return reply.redirect(list, 302);
}
