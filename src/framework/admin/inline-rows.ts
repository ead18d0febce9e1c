/**
 * Changing and deleting an inline's records from the parent's change form (Django's TabularInline
 * with its delete checkbox): POST `<parent>/<id>/inline/<child>/change/` carries each listed row as
 * `<child>-<n>-id` (its record key), `<child>-<n>-<field>` and `<child>-<n>-DELETE`. Each row is
 * sent on by itself through the nested collection's API — a DELETE, or a PATCH of the fields that
 * differ from the record as the API reads it now (an untouched row writes nothing) — so its scope,
 * permissions, hooks and validation hold; a refused row comes back with its messages.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Field } from '../../core/fields.js';
import { stringifyJson } from '../../core/json.js';
import type { Collection } from '../declare/collection.js';
import type { Serializer } from '../declare/serializer.js';
import { flash } from './access.js';
import { callApi, refusal, type ApiAnswer } from './api.js';
import { recordOf } from './answers.js';
import { apiForm, changeForm, inUtc, postedValues } from './change-form.js';
import { verboseNames } from './display.js';
import { rowInputs, type InlineRowRefusal } from './inlines.js';
import { may, refusedPage, staffFrame, staffOnly, type AdminCollection, type AdminSite } from './site.js';

type Row = Readonly<Record<string, unknown>>;

/** Each row is a request or two to the API: a form posting more than this (the table lists one page) is refused whole. */
export const MAX_ROWS = 1000;

/** The rows a form posts: each row's key, whether it is to be deleted, and its fields without the prefix. */
function postedRows(form: URLSearchParams, child: string): { key: string; deleting: boolean; fields: URLSearchParams }[] {
  const rows = new Map<string, { key: string; deleting: boolean; fields: URLSearchParams }>();
  for (const [name, value] of form) {
    const found = /^(\d{1,6})-(.+)$/.exec(name.startsWith(`${child}-`) ? name.slice(child.length + 1) : '');
    if (!found) continue;
    const row = rows.get(found[1]!) ?? { key: '', deleting: false, fields: new URLSearchParams() };
    rows.set(found[1]!, row);
    if (found[2] === 'id') row.key = value;
    else if (found[2] === 'DELETE') row.deleting = true;
    else row.fields.append(found[2]!, value);
  }
  return [...rows.values()].filter(({ key }) => key !== '');
}

/** Whether a posted input's text means the value the record holds (as the input showed it). */
function same(field: Field, posted: string, current: unknown): boolean {
  if (current === null || current === undefined) return posted === '';
  if (field.kind === 'timestamp') return Date.parse(inUtc(posted)) === Date.parse(String(current));
  if (field.valueType === 'json') {
    try {
      return stringifyJson(JSON.parse(posted)) === stringifyJson(current);
    } catch {
      return false;
    }
  }
  return posted === (typeof current === 'object' ? stringifyJson(current) : String(current));
}

/** A PATCH's form of the row's inputs whose values differ from `current` (a box unticked is `false`). */
function changes(serializer: Serializer, fields: URLSearchParams, current: Row): URLSearchParams {
  const sent = new URLSearchParams();
  const inputs = rowInputs(serializer);
  const api = apiForm(fields, serializer, false);
  for (const name of serializer.writable) {
    const shown = serializer.shown(name);
    const field = serializer.model.fields[name]!;
    if (!inputs.has(shown)) continue;
    if (field.valueType === 'boolean') {
      if (fields.has(shown) !== (current[shown] === true)) sent.set(shown, String(fields.has(shown)));
      continue;
    }
    const posted = fields.get(shown);
    if (posted !== null && !same(field, posted, current[shown])) sent.set(shown, api.get(shown) ?? posted);
  }
  return sent;
}

/** A refused row's messages: by field, else the API's message for the row. */
function rowErrors(answer: ApiAnswer): Readonly<Record<string, readonly string[]>> {
  const { message, details } = refusal(answer);
  return Object.keys(details).length > 0 ? details : { non_field_errors: [message] };
}

export async function changeInlineRows(site: AdminSite, entry: AdminCollection, request: FastifyRequest, reply: FastifyReply, id: string, childName: string, form: URLSearchParams): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, form, entry.collection.name);
  if (!staff) return reply;
  const change = `${site.root}${entry.collection.name}/${encodeURIComponent(id)}/change/`;
  const child: Collection | undefined = entry.inlines.find(({ name }) => name === childName);
  const canChange = child !== undefined && child.builtInActions.has('partial_update') && (await may(staff.user, child, 'change'));
  const canDelete = child !== undefined && child.builtInActions.has('destroy') && (await may(staff.user, child, 'delete'));
  const rows = child ? postedRows(form, child.name) : [];
  if (!child || (!canChange && !canDelete) || (rows.some(({ deleting }) => deleting) && !canDelete)) {
    return refusedPage(reply, staffFrame(site, request, reply, staff, '', [{ label: verboseNames(entry).many, href: `${site.root}${entry.collection.name}/` }]), 403, 'You do not have permission to do this.');
  }
  if (rows.length > MAX_ROWS) {
    return changeForm(site, entry, request, reply, id, undefined, { child: child.name, status: 400, message: `At most ${MAX_ROWS} rows are saved at once; ${rows.length} were posted.`, errors: {}, values: {} });
  }
  const serializer = child.serializerFor({ action: 'partial_update', user: staff.user });
  const refused: Record<string, InlineRowRefusal> = {};
  let changed = 0;
  let deleted = 0;
  for (const row of rows) {
    const url = entry.nestedDetail(id, child, row.key);
    const shown = postedValues(row.fields, serializer);
    if (row.deleting) {
      const answer = await callApi(request, { method: 'DELETE', url, csrfToken: staff.csrfToken });
      if (answer.status < 300) deleted += 1;
      else refused[row.key] = { values: shown, errors: rowErrors(answer), deleting: true };
      continue;
    }
    if (!canChange) continue;
    const current = await callApi(request, { method: 'GET', url });
    if (current.status !== 200) {
      refused[row.key] = { values: shown, errors: { non_field_errors: [`${verboseNames({ collection: child, options: {} }).one} with ID “${row.key}” doesn’t exist. Perhaps it was deleted?`] } };
      continue;
    }
    const sent = changes(serializer, row.fields, recordOf(child, current.body));
    if (sent.size === 0) continue;
    const answer = await callApi(request, { method: 'PATCH', url, form: sent, csrfToken: staff.csrfToken });
    if (answer.status < 300) changed += 1;
    else refused[row.key] = { values: shown, errors: rowErrors(answer) };
  }
  if (Object.keys(refused).length > 0) {
    return changeForm(site, entry, request, reply, id, undefined, { child: child.name, status: 400, message: 'Please correct the errors below.', errors: {}, values: {}, rows: refused });
  }
  flash(request, reply, `The ${verboseNames({ collection: child, options: {} }).many} were saved: ${changed} changed, ${deleted} deleted.`);
  return reply.redirect(change, 302);
}
