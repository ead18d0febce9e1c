/**
 * The add and change forms: shown from the serializer the API would use for the write, posted
 * back here and passed on to the API as the form it is (the API reads a form's fields by their
 * kinds, as DRF does), so the write takes the collection's own path; a refusal's messages come
 * back beside the fields.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callApi, refusal } from './api.js';
import { CSRF_FIELD, csrfHeader, flash } from './access.js';
import { ChangeFormPage } from './pages/change-form.js';
import { passwordField } from './password.js';
import { idOf, recordOf } from './answers.js';
import { labelOf, verboseNames } from './display.js';
import { shownRows } from './values.js';
import { may, refusedPage, sendPage, staffFrame, staffOnly, type AdminCollection, type AdminSite } from './site.js';
import type { Serializer } from '../declare/serializer.js';
import { lookupsOf } from './related.js';
import { leadingField } from '../stages/parsers/leading-field.js';
import { clearName } from '../render/browsable/fields.js';
import { inlinesOf, type InlineRefusal } from './inlines.js';
import type { Collection } from '../declare/collection.js';
import type { AuthUser } from '../base/auth-user.js';
import type { Shown } from './pages/value.js';
import { ApiError } from '../base/errors.js';

const BUTTONS = ['_save', '_addanother', '_continue'];

/** A POSTed form: its fields (urlencoded), or a form with files, its multipart body still unread. */
export type Posted = { readonly form: URLSearchParams } | { readonly unread: true };

/** How far into a form with files its CSRF field may come: its first parts, before any file. */
const CSRF_FIELD_WITHIN = 16 * 1024;

/**
 * The CSRF field of a form with files, read from its first parts (as the form puts it), the body
 * left to stream on; none read where the `X-CSRFToken` header carries the token (a script's post),
 * the body then not read at all before the check. An ApiError 400 (parse_error) for a body
 * malformed before the field.
 */
async function leadingCsrf(request: FastifyRequest): Promise<URLSearchParams> {
  if (csrfHeader(request) !== undefined) return new URLSearchParams();
  const token = await leadingField(request.raw, request.headers['content-type'] ?? '', CSRF_FIELD, CSRF_FIELD_WITHIN);
  return new URLSearchParams(token === undefined ? [] : [[CSRF_FIELD, token]]);
}


/**
 * Whether an empty input means "not given" (DRF's HTML form reading): a field this write does not
 * require, that takes no empty text and no null — a number with a default, say — and any secret
 * (a password) left empty on a change, which stays as it was.
 */
function unset(serializer: Serializer, shown: string, creating: boolean): boolean {
  const name = serializer.writable.find((candidate) => serializer.shown(candidate) === shown);
  const field = name === undefined ? undefined : serializer.model.fields[name];
  if (!field || name === undefined) return false;
  if (!creating && serializer.hidden.has(name)) return true;
  const required = field.required === 'always' || (field.required === 'create' && creating);
  return !required && !field.nullable && field.valueType !== 'string';
}

/**
 * The form's fields the API is sent: not the admin's own, nor an empty input that means "not
 * given", nor a field the admin declares read-only (Django ignores a posted read-only field too).
 */
export function apiForm(form: URLSearchParams, serializer: Serializer, creating: boolean, readOnly: ReadonlySet<string> = new Set()): URLSearchParams {
  const times = timestamps(serializer);
  const files = serializer.writable.filter((name) => serializer.model.fields[name]!.file).map((name) => serializer.shown(name));
  const clears = new Set(files.map(clearName));
  return new URLSearchParams([
    ...[...form]
      .filter(([name, value]) => name !== CSRF_FIELD && !BUTTONS.includes(name) && !clears.has(name) && !readOnly.has(name) && (value !== '' || !unset(serializer, name, creating)))
      .map(([name, value]) => [name, times.has(name) ? inUtc(value) : value]),
    // A ticked clear box is the empty text that clears a nullable file (a file chosen too wins).
    ...files.filter((name) => form.has(clearName(name)) && !readOnly.has(name)).map((name) => [name, '']),
  ]);
}

const timestamps = (serializer: Serializer): Set<string> =>
  new Set(serializer.writable.filter((name) => serializer.model.fields[name]!.kind === 'timestamp').map((name) => serializer.shown(name)));

