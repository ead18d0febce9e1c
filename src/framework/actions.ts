/**
 * The six actions of a collection: list, retrieve, create, update,
 * partial_update, destroy. Each gets a parsed request and returns a result
 * for the renderer; errors are thrown as ApiErrors.
 */
import type { FastifyRequest } from 'fastify';
import type { Database } from '../store/database.js';
import { countAndPage, countRecords, estimateRecords, pageByKeyset, pageOfRecords, type ListQuery, type ListSource } from '../store/list.js';
import {
  deleteRecord,
  findRecord,
  findRecords,
  insertRecord,
  recordExists,
  updateRecord,
  type RecordId,
} from '../store/records.js';
import type { Authentication, AuthUser } from './authentication/index.js';
import type { Collection } from './collection.js';
import { assertMatches, notModified, strongEtag, weakEtag } from './conditional.js';
import { ApiError, notFound, validationFailed, type ErrorDetails } from './errors.js';
import { FieldError, parseInteger64 } from './fields.js';
import { absoluteUrl, assertPageExists, paginate, preferredCount } from './pagination.js';
import { checkObjectPermissions, type Action, type Permission } from './permissions.js';
import { invalidPage, parseListQuery } from './query.js';
import { chosenFields, type Row, type Serializer, type WriteContext, type WriteMode } from './serializer.js';
import { boundaryOf, cursorAt, decodeCursor, encodeCursor, orderingKey } from './cursor.js';

export interface ActionRequest {
  readonly request: FastifyRequest;
  readonly database: Database;
  readonly collection: Collection;
  readonly action: Action;
  readonly permissions: readonly Permission[];
  readonly user: AuthUser | null;
  readonly parameters: ReadonlyMap<string, string>;
  /** Signs and checks pagination cursors. */
  readonly secretKey: string;
  /** The `{id}` path segment of detail routes, unparsed. */
  readonly id?: string;
  readonly body?: unknown;
  /** The record, when authentication already read it (Authentication.read). */
  readonly read?: Authentication['read'];
}

