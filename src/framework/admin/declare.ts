/**
 * How an app configures its admin (Django's `admin.site.register(Model, ModelAdmin)`): which
 * collections it shows and, for each, the change list's columns, filters and search, the form's
 * read-only fields, the nested collections edited inline and the bulk actions. Everything left out
 * comes from the collection's own declarations (docs/admin.md, Declaring the admin).
 */
import type { Collection } from '../declare/collection.js';

export interface ModelAdminOptions {
  /** The change list's columns (Django's `list_display`), among the list serializer's fields; the first links to the record. Default: all of them. */
  readonly columns?: readonly string[];
  /** The sidebar's filters (`list_filter`), among the collection's `filterFields`. Default: all of them. */
  readonly filters?: readonly string[];
  /** false: no search box. Default: one when the serializer declares `search` (its fields are `search_fields`). */
  readonly search?: boolean;
  /** Fields the change form shows but does not send (`readonly_fields`); the API's own read-only fields are shown too. */
  readonly readOnly?: readonly string[];
  /** Collections nested under this one (their `parent`), listed and added on its change form through their own API (`inlines`). */
  readonly inlines?: readonly Collection[];
  /**
   * The change list's own bulk actions beside "Delete selected" (`actions`): detail custom actions of
   * the collection that take no body (`body: false`), by name, with their label
   * (`{ retire: 'Retire selected products' }`); each selected record gets its own POST.
   */
  readonly actions?: Readonly<Record<string, string>>;
  /**
   * The field a record is named by (Django's `__str__`), among the list serializer's fields: in
   * messages, confirmations, the lookup and wherever another record refers to it. Default: its
   * first of `name`, `title`, `username`, `label`, `slug`, `email` with text, else its key.
   */
  readonly display?: string;
  /** One record's name in messages and titles (`verbose_name`). Default: the collection's name in the singular (`articles` → `article`). */
  readonly verboseName?: string;
  /** The name of several (`verbose_name_plural`). Default: the collection's name, `_` as spaces. */
  readonly verboseNamePlural?: string;
}

/** A collection as the app registers it with the admin. */
export interface ModelAdmin {
  readonly collection: Collection;
  readonly options: ModelAdminOptions;
}

/** Registers `collection` with the admin, with `options` (see ModelAdminOptions). */
export const modelAdmin = (collection: Collection, options: ModelAdminOptions = {}): ModelAdmin => ({ collection, options });

export interface AdminOptions {
  /**
   * The collections the admin shows, in this order: a collection as it is, or `modelAdmin(collection, options)`.
   * Left out: every top-level list collection, with the defaults.
   */
  readonly collections?: readonly (Collection | ModelAdmin)[];
}

const fail = (collection: Collection, message: string): never => {
  throw new Error(`admin: ${collection.name}: ${message}`);
};

function unknown(collection: Collection, what: string, given: readonly string[] | undefined, known: readonly string[]): void {
  const stray = (given ?? []).filter((name) => !known.includes(name));
  if (stray.length > 0) fail(collection, `${what} names ${stray.join(', ')}, not among ${known.join(', ') || 'none'}.`);
}

/** The options checked against the collection's declarations: a typo fails at startup, not on a page. */
export function checkedModelAdmin(entry: Collection | ModelAdmin): ModelAdmin {
  const { collection, options } = 'options' in entry && 'collection' in entry ? entry : modelAdmin(entry);
  unknown(collection, 'columns', options.columns, collection.serializerFor({ action: 'list', user: null }).shownFields);
  unknown(collection, 'filters', options.filters, [...collection.queryRules.filters.keys()]);
  unknown(collection, 'display', options.display === undefined ? undefined : [options.display], collection.serializerFor({ action: 'list', user: null }).shownFields);
  unknown(collection, 'readOnly', options.readOnly, Object.keys(collection.serializer.model.fields).concat(collection.serializer.relationInputs));
  unknown(collection, 'actions', Object.keys(options.actions ?? {}), Object.keys(collection.customActions));
  for (const name of Object.keys(options.actions ?? {})) {
    const action = collection.customActions[name]!;
    if (!action.detail || !('method' in action) || action.method !== 'POST' || action.body !== false) fail(collection, `the action ${name} is not a detail POST action with \`body: false\`.`);
  }
  for (const inline of options.inlines ?? []) {
    if (inline.parent?.collection.name !== collection.name) fail(collection, `the inline ${inline.name} is not nested under it (its \`parent\`).`);
    if (!inline.builtInActions.has('list')) fail(collection, `the inline ${inline.name} has no list.`);
  }
  return { collection, options };
}
