/**
 * Django's inlines: the records of a nested collection under the record a change form shows, listed
 * and added on that form, through the nested collection's own API (`/<parent>/<id>/<child>/`), so
 * its permissions, hooks and validation hold. Each inline needs the nested collection's own model
 * permissions, as an inline's model does in Django. (Adding one: change-form.ts, addInline; changing
 * and deleting the listed ones: inline-rows.ts.)
 */
import type { FastifyRequest } from 'fastify';
import type { Serializer } from '../declare/serializer.js';
import { callApi } from './api.js';
import type { StaffSession } from './access.js';
import { idOf, listOf } from './answers.js';
import { lookupsOf } from './related.js';
import { verboseNames } from './display.js';
import { shownRows } from './values.js';
import type { Shown } from './pages/value.js';
import { may, type AdminCollection, type AdminSite } from './site.js';

/** A listed row whose change or deletion the API refused: the values posted and its messages. */
export interface InlineRowRefusal {
  readonly values: Readonly<Record<string, unknown>>;
  readonly errors: Readonly<Record<string, readonly string[]>>;
  readonly deleting?: boolean;
}

/** An inline's add, or changes to its rows, the API refused: its messages and the values posted, shown again. */
export interface InlineRefusal {
  readonly child: string;
  readonly status: number;
  readonly message: string;
  /** The add form's. */
  readonly errors: Readonly<Record<string, readonly string[]>>;
  readonly values: Readonly<Record<string, unknown>>;
  /** The listed rows', by record key. */
  readonly rows?: Readonly<Record<string, InlineRowRefusal>>;
}

export interface InlineRow {
  readonly id: string;
  readonly cells: readonly Shown[];
  /** The record's values (or those posted, when refused), for the row's inputs. */
  readonly values: Readonly<Record<string, unknown>>;
  readonly errors: Readonly<Record<string, readonly string[]>>;
  readonly deleting: boolean;
}

export interface InlineModel {
  readonly name: string;
  /** Its verbose names (from its name: an inline has no options of its own). */
  readonly names: { readonly one: string; readonly many: string };
  readonly columns: readonly string[];
  readonly rows: readonly InlineRow[];
  /** Refusals of rows it does not list (gone, or hidden by the nested collection's scope): `<id>: message`. */
  readonly unlisted: readonly string[];
  readonly count?: number;
  /** The form changing and deleting the listed rows, when the user may do either. */
  readonly edit?: {
    readonly action: string;
    readonly serializer: Serializer;
    /** The columns shown as inputs (the update's writable fields), by shown name. */
    readonly inputs: ReadonlySet<string>;
    readonly deletable: boolean;
  };
  /** The form adding a record under the parent, when the user may add one. */
  readonly add?: {
    readonly action: string;
    readonly serializer: Serializer;
    readonly values: Readonly<Record<string, unknown>>;
    readonly errors: Readonly<Record<string, readonly string[]>>;
    readonly lookups: Readonly<Record<string, string>>;
  };
}

/** The inputs an inline row shows for `serializer`'s writable fields (not a file, nor a secret), by shown name. */
export const rowInputs = (serializer: Serializer): Set<string> =>
  new Set(serializer.writable.filter((name) => !serializer.model.fields[name]!.file && !serializer.hidden.has(name)).map((name) => serializer.shown(name)));

/** The inlines of the record `id` the user may view, each with its first page of records. */
export async function inlinesOf(site: AdminSite, entry: AdminCollection, request: FastifyRequest, staff: StaffSession, id: string, refused?: InlineRefusal): Promise<InlineModel[]> {
  const shown: InlineModel[] = [];
  for (const child of entry.inlines) {
    if (!(await may(staff.user, child, 'view'))) continue;
    const answer = await callApi(request, { method: 'GET', url: entry.nestedList(id, child) });
    if (answer.status !== 200) continue;
    const list = listOf(child, answer.body);
    const listed = child.serializerFor({ action: 'list', user: staff.user });
    const columns = listed.shownFields;
    const serializer = child.serializerFor({ action: 'create', user: staff.user });
    const mine = refused?.child === child.name ? refused : undefined;
    const add =
      child.builtInActions.has('create') && (await may(staff.user, child, 'add'))
        ? { action: `${site.root}${entry.collection.name}/${encodeURIComponent(id)}/inline/${child.name}/`, serializer, values: mine?.values ?? {}, errors: mine?.errors ?? {}, lookups: await lookupsOf(site, staff.user, serializer) }
        : undefined;
    const cells = await shownRows(site, request, staff.user, listed, columns, list.rows);
    const rows = list.rows.map((record, index): InlineRow => {
      const id = idOf(child, record);
      const again = mine?.rows?.[id];
      return { id, cells: cells[index]!, values: again?.values ?? record, errors: again?.errors ?? {}, deleting: again?.deleting ?? false };
    });
    const path = `${site.root}${entry.collection.name}/${encodeURIComponent(id)}/inline/${child.name}/`;
    const changeable = child.builtInActions.has('partial_update') && (await may(staff.user, child, 'change'));
    const deletable = child.builtInActions.has('destroy') && (await may(staff.user, child, 'delete'));
    const update = child.serializerFor({ action: 'partial_update', user: staff.user });
    const inputs = changeable ? new Set([...rowInputs(update)].filter((name) => columns.includes(name))) : new Set<string>();
    const edit = changeable || deletable ? { action: `${path}change/`, serializer: update, inputs, deletable } : undefined;
    const unlisted = Object.entries(mine?.rows ?? {})
      .filter(([key]) => !rows.some((row) => row.id === key))
      .flatMap(([key, row]) => Object.values(row.errors).flat().map((message) => `${key}: ${message}`));
    shown.push({ name: child.name, names: verboseNames({ collection: child, options: {} }), columns, rows, unlisted, count: list.count, add, edit });
  }
  return shown;
}
