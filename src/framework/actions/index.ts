/**
 * The six actions of a collection: list, retrieve, create, update,
 * partial_update, destroy. Each gets a parsed request and returns a result
 * for the renderer; errors are thrown as ApiErrors.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../store/database.js';
import { stringifyJson } from '../../core/json.js';
import type { ListQuery, RecordScope } from '../../core/list-query.js';
import { readList, type ListPlan } from '../../store/list.js';
import { readsRestricted, unrestricted } from '../../store/visibility.js';
import type { RequestReader } from '../../store/reader.js';
import type { RecordId } from '../../store/records.js';
import { createRecord, createRecords, deleteMatching, deleteRecord, updateRecord, type WriteCheck } from '../../store/writes.js';
import { RecordRefused } from '../../core/refused.js';
import { pathEnd } from '../base/style.js';
import type { AuthUser } from '../base/auth-user.js';
import type { Collection } from '../declare/collection.js';
import { assertMatches, strongEtag, weakEtag } from '../stages/conditional.js';
import { ApiError, notFound, permissionDenied, validationFailed, type ErrorDetails } from '../base/errors.js';
import { prepared, written as hooked, type CommitEvent } from '../declare/hooks.js';
import { writeWithRelations } from '../declare/relations.js';
import { absoluteLink, absoluteUrl } from '../base/hosts.js';
import { LIMIT_OFFSET_PARAMETERS, PAGING_PARAMETERS, parseWindow, windowPage } from './limit-offset.js';
import { paginate, preferredCount } from './pagination.js';
import type { UpdateRules } from '../declare/model.js';
import { checkObjectPermissions, type Action, type Permission } from '../declare/permissions.js';
import { invalidPage, parseListQuery } from '../stages/list-query.js';
import { API_MEDIA_TYPES, type MediaType } from '../stages/negotiation.js';
import type { Row, Selection } from '../../core/rows.js';
import { chosenFields, type Serializer, type WriteContext, type WriteMode } from '../declare/serializer.js';
import { boundaryOf, cursorAt, decodeCursor, encodeCursor, orderingKey } from './cursor.js';
import type { RecordLinks, RenderContext } from '../declare/computed.js';
import type { HookContext } from '../declare/hooks.js';
import { isPending, type MaybePromise } from '../../core/maybe-promise.js';
import { fromTable, type RequestCredentials } from './credentials.js';

export interface ActionRequest {
  readonly request: FastifyRequest;
  /** A custom action's handler may set a status or headers on it, or send the answer itself. */
  readonly reply: FastifyReply;
  /** The request's reader: what the action reads, and the database it writes to (reader.database). */
  readonly reader: RequestReader;
  readonly collection: Collection;
  readonly action: Action;
  readonly permissions: readonly Permission[];
  readonly user: AuthUser | null;
  readonly parameters: ReadonlyMap<string, string>;
  /** Signs and checks pagination cursors. */
  readonly cursorKey: Uint8Array;
  /** The detail routes' path segment naming the record (its `id`, or the collection's lookup field), unparsed. */
  readonly id?: string;
  readonly body?: unknown;
  /** The collection's scope for this request, when it has one (a nested collection's includes its parent). */
  readonly scope?: RecordScope;
  /** Values the path sets on a create (a nested collection's foreign key to its parent). */
  readonly fromPath?: Row;
  readonly credentials: RequestCredentials;
  /** The records' own URLs (`computed.url()`), as the request's router spells them. */
  readonly links?: RecordLinks;
}

/** What the action reads of its records (its serializer's, or a narrowed one), for this request, found by the lookup field. */
const selectionOf = (action: ActionRequest, serializer = action.collection.serializerFor(action.action)): Selection =>
  action.collection.lookup.selection(serializer.selectionFor(action.user));

