/**
 * A collection: a serializer plus the policies of one resource (filters,
 * ordering, page sizes, permissions). Everything is checked once, here, at
 * start-up, so a request never meets a declaration error.
 */
import type { Field, Lookup } from '../core/fields.js';
import type { Across, ListSource, Ordering } from '../core/list-query.js';
import type { CountMode } from '../core/list-query.js';
import type { IndexFacts } from '../core/schema.js';
import { assertCustomActions, type CustomAction } from './custom-actions.js';
import type { Envelope } from './envelopes.js';
import type { Hooks } from './hooks.js';
import { assertParent, type Parent } from './nested.js';
import { recordLookup, type RecordLookup } from './lookup.js';
import type { Action, Permission } from './permissions.js';
import type { QueryRules } from './query.js';
import { relatedFilter } from './relations.js';
import type { RequestContext, Scope } from './scope.js';
import type { RecordId } from '../store/records.js';
import type { ObjectValidator, Serializer } from './serializer.js';

export type Pagination = 'page' | 'limit_offset' | 'cursor';

export interface CollectionOptions {
  serializer: Serializer;
  /**
   * Fields that may be filtered: a list (every lookup that fits each type) or field → lookups. Besides
   * the model's fields: a serializer's relation (`tags`: by related id, `exact` and `in`) and a field
   * of a nested record (`author__username`), matched through EXISTS over the related rows.
   */
  filterFields?: readonly string[] | Readonly<Record<string, readonly Lookup[]>>;
  /**
   * Filters named by the app, each a path to a field through foreign keys and relations, ending
   * in an optional lookup: `{ author: 'author_id__username', tag: 'tag_list__has_element' }`
   * (`?author=jake`). See named-filters.ts.
   */
  filters?: Readonly<Record<string, string>>;
  /** Fields the `ordering` parameter may name; `id` is always allowed besides. */
  orderingFields?: readonly string[];
  /** Used when a request gives no `ordering`, e.g. `['-created_at']`; ties always fall back to `id`. */
  defaultOrdering?: readonly string[];
  pageSize?: number;
  maxPageSize?: number;
  /** Counts a client may prefer over the exact one (`Prefer: count=estimated` or `count=none`). */
  countModes?: readonly ('estimated' | 'none')[];
  /** Below this many estimated records, `count=estimated` counts exactly (default 10 000). */
  estimateThreshold?: number;
  /**
   * `page` (`?page=&page_size=`), `limit_offset` (`?limit=&offset=`, DRF's LimitOffsetPagination),
   * or `cursor`: pages by opaque cursors, stable under inserts and without counting, for very
   * large collections (ordering fields must then be indexed and not nullable). Default: the
   * app's `pagination`, else `page` (docs/api-style.md).
   */
  pagination?: Pagination;
  /** How this collection's lists, records and bodies are wrapped, in place of the app's (docs/api-style.md). */
  envelope?: Envelope;
  /** Accept a JSON array on POST: created in one transaction, all or nothing, at most `max` records. */
  bulkCreate?: { max: number };
  /** Checks for every action, or per action; actions left out get the API's default. */
  permissions?: readonly Permission[] | Partial<Readonly<Record<Action, readonly Permission[]>>>;
  /**
   * Indexes this collection's lists need beyond the ones its declarations bring (one per filter or
   * ordering field, a trigram one per search field): composite ones, say a filter then an ordering, tie-broken by `id`.
   */
  indexes?: readonly IndexFacts[];
  /**
   * Which records a request may reach, built from it: `({ user }) => ({ owner_id: user?.id ?? null })`.
   * Applies to every read and write of the collection; a record outside it is 404.
   */
  scope?: Scope;
  /** Code run before and after each write (see hooks.ts). */
  hooks?: Hooks;
  /** Whole-object validation, as the serializer's `validate` (after it, when both are set; what both find is reported together). */
  validate?: ObjectValidator;
  /** Endpoints of the collection's own, by name: `/<name>/{id}/<action>/` or `/<name>/<action>/`. */
  actions?: Readonly<Record<string, CustomAction>>;
  /**
   * Mounts the collection under one record of another (`/<parent>/{parent}/<name>/` only), scoped to
   * it: `{ collection: articles, field: 'article_id' }`. The field is set from the path (see nested.ts).
   */
  parent?: Parent;
  /** The unique field detail paths name a record by, in place of `id` (`/articles/{slug}/`); see lookup.ts. */
  lookupField?: string;
  /**
   * A singleton resource (DRF's RetrieveUpdateAPIView with its own get_object()): the one record a
   * request reaches, by id, chosen from the request: `({ user }) => user?.id` serves the caller's own
   * at `/<name>/` (GET, PUT, PATCH; DELETE only when `permissions` names `destroy`). No list, no
   * create; nothing chosen (an anonymous caller) is 401, an id of no record 404.
   */
  singleton?: (context: RequestContext) => RecordId | null | undefined;
}