/** A `datetime-local` picker's value (no offset; the form says UTC) as the API reads a time: in UTC, with seconds. */
export const inUtc = (value: string): string => (/^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(value) ? `${value}:00Z` : /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$/.test(value) ? `${value}Z` : value);

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A refused form's values, to show again as posted (a ticked box as true). */
export function postedValues(form: URLSearchParams, serializer: Serializer): Record<string, unknown> {
  const values: Record<string, unknown> = Object.fromEntries(form);
  for (const name of serializer.writable) {
    const shown = serializer.shown(name);
    const { valueType } = serializer.model.fields[name]!;
    if (valueType === 'boolean') values[shown] = form.has(shown);
    const posted = values[shown];
    if (typeof posted !== 'string') continue;
    // JSON as it was typed (text that is not JSON comes back as a JSON string); a picked time as the UTC it means.
    if (valueType === 'json') values[shown] = jsonOrText(posted);
    if (serializer.model.fields[name]!.kind === 'timestamp') values[shown] = inUtc(posted);
  }
  return values;
}

/** How a record's `names` are shown (a related record by its display name, linked where the user may view it), by shown name. */
async function shownOf(site: AdminSite, request: FastifyRequest, user: AuthUser, collection: Collection, values: Readonly<Record<string, unknown>>, names: readonly string[]): Promise<Record<string, Shown>> {
  const [cells] = await shownRows(site, request, user, collection.serializerFor({ action: 'retrieve', user }), names, [values]);
  return Object.fromEntries(names.map((name, index) => [name, cells![index]!]));
}

/**
 * `id`: the record changed; undefined: a new one. `posted`: the POSTed fields and files; undefined: the form to
 * fill. `refused`: an inline's add the API refused, shown again with its messages.
 */
