/**
 * Deleting from the admin, one record or the change list's selection: a confirmation page listing
 * what goes (each record read through the API, so only what the user may see is listed), then a
 * DELETE through the API for each, with the collection's hooks and rules.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callApi } from './api.js';
import { DeletePage } from './pages/delete.js';
import { idOf, recordOf } from './answers.js';
import { counted, labelOf, verboseNames } from './display.js';
import { flash } from './access.js';
import { may, refusedPage, sendPage, staffFrame, staffOnly, type AdminCollection, type AdminSite } from './site.js';

/** The records the ids name that the user may see, with their labels. */
async function readable(request: FastifyRequest, entry: AdminCollection, ids: readonly string[]) {
  const items = [];
  for (const id of new Set(ids)) {
    const answer = await callApi(request, { method: 'GET', url: entry.detail(id) });
    if (answer.status === 200) {
      const record = recordOf(entry.collection, answer.body);
      items.push({ id: idOf(entry.collection, record) || id, label: labelOf(entry, record) });
    }
  }
  return items;
}

/** `ids`: one record (`/<id>/delete/`) or the change list's selection (`bulk`). */
export async function deleteRecords(site: AdminSite, entry: AdminCollection, request: FastifyRequest, reply: FastifyReply, ids: readonly string[], bulk: boolean, form?: URLSearchParams): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, form, entry.collection.name);
  if (!staff) return reply;
  const { collection } = entry;
  const list = `${site.root}${collection.name}/`;
  const action = bulk ? list : `${list}${encodeURIComponent(ids[0]!)}/delete/`;
  const frame = staffFrame(site, request, reply, staff, 'Are you sure?', [{ label: verboseNames(entry).many, href: list }, { label: 'Delete' }]);
  if (!collection.builtInActions.has('destroy') || !(await may(staff.user, collection, 'delete'))) {
    return refusedPage(reply, frame, 403, 'You do not have permission to delete these records.');
  }
  if (bulk && ids.length === 0) {
    flash(request, reply, 'Items must be selected in order to perform actions on them. No items have been changed.');
    return reply.redirect(list, 302);
  }
  if (form?.get('post') !== 'yes') {
    const items = await readable(request, entry, ids);
    if (items.length === 0) return refusedPage(reply, frame, 404, 'Nothing to delete: the records are gone, or not yours to see.');
    return sendPage(reply, 200, DeletePage, { frame, action, items, cancel: bulk ? list : `${list}${encodeURIComponent(ids[0]!)}/change/`, bulk });
  }
  let deleted = 0;
  const refused: string[] = [];
  for (const id of new Set(ids)) {
    const answer = await callApi(request, { method: 'DELETE', url: entry.detail(id), csrfToken: staff.csrfToken });
    if (answer.status < 300) deleted += 1;
    else refused.push(id);
  }
  const failed = refused.length > 0 ? ` Not deleted (refused or gone): ${refused.join(', ')}.` : '';
  flash(request, reply, `Successfully deleted ${counted(entry, deleted)}.${failed}`);
  return reply.redirect(list, 302);
}
