/**
 * The add and change forms: shown from the serializer the API would use for the write, posted
 * back here and passed on to the API as the form it is (the API reads a form's fields by their
 * kinds, as DRF does), so the write takes the collection's own path; a refusal's messages come
 * back beside the fields.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callApi, refusal } from './api.js';
import { CSRF_FIELD, flash } from './access.js';
import { ChangeFormPage } from './pages/change-form.js';
import { passwordField } from './password.js';
import { idOf, labelOf, recordOf } from './answers.js';
import { may, refusedPage, sendPage, staffFrame, staffOnly, type AdminCollection, type AdminSite } from './site.js';
import type { Serializer } from '../declare/serializer.js';

const BUTTONS = ['_save', '_addanother', '_continue'];

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

/** The form's fields the API is sent: not the admin's own, nor an empty input that means "not given". */
function apiForm(form: URLSearchParams, serializer: Serializer, creating: boolean): URLSearchParams {
  return new URLSearchParams([...form].filter(([name, value]) => name !== CSRF_FIELD && !BUTTONS.includes(name) && (value !== '' || !unset(serializer, name, creating))));
}

/** A refused form's values, to show again as posted (a ticked box as true). */
function postedValues(form: URLSearchParams, serializer: Serializer): Record<string, unknown> {
  const values: Record<string, unknown> = Object.fromEntries(form);
  for (const name of serializer.writable) {
    if (serializer.model.fields[name]!.valueType === 'boolean') values[serializer.shown(name)] = form.has(serializer.shown(name));
  }
  return values;
}

/** `id`: the record changed; undefined: a new one. `form`: the POSTed fields; undefined: the form to fill. */
export async function changeForm(site: AdminSite, entry: AdminCollection, request: FastifyRequest, reply: FastifyReply, id: string | undefined, form?: URLSearchParams): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, form);
  if (!staff) return reply;
  const { collection } = entry;
  const creating = id === undefined;
  const list = `${site.root}${collection.name}/`;
  const write = creating ? 'create' : collection.builtInActions.has('update') ? 'update' : 'partial_update';
  const frame = staffFrame(site, request, reply, staff, creating ? `Add ${collection.name}` : `Change ${collection.name}`, [{ label: collection.name, href: list }, { label: creating ? 'Add' : id }]);
  const editable = collection.builtInActions.has(write) && (await may(staff.user, collection, creating ? 'add' : 'change'));
  if (creating ? !editable : !(await may(staff.user, collection, 'view'))) return refusedPage(reply, frame, 403, 'You do not have permission to do this.');
  if (form && !editable) return refusedPage(reply, frame, 403, 'You do not have permission to change this record.');
  const serializer = collection.serializerFor({ action: write, user: staff.user });
  const action = creating ? `${list}add/` : `${list}${encodeURIComponent(id)}/change/`;
  const historyHref = creating ? undefined : `${list}${encodeURIComponent(id)}/history/`;
  const passwordHref = !creating && editable && passwordField(entry, staff.user) ? `${list}${encodeURIComponent(id)}/password/` : undefined;
  const page = { serializer, creating, action, editable, historyHref, passwordHref, deleteHref: !creating && collection.builtInActions.has('destroy') && (await may(staff.user, collection, 'delete')) ? `${list}${encodeURIComponent(id)}/delete/` : undefined };
  if (!form) {
    let values = {};
    if (!creating) {
      const answer = await callApi(request, { method: 'GET', url: entry.detail(id) });
      if (answer.status !== 200) return refusedPage(reply, frame, answer.status === 403 ? 403 : 404, `${collection.name} with ID “${id}” doesn’t exist. Perhaps it was deleted?`);
      values = recordOf(collection, answer.body);
    }
    return sendPage(reply, 200, ChangeFormPage, { frame, model: { ...page, values, errors: {} } });
  }
  const method = creating ? 'POST' : write === 'update' ? 'PUT' : 'PATCH';
  const answer = await callApi(request, { method, url: creating ? entry.list : entry.detail(id), form: apiForm(form, serializer, creating), csrfToken: staff.csrfToken });
  if (answer.status >= 300) {
    const { message, details } = refusal(answer);
    return sendPage(reply, answer.status, ChangeFormPage, { frame: { ...frame, error: message }, model: { ...page, values: postedValues(form, serializer), errors: details } });
  }
  const record = recordOf(collection, answer.body);
  const saved = idOf(collection, record) || id || '';
  const label = labelOf(collection, record, collection.serializerFor({ action: 'list', user: staff.user }).shownFields);
  const next = form.has('_addanother') ? `${list}add/` : form.has('_continue') ? `${list}${encodeURIComponent(saved)}/change/` : list;
  const more = form.has('_addanother') ? ' You may add another below.' : form.has('_continue') ? ' You may edit it again below.' : '';
  flash(request, reply, `The ${label} was ${creating ? 'added' : 'changed'} successfully.${more}`);
  return reply.redirect(next, 302);
}
