/**
 * `/admin/<collection>/lookup/?q=`: the records a related field may pick, searched through the
 * collection's own list (its scope and permissions, one page of the API's size): each with the id to
 * type into the field. Without JavaScript it is a page to read the ids from; the admin's script reads
 * it to offer the same records as the field is typed in (static/admin.js).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callApi } from './api.js';
import { idOf, listOf } from './answers.js';
import { displayOf, verboseNames } from './display.js';
import { LookupPage } from './pages/lookup.js';
import { may, refusedPage, sendPage, staffFrame, staffOnly, type AdminCollection, type AdminSite } from './site.js';

/** A search longer than this is cut (the API bounds its own filters; this keeps the page's echo small too). */
const MAX_QUERY = 200;

export async function lookup(site: AdminSite, entry: AdminCollection, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, undefined, entry.collection.name);
  if (!staff) return reply;
  const { collection } = entry;
  const names = verboseNames(entry);
  const frame = staffFrame(site, request, reply, staff, `Select ${names.one}`, [{ label: names.many, href: `${site.root}${collection.name}/` }, { label: 'Lookup' }]);
  if (!(await may(staff.user, collection, 'view'))) return refusedPage(reply, frame, 403, 'You do not have permission to view this collection.');
  const q = (new URLSearchParams(request.url.split('?')[1] ?? '').get('q') ?? '').slice(0, MAX_QUERY);
  const search = collection.serializer.search.length > 0;
  const answer = await callApi(request, { method: 'GET', url: search && q ? `${entry.list}?${new URLSearchParams({ search: q }).toString()}` : entry.list });
  const items = listOf(collection, answer.body).rows.map((record) => ({ id: idOf(collection, record), label: displayOf(entry, record) }));
  return sendPage(reply, 200, LookupPage, { frame, action: `${site.root}${collection.name}/lookup/`, q, search, items });
}