export interface ActionResult {
  readonly status: number;
  readonly body?: unknown;
  /** The body as JSON, when it was already written (to compute its ETag). */
  readonly json?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A detail path's id: a positive 64-bit integer (digits only, no leading zero), else undefined. */
export function idOf(text: string): RecordId | undefined {
  try {
    if (/^[1-9]\d*$/.test(text)) return parseInteger64(text);
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
  }
  return undefined;
}

/** A detail path's id, else 400. */
export function parseId(text: string): RecordId {
  const id = idOf(text);
  if (id === undefined) throw validationFailed({ id: ['A valid positive 64-bit integer is required.'] }, 'Invalid id.');
  return id;
}

async function list(action: ActionRequest): Promise<ActionResult> {
  const { request, collection, parameters } = action;
  const query = parseListQuery(parameters, collection.queryRules);
  const serializer = chosenFields(collection.serializer, parameters);
  const source = { ...collection.listSource, selection: serializer.selection };
  if (collection.pagination === 'cursor') return listByCursor(action, serializer, query);
  const mode = preferredCount(request, collection.countModes);
  const { count, rows, hasNext } = mode === 'exact' ? await exactPage(action, source, query) : await pageWithout(action, source, query, mode);
  const body = paginate(request, query.page, count, hasNext, rows.map((row) => serializer.render(row)));
  const result = representation(request, body, weakEtag);
  return mode === 'exact' ? result : { ...result, headers: { ...result.headers, 'Preference-Applied': `count=${mode}` } };
}

/** A cursor page: `{count: null, next, previous, results}`, with links that carry signed cursors. */
async function listByCursor(action: ActionRequest, serializer: Serializer, query: ListQuery): Promise<ActionResult> {
  const { request, database, collection, parameters, secretKey } = action;
  const fields = collection.queryRules.fields;
  const key = orderingKey(query.ordering);
  const text = parameters.get('cursor');
  const cursor = text ? decodeCursor(text, secretKey, key) : undefined;
  const backwards = cursor?.direction === 'previous';
  const source = { ...collection.listSource, selection: serializer.selection };
  const keyset = cursor && { boundary: boundaryOf(cursor, query.ordering, fields), backwards };
  const read = await pageByKeyset(database, source, query, keyset, query.pageSize + 1);
  const more = read.length > query.pageSize;
  const rows = read.slice(0, query.pageSize);
  if (backwards) rows.reverse();
  const link = (row: Row | undefined, direction: 'next' | 'previous'): string | null => {
    if (!row) return null;
    const url = absoluteUrl(request);
    url.searchParams.delete('page');
    url.searchParams.set('cursor', encodeCursor({ ordering: key, ...cursorAt(row, query.ordering, fields, direction) }, secretKey));
    return url.toString();
  };
  const body = {
    count: null,
    next: (backwards ? cursor !== undefined : more) ? link(rows.at(-1), 'next') : null,
    previous: (backwards ? more : cursor !== undefined) ? link(rows[0], 'previous') : null,
    results: rows.map((row) => serializer.render(row)),
  };
  return representation(request, body, weakEtag);
}

interface CountedPage {
  count: number | null;
  rows: Row[];
  hasNext: boolean;
}

async function exactPage({ database }: ActionRequest, source: ListSource, query: ListQuery): Promise<CountedPage> {
  const { count, rows } = await countAndPage(database, source, query);
  assertPageExists(query.page, query.pageSize, count);
  return { count, rows, hasNext: query.page * query.pageSize < count };
}

/**
 * A page without an exact count: one row past the page tells whether there is
 * a next one. `estimated` takes the planner's guess, or counts exactly below
 * the collection's threshold (and where the database has no planner estimate).
 */
async function pageWithout(action: ActionRequest, source: ListSource, query: ListQuery, mode: 'estimated' | 'none'): Promise<CountedPage> {
  const { database, collection } = action;
  const [estimate, rows] = await Promise.all([
    mode === 'estimated' ? estimateRecords(database, source, query) : undefined,
    pageOfRecords(database, source, query, 1),
  ]);
  if (query.page > 1 && rows.length === 0) throw invalidPage();
  const count =
    mode === 'none' ? null : estimate !== undefined && estimate >= collection.estimateThreshold ? Math.round(estimate) : await countRecords(database, source, query);
  return { count, rows: rows.slice(0, query.pageSize), hasNext: rows.length > query.pageSize };
}

/** 200 with the body and its ETag, or 304 when the client's copy is current. */
function representation(request: FastifyRequest, body: unknown, tag: (json: string) => string): ActionResult {
  const result = written(200, body, tag);
  const etag = result.headers!.ETag!;
  return notModified(request, etag) ? { status: 304, headers: { ETag: etag } } : result;
}

/** A result whose JSON is written once, for both its ETag and the response. */
function written(status: number, body: unknown, tag: (json: string) => string, headers: Record<string, string> = {}): ActionResult {
  const json = JSON.stringify(body);
  return { status, body, json, headers: { ...headers, ETag: tag(json) } };
}

/** The record named by the path, after the object-level permission checks; `lock` holds it for a write. */
async function loadRecord(action: ActionRequest, selection = action.collection.serializer.selection, lock = false): Promise<{ id: RecordId; row: Row }> {
  const id = parseId(action.id ?? '');
  const row = action.read?.selection === selection && !lock ? action.read.row : await findRecord(action.database, selection, id, { lock });
  if (!row) throw notFound();
  await checkObjectPermissions(action.permissions, { user: action.user, action: action.action }, row);
  return { id, row };
}

async function retrieve(action: ActionRequest): Promise<ActionResult> {
  const serializer = chosenFields(action.collection.serializer, action.parameters);
  const { row } = await loadRecord(action, serializer.selection);
  const body = serializer.render(row);
  return representation(action.request, body, strongEtag);
}

function writeContext({ database, user }: ActionRequest): WriteContext {
  return { userId: user?.id ?? null, exists: (table, id) => recordExists(database, table, id) };
}

/** Column names → the same message for each (or for `non_field_errors` when none are known). */
const detailsFor = (columns: readonly string[], message: string) =>
  Object.fromEntries(columns.length ? columns.map((column) => [column, [message]]) : [['non_field_errors', [message]]]);

/**
 * A write, with constraint failures that concurrent requests can cause (a
 * unique clash, a referenced record deleted after validation) turned into 400s.
 */
export async function storing<T>(database: Database, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const clashing = database.uniqueViolation(error);
    if (clashing) throw validationFailed(detailsFor(clashing, `A record with this ${clashing.join(', ') || 'value'} already exists.`));
    const missing = database.missingReference(error);
    if (missing) throw validationFailed(detailsFor(missing, 'The object this refers to does not exist.'));
    throw error;
  }
}

