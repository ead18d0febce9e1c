/**
 * Django's inlines: the records of a nested collection under the record a change form shows, listed
 * and added on that form, through the nested collection's own API (`/<parent>/<id>/<child>/`), so
 * its permissions, hooks and validation hold. Each inline needs the nested collection's own model
 * permissions, as an inline's model does in Django. (Adding one: change-form.ts, addInline.)
 */
import type { FastifyRequest } from 'fastify';
import type { Serializer } from '../declare/serializer.js';
import { callApi } from './api.js';
import type { StaffSession } from './access.js';
import { idOf, listOf } from './answers.js';
import { lookupsOf } from './related.js';
import { may, type AdminCollection, type AdminSite } from './site.js';

/** An inline's add the API refused: its messages and the values posted, shown again. */
export interface InlineRefusal {
  readonly child: string;
  readonly status: number;
  readonly message: string;
  readonly errors: Readonly<Record<string, readonly string[]>>;
  readonly values: Readonly<Record<string, unknown>>;
}

export interface InlineModel {
  readonly name: string;
  readonly columns: readonly string[];
  readonly rows: readonly { readonly id: string; readonly cells: readonly unknown[] }[];
  readonly count?: number;
  /** The form adding a record under the parent, when the user may add one. */
  readonly add?: {
    readonly action: string;
    readonly serializer: Serializer;
    readonly values: Readonly<Record<string, unknown>>;
    readonly errors: Readonly<Record<string, readonly string[]>>;
    readonly lookups: Readonly<Record<string, string>>;
  };
}

/** The inlines of the record `id` the user may view, each with its first page of records. */
export async function inlinesOf(site: AdminSite, entry: AdminCollection, request: FastifyRequest, staff: StaffSession, id: string, refused?: InlineRefusal): Promise<InlineModel[]> {
  const shown: InlineModel[] = [];
  for (const child of entry.inlines) {
    if (!(await may(staff.user, child, 'view'))) continue;
    const answer = await callApi(request, { method: 'GET', url: entry.nestedList(id, child) });
    if (answer.status !== 200) continue;
    const list = listOf(child, answer.body);
    const columns = child.serializerFor({ action: 'list', user: staff.user }).shownFields;
    const serializer = child.serializerFor({ action: 'create', user: staff.user });
    const mine = refused?.child === child.name ? refused : undefined;
    const add =
      child.builtInActions.has('create') && (await may(staff.user, child, 'add'))
        ? { action: `${site.root}${entry.collection.name}/${encodeURIComponent(id)}/inline/${child.name}/`, serializer, values: mine?.values ?? {}, errors: mine?.errors ?? {}, lookups: await lookupsOf(site, staff.user, serializer) }
        : undefined;
    shown.push({ name: child.name, columns, rows: list.rows.map((record) => ({ id: idOf(child, record), cells: columns.map((column) => record[column]) })), count: list.count, add });
  }
  return shown;
}