/** A singleton collection's record chooser, and whether it serves DELETE. */
export interface Singleton {
  record(context: RequestContext): RecordId | null | undefined;
  readonly destroy: boolean;
}

export interface Collection {
  readonly name: string;
  readonly serializer: Serializer;
  readonly queryRules: QueryRules;
  readonly listSource: ListSource;
  /** undefined: the app's (buildApp fills it in). */
  readonly pagination: Pagination | undefined;
  readonly envelope: Envelope | undefined;
  readonly countModes: readonly CountMode[];
  readonly estimateThreshold: number;
  /** The most records one bulk create may carry; undefined when the collection takes one object only. */
  readonly bulkCreateMax: number | undefined;
  /** The indexes of its model's table its lists need (framework/schema.ts puts them in the app's migrations). */
  readonly indexes: readonly IndexFacts[];
  /** The collection's own checks for an action, if it set any. */
  permissionsFor(action: Action): readonly Permission[] | undefined;
  readonly scope: Scope | undefined;
  readonly hooks: Hooks;
  readonly validate: ObjectValidator | undefined;
  readonly customActions: Readonly<Record<string, CustomAction>>;
  /** The record this collection is mounted under, when it is nested. */
  readonly parent: Parent | undefined;
  /** How a detail path names a record: by `id`, or by the collection's lookup field. */
  readonly lookup: RecordLookup;
  /** Filters named by the app, by parameter: their paths, resolved by buildApp against the app's models (named-filters.ts). */
  readonly namedFilters: Readonly<Record<string, string>>;
  /** Set for a singleton resource (CollectionOptions.singleton). */
  readonly singleton: Singleton | undefined;
}

const RESOURCE_NAME = /^[a-z][a-z0-9_-]*$/;

/** A singleton has no list, no lookup segment and no parent: declarations that need one are refused. */
function assertSingleton(name: string, options: CollectionOptions): void {
  const refused = [
    options.parent && 'parent',
    options.bulkCreate && 'bulkCreate',
    options.lookupField && options.lookupField !== 'id' && 'lookupField',
    Object.values(options.actions ?? {}).some((action) => action.detail) && 'detail actions',
  ].filter(Boolean);
  if (refused.length > 0) throw new Error(`${name}: a singleton collection has one record and no lookup segment: ${refused.join(', ')} cannot apply.`);
}

