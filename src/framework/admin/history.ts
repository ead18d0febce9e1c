/**
 * A record's history page (Django's history_view): the log entries the write unit wrote for it,
 * through the API and the admin alike. Shown to those who may view the collection, for a record
 * the API shows them (its scope holds here too).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callApi } from './api.js';
import { HistoryPage } from './pages/history.js';
import { verboseNames } from './display.js';
import { may, refusedPage, sendPage, staffFrame, staffOnly, type AdminCollection, type AdminSite } from './site.js';

/** How many entries the page shows (the newest): a record written a million times must not make a page of them all. */
export const HISTORY_SHOWN = 200;

export async function history(site: AdminSite, entry: AdminCollection, request: FastifyRequest, reply: FastifyReply, id: string): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, undefined, entry.collection.name);
  if (!staff) return reply;
  const { collection } = entry;
  const list = `${site.root}${collection.name}/`;
  const names = verboseNames(entry);
  const crumbs = [{ label: names.many, href: list }, { label: id, href: `${list}${encodeURIComponent(id)}/change/` }, { label: 'History' }];
  const frame = staffFrame(site, request, reply, staff, `Change history: ${names.one} ${id}`, crumbs);
  if (!(await may(staff.user, collection, 'view'))) return refusedPage(reply, frame, 403, 'You do not have permission to view this collection.');
  const answer = await callApi(request, { method: 'GET', url: entry.detail(id) });
  if (answer.status !== 200) return refusedPage(reply, frame, answer.status === 403 ? 403 : 404, `${names.one} with ID “${id}” doesn’t exist. Perhaps it was deleted?`);
  return sendPage(reply, 200, HistoryPage, { frame, entries: await site.history(collection, id) });
}
