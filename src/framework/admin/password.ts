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
import { PasswordPage } from './pages/password.js';
import { may, refusedPage, sendPage, staffFrame, staffOnly, type AdminCollection, type AdminSite } from './site.js';

/** The password field a PATCH of the collection writes, by the name the API shows; undefined where none. */
export function passwordField(entry: AdminCollection, user: AuthUser): string | undefined {
  const { collection } = entry;
  if (!collection.builtInActions.has('partial_update')) return undefined;
  const serializer = collection.serializerFor({ action: 'partial_update', user });
  const name = serializer.writable.find((candidate) => serializer.model.fields[candidate]?.kind === 'password');
  return name === undefined ? undefined : serializer.shown(name);
}

export async function passwordChange(site: AdminSite, entry: AdminCollection, request: FastifyRequest, reply: FastifyReply, id: string, form?: URLSearchParams): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, form);
  if (!staff) return reply;
  const { collection } = entry;
  const list = `${site.root}${collection.name}/`;
  const change = `${list}${encodeURIComponent(id)}/change/`;
  const frame = staffFrame(site, request, reply, staff, `Change password: ${collection.name} ${id}`, [{ label: collection.name, href: list }, { label: id, href: change }, { label: 'Change password' }]);
  const field = passwordField(entry, staff.user);
  if (!field || !(await may(staff.user, collection, 'change'))) return refusedPage(reply, frame, 403, 'You do not have permission to change this password.');
  const found = await callApi(request, { method: 'GET', url: entry.detail(id) });
  if (found.status !== 200) return refusedPage(reply, frame, found.status === 403 ? 403 : 404, `${collection.name} with ID “${id}” doesn’t exist. Perhaps it was deleted?`);
  const action = `${list}${encodeURIComponent(id)}/password/`;
  if (!form) return sendPage(reply, 200, PasswordPage, { frame, action, errors: {} });
  const password = form.get('password1') ?? '';
  if (password !== (form.get('password2') ?? '')) return sendPage(reply, 400, PasswordPage, { frame, action, errors: { password2: ['The two password fields didn’t match.'] } });
  const answer = await callApi(request, { method: 'PATCH', url: entry.detail(id), form: new URLSearchParams([[field, password]]), csrfToken: staff.csrfToken });
  if (answer.status >= 300) {
    const { message, details } = refusal(answer);
    const shown = details[field] ?? (Object.keys(details).length > 0 ? Object.values(details).flat() : [message]);
    return sendPage(reply, answer.status, PasswordPage, { frame, action, errors: { password1: shown } });
  }
  flash(request, reply, 'Password changed successfully.');
  return reply.redirect(change, 302);
}