async function create(action: ActionRequest): Promise<ActionResult> {
  if (Array.isArray(action.body) && action.collection.bulkCreateMax !== undefined) return createMany(action, action.body);
  const { database, collection, request } = action;
  const values = await collection.serializer.validate(action.body, 'create', writeContext(action));
  const id = await storing(database, () => insertRecord(database, collection.serializer.model, values));
  const row = await findRecord(database, collection.serializer.selection, id);
  if (!row) throw notFound();
  const body = collection.serializer.render(row);
  const path = `${request.url.split('?')[0]!.replace(/\/?$/, '/')}${id}/`;
  return written(201, body, strongEtag, { Location: absoluteUrl(request, path).toString() });
}

/** Each record's errors under `<index>.<field>`. */
function atIndex(index: number, error: unknown): ErrorDetails {
  if (!(error instanceof ApiError) || !error.details) throw error;
  return Object.fromEntries(Object.entries(error.details).map(([field, messages]) => [`${index}.${field}`, messages]));
}

/** A bulk create: every record valid and stored, in one transaction, or none. */
async function createMany(action: ActionRequest, records: unknown[]): Promise<ActionResult> {
  const { database, collection } = action;
  const max = collection.bulkCreateMax!;
  if (records.length > max) throw new ApiError(413, 'payload_too_large', `Send at most ${max} records at once.`);
  if (records.length === 0) throw validationFailed({ non_field_errors: ['Send at least one record.'] });
  const context = writeContext(action);
  const details: ErrorDetails = {};
  const values: Row[] = [];
  for (const [index, record] of records.entries()) {
    try {
      values.push(await collection.serializer.validate(record, 'create', context));
    } catch (error) {
      Object.assign(details, atIndex(index, error));
    }
  }
  if (Object.keys(details).length > 0) throw validationFailed(details);
  const ids = await database.db.transaction().execute(async (transaction) => {
    const scoped = { ...database, db: transaction };
    const created: RecordId[] = [];
    for (const [index, record] of values.entries()) {
      try {
        created.push(await storing(scoped, () => insertRecord(scoped, collection.serializer.model, record)));
      } catch (error) {
        throw validationFailed(atIndex(index, error));
      }
    }
    return created;
  });
  const rows = await findRecords(database, collection.serializer.selection, ids);
  return { status: 201, body: rows.map((row) => collection.serializer.render(row)) };
}

/**
 * A write to the record named by the path, in one transaction: the record is
 * loaded and locked, its object permissions and If-Match checked, then `write`
 * runs — so two writers holding the same ETag cannot both succeed.
 */
async function guardedWrite<T>(action: ActionRequest, write: (database: Database, id: RecordId) => Promise<T>): Promise<T> {
  return action.database.db.transaction().execute(async (transaction) => {
    const database = { ...action.database, db: transaction };
    const { id, row } = await loadRecord({ ...action, database }, undefined, true);
    assertMatches(action.request, strongEtag(JSON.stringify(action.collection.serializer.render(row))));
    return write(database, id);
  });
}

async function change(action: ActionRequest, mode: WriteMode): Promise<ActionResult> {
  const { collection } = action;
  // 404 and 403 come before a body is judged; validation (which may hash a password) stays outside the transaction.
  await loadRecord(action);
  const values = await collection.serializer.validate(action.body, mode, writeContext(action));
  const row = await guardedWrite(action, async (database, id) => {
    await storing(database, () => updateRecord(database, collection.serializer.model, id, values));
    return findRecord(database, collection.serializer.selection, id);
  });
  if (!row) throw notFound();
  const body = collection.serializer.render(row);
  return written(200, body, strongEtag);
}

async function destroy(action: ActionRequest): Promise<ActionResult> {
  await guardedWrite(action, (database, id) => deleteRecord(database, action.collection.serializer.model, id));
  return { status: 204 };
}

export const runAction: Record<Action, (action: ActionRequest) => Promise<ActionResult>> = {
  list,
  retrieve,
  create,
  update: (action) => change(action, 'update'),
  partial_update: (action) => change(action, 'partial_update'),
  destroy,
};
