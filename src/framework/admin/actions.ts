/**
 * The app's own bulk actions on a change list's selection (Django's admin actions): each is a detail
 * custom action of the collection, POSTed through the API for every selected record, so its
 * permissions, scope and handler decide, record by record, as for any client.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callApi } from './api.js';
import { flash } from './access.js';
import { counted, verboseNames } from './display.js';
import { may, refusedPage, staffFrame, staffOnly, type AdminCollection, type AdminSite } from './site.js';

export async function runAction(site: AdminSite, entry: AdminCollection, request: FastifyRequest, reply: FastifyReply, name: string, form: URLSearchParams): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, form, entry.collection.name);
  if (!staff) return reply;
  const { collection } = entry;
  const list = `${site.root}${collection.name}/`;
  const label = entry.options.actions?.[name];
  if (label === undefined || !(await may(staff.user, collection, 'change'))) {
    return refusedPage(reply, staffFrame(site, request, reply, staff, '', [{ label: verboseNames(entry).many, href: list }]), 403, 'You do not have permission to do this.');
  }
  const ids = [...new Set(form.getAll('_selected_action'))];
  if (ids.length === 0) {
    flash(request, reply, 'Items must be selected in order to perform actions on them. No items have been changed.');
    return reply.redirect(list, 302);
  }
  const refused: string[] = [];
  for (const id of ids) {
    const answer = await callApi(request, { method: 'POST', url: entry.action(id, name), csrfToken: staff.csrfToken });
    if (answer.status >= 300) refused.push(id);
  }
  const failed = refused.length > 0 ? ` Refused: ${refused.join(', ')}.` : '';
  flash(request, reply, `${label}: done for ${ids.length - refused.length} of ${counted(entry, ids.length)}.${failed}`);
  return reply.redirect(list, 302);
}