export async function changeForm(
  site: AdminSite,
  entry: AdminCollection,
  request: FastifyRequest,
  reply: FastifyReply,
  id: string | undefined,
  posted?: Posted,
  refused?: InlineRefusal,
): Promise<FastifyReply> {
  const { collection } = entry;
  // Staff and the CSRF field before a byte of a file is read. A body malformed before the field has
  // no token to check a session by: a page of its own says so, as a CSRF refusal's does.
  let leading: URLSearchParams | undefined;
  try {
    leading = posted && ('form' in posted ? posted.form : await leadingCsrf(request));
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) return refusedPage(reply, { root: site.root, title: '' }, 400, error.message);
    throw error;
  }
  const staff = await staffOnly(site, request, reply, leading, collection.name);
  if (!staff) return reply;
  const creating = id === undefined;
  const list = `${site.root}${collection.name}/`;
  // A change leaving out read-only fields is a PATCH where the collection has one (a PUT would ask for them).
  const partial = !creating && (entry.options.readOnly?.length ?? 0) > 0 && collection.builtInActions.has('partial_update');
  const write = creating ? 'create' : collection.builtInActions.has('update') && !partial ? 'update' : 'partial_update';
  const names = verboseNames(entry);
  const frame = staffFrame(site, request, reply, staff, creating ? `Add ${names.one}` : `Change ${names.one}`, [{ label: names.many, href: list }, { label: creating ? 'Add' : id }]);
  const editable = collection.builtInActions.has(write) && (await may(staff.user, collection, creating ? 'add' : 'change'));
  if (creating ? !editable : !(await may(staff.user, collection, 'view'))) return refusedPage(reply, frame, 403, 'You do not have permission to do this.');
  if (posted && !editable) return refusedPage(reply, frame, 403, 'You do not have permission to change this record.');
  const serializer = collection.serializerFor({ action: write, user: staff.user });
  // Read-only on a change only: the add form sets them (a record's key, say), as it is set once.
  const readOnly = new Set(creating ? [] : (entry.options.readOnly ?? []).map((name) => serializer.shown(name)));
  const action = creating ? `${list}add/` : `${list}${encodeURIComponent(id)}/change/`;
  const historyHref = creating ? undefined : `${list}${encodeURIComponent(id)}/history/`;
  const passwordHref = !creating && editable && passwordField(entry, staff.user) ? `${list}${encodeURIComponent(id)}/password/` : undefined;
  const page = { serializer, creating, action, editable, readOnly, historyHref, passwordHref, lookups: await lookupsOf(site, staff.user, serializer), deleteHref: !creating && collection.builtInActions.has('destroy') && (await may(staff.user, collection, 'delete')) ? `${list}${encodeURIComponent(id)}/delete/` : undefined };
  if (!posted) {
    let values: Record<string, unknown> = {};
    let shown: Record<string, Shown> = {};
    if (!creating) {
      const answer = await callApi(request, { method: 'GET', url: entry.detail(id) });
      if (answer.status !== 200) return refusedPage(reply, frame, answer.status === 403 ? 403 : 404, `${names.one} with ID “${id}” doesn’t exist. Perhaps it was deleted?`);
      values = recordOf(collection, answer.body);
      shown = await shownOf(site, request, staff.user, collection, values, Object.keys(values));
    }
    const inlines = creating ? [] : await inlinesOf(site, entry, request, staff, id, refused);
    return sendPage(reply, refused?.status ?? 200, ChangeFormPage, { frame: refused ? { ...frame, error: refused.message } : frame, model: { ...page, values, shown, errors: {}, inlines } });
  }
  const call = { method: creating ? 'POST' : write === 'update' ? 'PUT' : 'PATCH', url: creating ? entry.list : entry.detail(id), csrfToken: staff.csrfToken } as const;
  // A form with files streams on to the API's own multipart parsing, which hands its fields here to be read as a form's are.
  let read = 'form' in posted ? posted.form : undefined;
  const answer =
    'form' in posted
      ? await callApi(request, { ...call, form: apiForm(posted.form, serializer, creating, readOnly) })
      : await callApi(request, {
          ...call,
          formReader: (fields) => apiForm((read = fields), serializer, creating, readOnly),
          multipart: { body: request.raw, contentType: request.headers['content-type'] ?? '', contentLength: request.headers['content-length'] },
        });
  const form = read ?? new URLSearchParams();
  if (answer.status >= 300) {
    const { message, details } = refusal(answer);
    const inlines = creating ? [] : await inlinesOf(site, entry, request, staff, id);
    // Refused before its fields were read (a body over the limit), a change shows the record as it is.
    const values = read ? postedValues(read, serializer) : creating ? {} : recordOf(collection, (await callApi(request, { method: 'GET', url: entry.detail(id) })).body);
    // The records the posted foreign keys name, beside their boxes.
    const shown = await shownOf(site, request, staff.user, collection, values, Object.keys(page.lookups).filter((name) => name in values));
    return sendPage(reply, answer.status, ChangeFormPage, { frame: { ...frame, error: message }, model: { ...page, values, shown, errors: details, inlines } });
  }
  const record = recordOf(collection, answer.body);
  const saved = idOf(collection, record) || id || '';
  const label = labelOf(entry, record);
  const next = form.has('_addanother') ? `${list}add/` : form.has('_continue') ? `${list}${encodeURIComponent(saved)}/change/` : list;
  const more = form.has('_addanother') ? ' You may add another below.' : form.has('_continue') ? ' You may edit it again below.' : '';
  flash(request, reply, `The ${label} was ${creating ? 'added' : 'changed'} successfully.${more}`);
  return reply.redirect(next, 302);
}

/** POST `<parent>/<id>/inline/<child>/`: a record added under `id` through the nested collection's API. */
export async function addInline(site: AdminSite, entry: AdminCollection, request: FastifyRequest, reply: FastifyReply, id: string, childName: string, form: URLSearchParams): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, form, entry.collection.name);
  if (!staff) return reply;
  const change = `${site.root}${entry.collection.name}/${encodeURIComponent(id)}/change/`;
  const child: Collection | undefined = entry.inlines.find(({ name }) => name === childName);
  if (!child || !child.builtInActions.has('create') || !(await may(staff.user, child, 'add'))) {
    return refusedPage(reply, staffFrame(site, request, reply, staff, '', [{ label: entry.collection.name, href: `${site.root}${entry.collection.name}/` }]), 403, 'You do not have permission to do this.');
  }
  const serializer = child.serializerFor({ action: 'create', user: staff.user });
  const answer = await callApi(request, { method: 'POST', url: entry.nestedList(id, child), form: apiForm(form, serializer, true), csrfToken: staff.csrfToken });
  if (answer.status >= 300) {
    const { message, details } = refusal(answer);
    return changeForm(site, entry, request, reply, id, undefined, { child: child.name, status: answer.status, message, errors: details, values: Object.fromEntries(form) });
  }
  flash(request, reply, `The ${labelOf({ collection: child, options: {} }, recordOf(child, answer.body))} was added successfully.`);
  return reply.redirect(change, 302);
}