export interface ActionResult {
  readonly status: number;
  readonly body?: unknown;
  /** The body as JSON, when it was already written (to compute its ETag). */
  readonly json?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** The media type the body is already written in (a custom action's own, `text/csv` say): sent as it is, never rendered. */
  readonly type?: string;
}

/** What a list's records render with: the user and the records' URLs, and no credential (RenderContext.credentials). */
const listContext = ({ user, request, links }: ActionRequest): RenderContext => ({ user, request, links });

async function list(action: ActionRequest): Promise<ActionResult> {
  const { request, reader, collection, parameters } = action;
  const byWindow = collection.pagination === 'limit_offset';
  const parsed = parseListQuery(parameters, collection.queryRules, byWindow ? LIMIT_OFFSET_PARAMETERS : []);
  const window = byWindow ? parseWindow(parameters, collection.queryRules) : undefined;
  // Unpaginated: the whole list, read one record past the most it may hold.
  const whole = collection.pagination === 'none' && { page: 1, pageSize: collection.queryRules.maxPageSize };
  const query = { ...parsed, ...(window && { pageSize: window.limit, offset: window.offset }), ...whole, scope: action.scope?.conditions };
  const serializer = chosenFields(collection.serializerFor('list'), parameters);
  const source = { ...collection.listSource, selection: orderedBy(selectionOf(action, serializer), action, query) };
  const plan = { source, query, estimateThreshold: collection.estimateThreshold };
  if (collection.pagination === 'cursor') return listByCursor(action, serializer, plan);
  if (whole) return wholeList(action, serializer, plan);
  const mode = preferredCount(request, collection.countModes);
  const read = await reader.list({ ...plan, paging: { by: 'number' }, count: mode });
  if (!window && query.page > 1 && read.rows.length === 0) throw invalidPage();
  const context = listContext(action);
  const results = read.rows.map((row) => serializer.render(row, context));
  const body = window ? windowPage(request, window, read.count, read.hasMore, results) : paginate(request, query.page, read.count, read.hasMore, results);
  const result = written(200, body, weakEtag);
  return mode === 'exact' ? result : { ...result, headers: { ...result.headers, 'Preference-Applied': `count=${mode}` } };
}

/**
 * An unpaginated list (DRF's `pagination_class = None`): a JSON array of every record the request
 * selects, at most the collection's `maxPageSize`. More is refused rather than cut short, so that no
 * client takes part of a list for all of it.
 */
async function wholeList(action: ActionRequest, serializer: Serializer, plan: Omit<ListPlan, 'paging' | 'count'>): Promise<ActionResult> {
  const { rows, hasMore } = await action.reader.list({ ...plan, paging: { by: 'number' }, count: 'none' });
  const max = plan.query.pageSize;
  if (hasMore) throw validationFailed({ non_field_errors: [`More than ${max} records match; this list answers at most ${max}. Narrow it with its filters.`] }, 'Too many records to list at once.');
  const context = listContext(action);
  return written(200, rows.map((row) => serializer.render(row, context)), weakEtag);
}

/** The selection with the aggregates the ordering names, when `fields`/`omit` (or the list's own serializer) left them out. */
function orderedBy(selection: Selection, action: ActionRequest, query: ListQuery): Selection {
  const names = new Set(query.ordering.map(({ field }) => field));
  const shown = new Set((selection.aggregates ?? []).map(({ name }) => name));
  // The collection's `serializer` declares what may be ordered by.
  const missing = (selectionOf(action, action.collection.serializer).aggregates ?? []).filter(({ name }) => names.has(name) && !shown.has(name));
  return missing.length === 0 ? selection : { ...selection, aggregates: [...(selection.aggregates ?? []), ...missing] };
}

/** A cursor page: `{count: null, next, previous, results}`, with links that carry signed cursors from the page's boundary rows. */
async function listByCursor(action: ActionRequest, serializer: Serializer, plan: Omit<ListPlan, 'paging' | 'count'>): Promise<ActionResult> {
  const { request, reader, collection, parameters, cursorKey } = action;
  const { ordering } = plan.query;
  const { fields } = collection.queryRules;
  const key = orderingKey(ordering);
  const text = parameters.get('cursor');
  const cursor = text ? decodeCursor(text, cursorKey, key) : undefined;
  const from = cursor && { boundary: boundaryOf(cursor, ordering, fields), backwards: cursor.direction === 'previous' };
  const { rows, boundary } = await reader.list({ ...plan, paging: { by: 'keyset', from }, count: 'none' });
  const context = listContext(action);
  const link = (row: Row | undefined, direction: 'next' | 'previous'): string | null => {
    if (!row) return null;
    const url = absoluteUrl(request);
    url.searchParams.delete('page');
    url.searchParams.set('cursor', encodeCursor({ ordering: key, ...cursorAt(row, ordering, fields, direction) }, cursorKey));
    return url.toString();
  };
  const body = {
    count: null,
    next: link(boundary?.next, 'next'),
    previous: link(boundary?.previous, 'previous'),
    results: rows.map((row) => serializer.render(row, context)),
  };
  return written(200, body, weakEtag);
}

/**
 * A result whose JSON is written once, for both its ETag and the response (which may be a 304: see
 * renderResult). Its headers are one literal, not a spread: a write answers one per request.
 */
function written(status: number, body: unknown, tag: (json: string) => string, location?: string): ActionResult {
  const json = stringifyJson(body);
  const etag = tag(json);
  return { status, body, json, headers: location === undefined ? { ETag: etag } : { Location: location, ETag: etag } };
}

/**
 * What a write's transaction (its hooks, the model's rules) threw, with a refusal's details under
 * the names clients see: a hook names the model's fields, as `values` does. Thrown from a catch
 * around the awaited write, which costs no promise or closure per request as `.catch` would.
 */
function shownRefusal(action: ActionRequest, error: unknown): unknown {
  if (!(error instanceof ApiError) || !error.details) return error;
  return new ApiError(error.status, error.code, error.message, action.collection.serializerFor(action.action).shownDetails(error.details), error.headers);
}

/** The object-level permission checks on the record named by the path: a promise only when one answers later. */
const checkRecord = (action: ActionRequest, row: Row): MaybePromise<void> =>
  checkObjectPermissions(action.permissions, { user: action.user, action: action.action }, row);

/** The key the path names its record by (400 or 404 when no record can have it). */
function pathKey({ collection: { lookup }, id = '' }: ActionRequest): RecordId {
  const key = lookup.key(id);
  if (key === undefined) throw lookup.unreachable();
  return key;
}

/**
 * The record named by the path as `serializer` reads it (by default, the action's), after the
 * object-level permission checks. The read's promise chained, not awaited in an async frame of its
 * own; a path naming no record throws at once (every caller awaits it in an async function).
 */
export function loadRecord(action: ActionRequest, serializer?: Serializer): Promise<{ id: RecordId; row: Row }> {
  const id = pathKey(action);
  const found = (row: Row): { id: RecordId; row: Row } => {
    fromTable(action.collection.serializer.model, row);
    return { id, row };
  };
  return action.reader.record(selectionOf(action, serializer), id, action.scope).then((row) => {
    if (!row) throw notFound();
    const checked = checkRecord(action, row);
    return isPending(checked) ? checked.then(() => found(row)) : found(row);
  });
}

async function retrieve(action: ActionRequest): Promise<ActionResult> {
  const serializer = chosenFields(action.collection.serializerFor('retrieve'), action.parameters);
  const { row } = await loadRecord(action, serializer);
  const body = serializer.render(row, action);
  return written(200, body, strongEtag);
}

/** What a body's fields are parsed with: the requesting user, and what they may do. */
export function writeContext({ user }: Pick<ActionRequest, 'user'>): WriteContext {
  return {
    userId: user?.id ?? null,
    hasPermission: async (name) => (await user?.hasPermission(name)) ?? false,
  };
}

/** What hooks see; `database`: the write's (its transaction when it has one), which their credentials read and write through. */
const requestContext = ({ user, parameters, credentials }: ActionRequest, database?: Database): HookContext => ({
  user,
  parameters,
  credentials: database ? credentials.in(database) : credentials,
});

/**
 * A hook's context and `database`: the write's, as the app's own code sees it (every row, as
 * `recordStore` reads them); the framework's own statements keep to what the request may see.
 */
const hookEvent = (action: ActionRequest, database: Database): HookContext & { readonly database: Database } => {
  const own = unrestricted(database);
  return { ...requestContext(action, own), database: own };
};

/** A new record's values: its fields, then the whole object, validated (the before-create hook runs with the write: see stored). */
async function creation(action: ActionRequest, body: unknown, context: WriteContext): Promise<Row> {
  const serializer = action.collection.serializerFor('create');
  const parsed = serializer.parseBody(body, 'create', context);
  const values = { ...(isPending(parsed) ? await parsed : parsed), ...action.fromPath };
  action.collection.lookup.assertReachable(values);
  const validated = serializer.validateObject(values, { existing: undefined, user: action.user }, action.collection.validate);
  if (validated) await validated;
  serializer.model.rules?.creates?.(values, action.user);
  return values;
}

/**
 * The written records read again through the scope, in the write's transaction (row-level
 * security's WITH CHECK): a record the request could not see is refused, and nothing is stored.
 */
async function inScope(action: ActionRequest, scope: RecordScope, database: Database, rows: Row[], refused = 'You may not create a record outside the ones you may see.'): Promise<Row[]> {
  const { collection } = action;
  const ids = { field: 'id', lookup: 'in', value: rows.map((row) => row.id) } as const;
  const query = { page: 1, pageSize: rows.length, search: [], ordering: [], filters: [ids], scope: scope.conditions };
  // As the create read them: with the lookup field, which Location names.
  const source = { ...collection.listSource, selection: selectionOf(action) };
  const { rows: again } = await readList(database, { source, query, paging: { by: 'number' }, count: 'none', estimateThreshold: 0 });
  if (again.length < rows.length) throw permissionDenied(refused);
  return again;
}

/**
 * The before-create hook's values over each record's validated ones, then the records created: in
 * one transaction with the hooks and the scope's re-read, when there are after-create hooks or a
 * scope, or for a bulk create (the before-hook's reads then see what the write will); then
 * committed. A bulk create's hook refusing a record is reported under its index.
 */
async function stored(action: ActionRequest, validated: readonly Row[], create: (database: Database, values: readonly Row[]) => Promise<Row[]>): Promise<Row[]> {
  const { reader, collection } = action;
  const { beforeCreate, afterCreate } = collection.hooks;
  const values: Row[] = [];
  let rows: Row[];
  try {
    rows = await hooked(
      reader.database,
      // A bulk create is one transaction anyway (createRecords joins this one).
      action.scope !== undefined || afterCreate !== undefined || Array.isArray(action.body),
      async (database) => {
        for (let index = 0; index < validated.length; index++) {
          const row = validated[index]!;
          try {
            const set = prepared(row, beforeCreate?.({ ...hookEvent(action, database), values: row }));
            values.push(isPending(set) ? await set : set);
          } catch (error) {
            if (!Array.isArray(action.body) || !(error instanceof ApiError) || !error.details) throw error;
            throw validationFailed(atIndex(index, error.details));
          }
        }
        const created = await create(database, values);
        const rows = action.scope ? await inScope(action, action.scope, database, created) : created;
        fromTable(collection.serializer.model, ...rows);
        return rows;
      },
      async (database, rows) => {
        for (const [index, record] of rows.entries()) await afterCreate?.({ ...hookEvent(action, database), values: values[index]!, record });
      },
    );
  } catch (error) {
    throw shownRefusal(action, error);
  }
  for (const record of rows) {
    const afterCommit = committed(action, 'create', record);
    if (afterCommit) await afterCommit;
  }
  return rows;
}

/** The after-commit hook: the write stands whatever it does, so its failure is logged, not answered. Nothing to wait for without one. */
function committed(action: ActionRequest, kind: CommitEvent['action'], record: Row): Promise<void> | undefined {
  const { afterCommit } = action.collection.hooks;
  if (!afterCommit) return undefined;
  return (async () => {
    try {
      await afterCommit({ ...requestContext(action), action: kind, record });
    } catch (error) {
      action.request.log.error({ err: error }, `afterCommit hook of ${action.collection.name} failed`);
    }
  })();
}

/** Writes one record with its relations, read back as `selection` reads it. */
const createOne = (action: ActionRequest, selection: Selection, context: WriteContext) => (database: Database, values: Row) => {
  const serializer = action.collection.serializerFor('create');
  return writeWithRelations(database, serializer, selection, values, context, (database, own) => createRecord(database, serializer.model, selection, own));
};

async function create(action: ActionRequest): Promise<ActionResult> {
  if (Array.isArray(action.body) && action.collection.bulkCreateMax !== undefined) return createMany(action, action.body);
  const { collection, request } = action;
  // Read as a detail path finds it, so the row carries the lookup field its Location names.
  const selection = selectionOf(action);
  const context = writeContext(action);
  const values = await creation(action, action.body, context);
  const [row] = (await stored(action, [values], async (database, [prepared]) => [await createOne(action, selection, context)(database, prepared!)])) as [Row];
  const body = collection.serializerFor('create').render(row, action);
  // A 200 names no new resource (RFC 9110 gives Location a meaning in a 201 or a redirect only).
  if (collection.createStatus === 200) return written(200, body, strongEtag);
  const path = `${request.url.split('?')[0]!.replace(/\/?$/, '/')}${collection.lookup.segment(row)}${pathEnd(request)}`;
  return written(201, body, strongEtag, absoluteLink(request, path));
}

/** Each record's errors under `<index>.<field>`. */
function atIndex(index: number, details: ErrorDetails | undefined): ErrorDetails {
  return Object.fromEntries(Object.entries(details ?? {}).map(([field, messages]) => [`${index}.${field}`, messages]));
}

/** A bulk create: every record valid and stored, in one transaction, or none. */
async function createMany(action: ActionRequest, records: unknown[]): Promise<ActionResult> {
  const { collection } = action;
  const max = collection.bulkCreateMax!;
  if (records.length > max) throw new ApiError(413, 'payload_too_large', `Send at most ${max} records at once.`);
  if (records.length === 0) throw validationFailed({ non_field_errors: ['Send at least one record.'] });
  const context = writeContext(action);
  const details: ErrorDetails = {};
  const values: Row[] = [];
  for (const [index, record] of records.entries()) {
    try {
      values.push(await creation(action, record, context));
    } catch (error) {
      if (!(error instanceof ApiError) || !error.details) throw error;
      Object.assign(details, atIndex(index, error.details));
    }
  }
  if (Object.keys(details).length > 0) throw validationFailed(details);
  try {
    const rows = await stored(action, values, (database, prepared) => createRecords(database, prepared, createOne(action, selectionOf(action), context)));
    return { status: collection.createStatus, body: rows.map((row) => collection.serializerFor('create').render(row, action)) };
  } catch (error) {
    if (error instanceof RecordRefused && error.index !== undefined) throw validationFailed(atIndex(error.index, collection.serializerFor('create').refusalDetails(error)));
    throw error;
  }
}

/**
 * What a write checks on the record it writes (the locked one, or the one it saw when the write is
 * conditional on it being unchanged): the object permissions, then If-Match against the record's
 * ETag — so two writers holding the same ETag cannot both succeed.
 */
const guard =
  (action: ActionRequest, then?: WriteCheck): WriteCheck =>
  async (row, database) => {
    const checked = checkRecord(action, row);
    if (isPending(checked)) await checked;
    assertCurrent(action, row);
    if (then) await then(row, database);
  };

/** If-Match against the record's ETag. */
const assertCurrent = (action: ActionRequest, row: Row): void =>
  assertMatches(action.request, () => strongEtag(stringifyJson(action.collection.serializerFor(action.action).render(row, action))));

/** Whether the model's rules write alongside this update (beforeStore, for the fields it is called on). */
const storesBefore = (rules: UpdateRules, values: Row): boolean => !rules.beforeStoreOn || rules.beforeStoreOn.some((field) => field in values);

/** Object validation of an update's values over a stored record: the serializer's `validate`, then the collection's. */
const validateUpdate = (action: ActionRequest, fields: Row, existing: Row): Promise<void> | undefined =>
  action.collection.serializerFor(action.action).validateObject(fields, { existing, user: action.user }, action.collection.validate);

/**
 * The update's object validation again, on the record it writes, where that is not the one
 * validated: changed since the first read (PostgreSQL's conditional UPDATE missed and the record
 * was read again under a lock; SQLite's locked re-read found it changed). Rules across fields then
 * hold for what is stored, not for what was read.
 */
function revalidation(action: ActionRequest, fields: Row, existing: Row): WriteCheck | undefined {
  const { validate } = action.collection;
  const serializer = action.collection.serializerFor(action.action);
  if (!serializer.validatesObjects(validate)) return undefined;
  const stored = (row: Row): string => JSON.stringify(serializer.storedFields(row), (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
  return async (row) => {
    if (row !== existing && stored(row) !== stored(existing)) await validateUpdate(action, fields, row);
  };
}

async function change(action: ActionRequest, mode: WriteMode): Promise<ActionResult> {
  const { collection, reader } = action;
  const { hooks } = collection;
  const serializer = collection.serializerFor(action.action);
  const { model } = serializer;
  const selection = selectionOf(action);
  // 404 and 403 come before a body is judged; validation (which may hash a password) stays outside the transaction.
  const { id, row: existing } = await loadRecord(action);
  const context = writeContext(action);
  const parsed = serializer.parseBody(action.body, mode, context);
  const fields = isPending(parsed) ? await parsed : parsed;
  collection.lookup.assertReachable(fields);
  const validated = validateUpdate(action, fields, existing);
  if (validated) await validated;
  const rules = model.rules?.updates;
  let values = fields;
  let row: Row | undefined;
  const { scope } = action;
  // Whether the update may move the record out of the scope (a before-hook may set any field): then it is read again within it before it commits.
  const checksScope = scope !== undefined && (hooks.beforeUpdate !== undefined || mayLeave(scope, fields));
  // With after-update hooks the before-hook and the update, conditional or locked, run in their transaction, so a throw rolls it back.
  try {
    row = await hooked(
      reader.database,
      hooks.afterUpdate !== undefined || checksScope,
      async (database) => {
        const set = prepared(fields, hooks.beforeUpdate?.({ ...hookEvent(action, database), values: fields, existing }));
        values = isPending(set) ? await set : set;
        // The model's rules get the record's id, whatever the path named it by.
        const update = { id: existing.id as RecordId, values, body: action.body as Row, user: action.user, database: unrestricted(database), countPasswordCheck: action.credentials.countOwnCheck };
        const checked = rules?.check(update);
        if (isPending(checked)) await checked;
        const alongside = rules && storesBefore(rules, values) ? (row: Row, database: Database) => rules.beforeStore({ ...update, database: unrestricted(database) }, row) : undefined;
        const updated = await writeWithRelations(database, serializer, selection, values, context, (database, own) =>
          updateRecord(database, model, selection, id, own, {
            check: guard(action, revalidation(action, fields, existing)),
            // loadRecord checked the object permissions on the record seen: what is left is If-Match.
            checkSeen: (row) => assertCurrent(action, row),
            seen: existing,
            scope,
            alongside,
          }),
        );
        const row = updated && scope && checksScope && mayLeave(scope, values) ? (await inScope(action, scope, database, [updated], MOVED_OUT))[0] : updated;
        if (row) fromTable(model, row);
        return row;
      },
      async (database, record) => {
        if (record) await hooks.afterUpdate?.({ ...hookEvent(action, database), values, existing, record });
      },
    );
  } catch (error) {
    throw shownRefusal(action, error);
  }
  if (!row) throw notFound();
  const afterCommit = committed(action, 'update', row);
  if (afterCommit) await afterCommit;
  return written(200, serializer.render(row, action), strongEtag);
}

const MOVED_OUT = 'You may not change a record so that it lies outside the ones you may see.';

/**
 * Whether writing `values` may take a record out of `scope`: a condition on a field they set or
 * across a relation, or one only the database can judge (a store condition).
 */
const mayLeave = (scope: RecordScope, values: Row): boolean =>
  scope.conditions.some((condition) =>
    'reference' in condition ? condition.reference.column in values : 'storeCondition' in condition || condition.field in values || scope.across?.[condition.field] !== undefined,
  );

/** Whether a delete must see the record first: to compare its ETag, to check a permission on it, or to show it to a hook. */
const deleteReadsRecord = ({ request, permissions, collection: { hooks } }: ActionRequest): boolean =>
  request.headers['if-match'] !== undefined ||
  permissions.some((permission) => permission.hasObjectPermission) ||
  Boolean(hooks.beforeDelete ?? hooks.afterDelete ?? hooks.afterCommit);

/**
 * DELETE on the list path (the collection's `bulkDelete`): every record the list's filters and
 * search select within the request's scope, in one statement; 204. With no filter, refused unless
 * the collection allows deleting all its records at once.
 */
async function destroyMatching(action: ActionRequest): Promise<ActionResult> {
  const { collection, parameters } = action;
  // A bulk delete takes no page, so that none seems to narrow what it deletes.
  const paging = PAGING_PARAMETERS.filter((name) => parameters.has(name));
  if (paging.length > 0) throw validationFailed(Object.fromEntries(paging.map((name) => [name, ['A delete takes no page: it deletes every record its filters select.']])), 'Invalid query parameters.');
  const { filters, search } = parseListQuery(parameters, collection.queryRules);
  if (filters.length === 0 && search.length === 0 && collection.bulkDelete !== 'all') {
    throw validationFailed({ non_field_errors: ['Name at least one filter: this collection does not delete all its records at once.'] });
  }
  await deleteMatching(action.reader.database, collection.listSource, { filters, search, scope: action.scope?.conditions });
  return { status: 204 };
}

async function destroy(action: ActionRequest): Promise<ActionResult> {
  // The list path names no record: there, DELETE is the collection's bulk delete (the router mounts it only when declared).
  if (action.id === undefined) return destroyMatching(action);
  const id = pathKey(action);
  const { hooks } = action.collection;
  let existing: Row | undefined;
  // In the locked read's transaction: the hook's reads see the record as it is deleted.
  const seen = async (row: Row, database: Database): Promise<void> => {
    existing = row;
    fromTable(action.collection.serializer.model, row);
    await hooks.beforeDelete?.({ ...hookEvent(action, database), existing: row });
  };
  let deleted: boolean;
  try {
    deleted = await hooked(
      action.reader.database,
      hooks.afterDelete !== undefined,
      (database) => deleteRecord(database, selectionOf(action), id, deleteReadsRecord(action) ? guard(action, seen) : undefined, action.scope),
      async (database, deleted) => {
        if (deleted) await hooks.afterDelete?.({ ...hookEvent(action, database), existing: existing! });
      },
    );
  } catch (error) {
    throw shownRefusal(action, error);
  }
  if (!deleted) throw notFound();
  const afterCommit = existing && committed(action, 'delete', existing);
  if (afterCommit) await afterCommit;
  return { status: 204 };
}

/**
 * A detail read or update reads its record first: announced to the reader before authentication
 * when the record is known from the path alone (a valid id and no query string, as `fields` and
 * `omit` change what is read), so the reader may send it with the credential's lookup. Not where
 * what is read depends on the user, who is not known yet: a scoped (or nested) collection's record (read within
 * the scope), a selection with aggregates over the user's rows, or reaching a table requests may
 * not see whole (`restricted`).
 */
export function announceRecord(reader: RequestReader, id: string | undefined, url: string, collection: Collection, restricted: ReadonlySet<string>, serializer: Serializer): void {
  if (collection.scope || collection.parent || serializer.perUser || readsRestricted(serializer.selection, restricted)) return;
  const { lookup } = collection;
  const recordId = url.includes('?') ? undefined : lookup.key(id ?? '');
  if (recordId !== undefined) reader.announce(lookup.selection(serializer.selection), recordId);
}

/**
 * What the pipeline (views.ts) runs after its stages: a built-in action, or an app's custom one
 * (custom.ts), which differs only in what it runs.
 */
export interface ActionRoute {
  /** The built-in action it is, or stands for: whose permissions, object checks and envelope apply. */
  readonly action: Action;
  /** A custom action's own checks, in place of the collection's for its built-in action. */
  readonly permissions?: readonly Permission[];
  /** What it answers in: the API's media types, or a custom action's own. */
  readonly mediaTypes: readonly MediaType[];
  /** Whether a body is read (and taken out of the collection's envelope). */
  readonly takesBody: boolean;
  /** Whether the collection's envelope wraps its body and answer (a custom action may opt out). */
  readonly enveloped: boolean;
  /** The serializer whose password fields a body may set: each set password is a hash, throttled as a request. */
  readonly bodySerializer?: Serializer;
  /** Tells the request's reader what the action will read, before the stages run (see announceRecord). */
  announce?(reader: RequestReader, id: string | undefined, url: string, restricted: ReadonlySet<string>): void;
  run(request: ActionRequest): Promise<ActionResult>;
}

const runAction: Record<Action, (action: ActionRequest) => Promise<ActionResult>> = {
  list,
  retrieve,
  create,
  update: (action) => change(action, action.collection.putMode),
  partial_update: (action) => change(action, 'partial_update'),
  destroy,
};

const actionsWithBody: ReadonlySet<Action> = new Set(['create', 'update', 'partial_update']);
/** The actions that read their record first, so it may be announced. */
const readingFirst: ReadonlySet<Action> = new Set(['retrieve', 'update', 'partial_update']);

/** A collection's built-in action as the pipeline runs it. */
export function builtInRoute(collection: Collection, action: Action): ActionRoute {
  const serializer = collection.serializerFor(action);
  return {
    action,
    mediaTypes: API_MEDIA_TYPES,
    takesBody: actionsWithBody.has(action),
    enveloped: true,
    bodySerializer: actionsWithBody.has(action) ? serializer : undefined,
    announce: readingFirst.has(action) ? (reader, id, url, restricted) => announceRecord(reader, id, url, collection, restricted, serializer) : undefined,
    run: runAction[action],
  };
}