export function collection(name: string, options: CollectionOptions): Collection {
  const { serializer } = options;
  const modelFields = serializer.model.fields;
  if (!RESOURCE_NAME.test(name)) throw new Error(`Collection name "${name}" must match ${RESOURCE_NAME}.`);

  const filters = new Map<string, readonly Lookup[]>();
  const filterFields = options.filterFields ?? [];
  const relatedFields: Record<string, Field> = {};
  const across: Record<string, Across> = {};
  for (const field of Array.isArray(filterFields) ? (filterFields as readonly string[]) : Object.keys(filterFields)) {
    const related = modelFields[field] ? undefined : relatedFilter(serializer, field);
    if (!related) continue;
    relatedFields[field] = { ...related.field, lookups: related.lookups };
    across[field] = related.across;
  }
  const filterable = { ...modelFields, ...relatedFields };
  const entries = Array.isArray(filterFields)
    ? (filterFields as readonly string[]).map((field) => [field, filterable[field]?.lookups ?? []] as const)
    : Object.entries(filterFields as Readonly<Record<string, readonly Lookup[]>>);
  for (const [field, lookups] of entries) {
    const declared = filterable[field];
    if (!declared || declared.writeOnly) throw new Error(`${name}: cannot filter on "${field}".`);
    const unfit = lookups.filter((lookup) => !declared.lookups.includes(lookup));
    if (unfit.length > 0) throw new Error(`${name}: lookups ${unfit.join(', ')} do not fit "${field}".`);
    filters.set(field, lookups);
  }

  // `id` breaks every tie and is always indexed, so it is always allowed (as clients such as react-admin's ask).
  const ordering = [...new Set(['id', ...(options.orderingFields ?? [])])];
  // A SQL-backed computed field is a column of the page's own statement, so it may be ordered by (not by keyset).
  const aggregated = (field: string): boolean => serializer.fields.includes(field) && serializer.computed[field]?.aggregate !== undefined;
  for (const field of ordering) {
    // A keyset compares the boundary with an indexed column; an aggregate would be computed for every row before it.
    if (aggregated(field) && options.pagination === 'cursor') {
      throw new Error(`${name}: cursor pagination cannot order by "${field}", a SQL-backed computed field (no index serves it); page by number to order by it.`);
    }
    if (aggregated(field)) continue;
    // A JSON document has no order the two databases share (jsonb's, or its text's).
    if (!modelFields[field] || modelFields[field].writeOnly || modelFields[field].valueType === 'json') throw new Error(`${name}: cannot order by "${field}".`);
  }
  const defaultOrdering: Ordering[] = (options.defaultOrdering ?? []).map((term) => {
    const descending = term.startsWith('-');
    const field = descending ? term.slice(1) : term;
    if (!modelFields[field]) throw new Error(`${name}: cannot order by "${field}".`);
    return { field, descending };
  });

  if (options.pagination === 'cursor') {
    const nullable = [...ordering, ...defaultOrdering.map(({ field }) => field)].filter((field) => modelFields[field]!.nullable);
    if (nullable.length > 0) throw new Error(`${name}: cursor pagination cannot order by nullable fields (${nullable.join(', ')}).`);
  }

  const pageSize = options.pageSize ?? 20;
  const maxPageSize = options.maxPageSize ?? 100;
  if (pageSize < 1 || maxPageSize < pageSize) throw new Error(`${name}: need 1 <= pageSize <= maxPageSize.`);

  const permissions = options.permissions;
  // A key or a unique column is indexed already; a computed field is no column.
  const indexed = [...new Set([...filters.keys(), ...ordering])].filter((field) => field !== 'id' && modelFields[field] && !modelFields[field].unique);
  const indexes: IndexFacts[] = [
    ...indexed.map((field) => ({ columns: [field] })),
    ...serializer.search.map((field) => ({ columns: [field], trigram: true })),
    ...(options.indexes ?? []),
  ];
  const actions = options.actions ?? {};
  assertCustomActions(name, actions);
  if (options.parent) assertParent(name, serializer, options.parent);
  if (options.singleton) assertSingleton(name, options);
  // `/<name>/bulk/` and the list actions' paths take these segments from records' lookup values.
  const taken = [...(options.bulkCreate ? ['bulk'] : []), ...Object.entries(actions).flatMap(([name, action]) => (action.detail ? [] : [action.path ?? name]))];
  return {
    name,
    serializer,
    queryRules: { fields: filterable, filters, ordering, defaultOrdering, pageSize, maxPageSize },
    listSource: { selection: serializer.selection, fields: filterable, searchFields: serializer.search, across },
    pagination: options.pagination,
    envelope: options.envelope,
    countModes: ['exact', ...(options.countModes ?? [])],
    estimateThreshold: options.estimateThreshold ?? 10_000,
    bulkCreateMax: options.bulkCreate?.max,
    indexes,
    scope: options.scope,
    hooks: options.hooks ?? {},
    validate: options.validate,
    customActions: actions,
    parent: options.parent,
    namedFilters: options.filters ?? {},
    lookup: recordLookup(name, serializer.model, options.lookupField ?? 'id', taken),
    singleton: options.singleton && { record: options.singleton, destroy: !Array.isArray(permissions) && (permissions as Partial<Record<Action, readonly Permission[]>> | undefined)?.destroy !== undefined },
    permissionsFor: (action) =>
      permissions === undefined ? undefined : Array.isArray(permissions) ? permissions : (permissions as Partial<Record<Action, readonly Permission[]>>)[action],
  };
}
