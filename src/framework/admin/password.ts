/**
 * Django's admin password change (`<collection>/<id>/password/`): for a collection whose update
 * writes a password field (the app's users), the new password twice, sent to the API as a PATCH of
 * that field alone, so it is hashed, checked and its credentials moved on as any change of it is.
 * The page never shows the stored value: the API never answers it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthUser } from '../base/auth-user.js';
import { callApi, refusal } from './api.js';
import { flash } from './access.js';
import { OLD_PASSWORD, PasswordPage } from './pages/password.js';
import type { Model } from '../declare/model.js';
import { CURRENT_PASSWORD } from '../declare/users/rules.js';
import { User } from '../declare/users/user-model.js';
import { may, refusedPage, sendPage, staffFrame, staffOnly, type AdminCollection, type AdminSite } from './site.js';

/** The password field a PATCH of the collection writes, by the name the API shows; undefined where none. */
export function passwordField(entry: AdminCollection, user: AuthUser): string | undefined {
  const { collection } = entry;
  if (!collection.builtInActions.has('partial_update')) return undefined;
  const serializer = collection.serializerFor({ action: 'partial_update', user });
  const name = serializer.writable.find((candidate) => serializer.model.fields[candidate]?.kind === 'password');
  return name === undefined ? undefined : serializer.shown(name);
}

/**
 * Where a password form reads and writes: its record's name in the admin's crumbs, the admin's list
 * it is under, the API's record, and the field a PATCH of it writes for `user` (undefined: none, or
 * not for them).
 */
export interface PasswordTarget {
  readonly name: string;
  /** The records' model: a user's own account, where its updates ask the current password, gets a field for it. */
  readonly model: Model;
  readonly list: string;
  readonly record: string;
  /** The throttle bucket the page counts in: the API's for the collection. */
  readonly bucket: string;
  field(user: AuthUser): Promise<string | undefined>;
}

export function passwordChange(site: AdminSite, entry: AdminCollection, request: FastifyRequest, reply: FastifyReply, id: string, form?: URLSearchParams): Promise<FastifyReply> {
  const target: PasswordTarget = {
    name: entry.collection.name,
    list: `${site.root}${entry.collection.name}/`,
    record: entry.detail(id),
    bucket: entry.collection.name,
    model: entry.collection.serializer.model,
    field: async (user) => ((await may(user, entry.collection, 'change')) ? passwordField(entry, user) : undefined),
  };
  return passwordForm(site, target, request, reply, id, form);
}

export async function passwordForm(site: AdminSite, target: PasswordTarget, request: FastifyRequest, reply: FastifyReply, id: string, form?: URLSearchParams): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, form, target.bucket);
  if (!staff) return reply;
  const { list } = target;
  const change = `${list}${encodeURIComponent(id)}/change/`;
  const frame = staffFrame(site, request, reply, staff, `Change password: ${target.name} ${id}`, [{ label: target.name, href: list }, { label: id, href: change }, { label: 'Change password' }]);
  const field = await target.field(staff.user);
  if (!field) return refusedPage(reply, frame, 403, 'You do not have permission to change this password.');
  const found = await callApi(request, { method: 'GET', url: target.record });
  if (found.status !== 200) return refusedPage(reply, frame, found.status === 403 ? 403 : 404, `${target.name} with ID “${id}” doesn’t exist. Perhaps it was deleted?`);
  const action = `${list}${encodeURIComponent(id)}/password/`;
  // The API asks a user changing their own password for the current one (a stolen session cannot lock its owner out).
  const current = target.model.table === User.table && id === String(staff.user.id) && target.model.rules?.updates?.inputs[CURRENT_PASSWORD] !== undefined;
  if (!form) return sendPage(reply, 200, PasswordPage, { frame, action, current, errors: {} });
  const password = form.get('password1') ?? '';
  if (password !== (form.get('password2') ?? '')) return sendPage(reply, 400, PasswordPage, { frame, action, current, errors: { password2: ['The two password fields didn’t match.'] } });
  const sent = new URLSearchParams([[field, password], ...(current ? [[CURRENT_PASSWORD, form.get(OLD_PASSWORD) ?? '']] : [])]);
  const answer = await callApi(request, { method: 'PATCH', url: target.record, form: sent, csrfToken: staff.csrfToken });
  if (answer.status >= 300) {
    const { message, details } = refusal(answer);
    if (current && details[CURRENT_PASSWORD]) return sendPage(reply, answer.status, PasswordPage, { frame, action, current, errors: { [OLD_PASSWORD]: details[CURRENT_PASSWORD] } });
    const shown = details[field] ?? (Object.keys(details).length > 0 ? Object.values(details).flat() : [message]);
    return sendPage(reply, answer.status, PasswordPage, { frame, action, current, errors: { password1: shown } });
  }
  flash(request, reply, 'Password changed successfully.');
  return reply.redirect(change, 302);
}
