/**
 * A user's change page: the flags by a PATCH of `/auth/users/<id>/` (a superuser's alone: the API
 * refuses anyone else, and the form shows them only to superusers), the groups and own permissions
 * one membership or grant at a time through `/auth/users/<id>/groups/` and `/permissions/`
 * (grants.ts), and the password on its own form, by the same PATCH. No add page: an account is made
 * by the app's own users collection or `createuser`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthUser } from '../../base/auth-user.js';
import { callApi, refusal } from '../api.js';
import { flash } from '../access.js';
import { recordOf } from '../answers.js';
import { passwordForm } from '../password.js';
import { refusedPage, sendPage, staffFrame, staffOnly, type AdminSite } from '../site.js';
import { FLAGS, UserFormPage, type UserFormModel } from './pages/user-form.js';
import { badNames, initialOf, picked, saveLinks } from './grants.js';
import { groupChoices, permissionChoices } from './choices.js';
import { AUTH_GROUP, apiPath, authBucket, pagePath } from './auth-paths.js';
import { changesUsers, managesGroups, viewsUsers } from './rights.js';

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

const crumbs = (site: AdminSite, id: string) => [{ label: AUTH_GROUP }, { label: 'users', href: pagePath(site.root, 'users') }, { label: id }];

export async function userForm(site: AdminSite, request: FastifyRequest, reply: FastifyReply, id: string, form?: URLSearchParams): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, form, authBucket('users'));
  if (!staff) return reply;
  const frame = staffFrame(site, request, reply, staff, 'Change user', crumbs(site, id));
  if (!(await viewsUsers(staff.user))) return refusedPage(reply, frame, 403, 'You do not have permission to view users.');
  const editFlags = staff.user.isSuperuser;
  const editMemberships = await managesGroups(staff.user);
  if (form && !editFlags && !editMemberships) return refusedPage(reply, frame, 403, 'You do not have permission to change users.');
  const found = await callApi(request, { method: 'GET', url: apiPath(site.auth, 'users', id) });
  if (found.status !== 200) return refusedPage(reply, frame, 404, `user with ID “${id}” doesn’t exist. Perhaps it was deleted?`);
  const record = recordOf(site.auth.users, found.body);
  const stored = { groups: strings(record.groups), permissions: strings(record.user_permissions) };
  const flags = Object.fromEntries(FLAGS.map(({ name }) => [name, record[name] === true]));
  const model = async (shown: typeof stored, initial: typeof stored, shownFlags: Record<string, boolean>, errors: UserFormModel['errors']): Promise<UserFormModel> => ({
    action: pagePath(site.root, 'users', id, 'change'),
    id,
    username: String(record.username ?? ''),
    flags: shownFlags,
    groups: shown.groups,
    permissions: shown.permissions,
    initialGroups: initial.groups,
    initialPermissions: initial.permissions,
    groupChoices: editMemberships ? await groupChoices(site, request) : undefined,
    permissionChoices: permissionChoices(site, [...shown.permissions, ...initial.permissions]),
    editFlags,
    editMemberships,
    passwordHref: (await changesUsers(staff.user)) ? pagePath(site.root, 'users', id, 'password') : undefined,
    errors,
  });
  if (!form) return sendPage(reply, 200, UserFormPage, { frame, model: await model(stored, stored, flags, {}) });

  const posted = { groups: picked(form, 'groups'), permissions: picked(form, 'user_permissions') };
  const initial = { groups: initialOf(form, 'groups'), permissions: initialOf(form, 'user_permissions') };
  const postedFlags = editFlags ? Object.fromEntries(FLAGS.map(({ name }) => [name, form.get(name) === 'true'])) : flags;
  const bad = editMemberships ? badNames(posted.permissions) : undefined;
  if (bad) return sendPage(reply, 400, UserFormPage, { frame, model: await model(posted, initial, postedFlags, { user_permissions: bad }) });
  // Only the flags that differ from what is stored: a PATCH of none is no write at all.
  const changed = FLAGS.filter(({ name }) => postedFlags[name] !== flags[name]).map(({ name }): [string, string] => [name, String(postedFlags[name])]);
  if (changed.length > 0) {
    const answer = await callApi(request, { method: 'PATCH', url: apiPath(site.auth, 'users', id), form: new URLSearchParams(changed), csrfToken: staff.csrfToken });
    if (answer.status >= 300) {
      const { message, details } = refusal(answer);
      const errors = Object.keys(details).length > 0 ? details : { non_field_errors: [message] };
      return sendPage(reply, answer.status === 404 ? 404 : answer.status === 403 ? 403 : 400, UserFormPage, { frame, model: await model(posted, initial, postedFlags, errors) });
    }
  }
  const refused = editMemberships
    ? [
        ...(await saveLinks(request, staff.csrfToken, { url: apiPath(site.auth, 'users', id, 'groups'), key: 'group_id', styled: site.auth.users }, initial.groups, posted.groups)),
        ...(await saveLinks(request, staff.csrfToken, { url: apiPath(site.auth, 'users', id, 'permissions'), key: 'name', styled: site.auth.users }, initial.permissions, posted.permissions)),
      ]
    : [];
  const failed = refused.length > 0 ? ` Not saved: ${refused.join('; ')}.` : '';
  flash(request, reply, `The user “${String(record.username)}” was changed successfully.${failed}`);
  return reply.redirect(form.has('_continue') || refused.length > 0 ? pagePath(site.root, 'users', id, 'change') : pagePath(site.root, 'users'), 302);
}

/** Django's admin password form for an account, sent as a PATCH of `/auth/users/<id>/` (users.change). */
export function userPassword(site: AdminSite, request: FastifyRequest, reply: FastifyReply, id: string, form?: URLSearchParams): Promise<FastifyReply> {
  const target = { name: 'users', bucket: authBucket('users'), list: pagePath(site.root, 'users'), record: apiPath(site.auth, 'users', id), model: site.auth.users.serializer.model, field: async (user: AuthUser) => ((await changesUsers(user)) ? 'password' : undefined) };
  return passwordForm(site, target, request, reply, id, form);
}
