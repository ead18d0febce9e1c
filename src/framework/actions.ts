/**
 * The six actions of a collection: list, retrieve, create, update,
 * partial_update, destroy. Each gets a parsed request and returns a result
 * for the renderer; errors are thrown as ApiErrors.
 */
import type { FastifyRequest } from 'fastify';
import type { Database } from '../store/database.js';
import { countRecords, pageOfRecords } from '../store/list.js';
import {
  deleteRecord,
  findRecord,
  insertRecord,
  recordExists,
  updateRecord,
  type RecordId,
} from '../store/records.js';
import type { AuthUser } from './authentication/index.js';
import type { Collection } from './collection.js';
import { notFound, validationFailed } from './errors.js';
import { absoluteUrl, assertPageExists, paginate } from './pagination.js';
import { checkObjectPermissions, type Action, type Permission } from './permissions.js';
import { parseListQuery } from './query.js';
import type { Row, WriteContext, WriteMode } from './serializer.js';

export interface ActionRequest {
  readonly request: FastifyRequest;
  readonly database: Database;
  readonly collection: Collection;
  readonly action: Action;
  readonly permissions: readonly Permission[];
  readonly user: AuthUser | null;
  readonly parameters: ReadonlyMap<string, string>;
  /** The `{id}` path segment of detail routes, unparsed. */
  readonly id?: string;
  readonly body?: unknown;
}

export interface ActionResult {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

const MAX_ID = 2n ** 63n - 1n;

/** A detail path's id: a positive 64-bit integer, else 400. */
export function parseId(text: string): RecordId {
  const big = /^[1-9]\d{0,18}$/.test(text) ? BigInt(text) : 0n;
  if (big < 1n || big > MAX_ID) throw validationFailed({ id: ['A valid positive 64-bit integer is required.'] }, 'Invalid id.');
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

async function list({ request, database, collection, parameters }: ActionRequest): Promise<ActionResult> {
  const query = parseListQuery(parameters, collection.queryRules);
  const count = await countRecords(database, collection.listSource, query);
  assertPageExists(query.page, query.pageSize, count);
  const rows = count === 0 ? [] : await pageOfRecords(database, collection.listSource, query);
  const results = rows.map((row) => collection.serializer.render(row));
  return { status: 200, body: paginate(request, query.page, query.pageSize, count, results) };
}

/** The record named by the path, after the object-level permission checks. */
async function loadRecord(action: ActionRequest): Promise<{ id: RecordId; row: Row }> {
  const id = parseId(action.id ?? '');
  const row = await findRecord(action.database, action.collection.serializer.selection, id);
  if (!row) throw notFound();
  await checkObjectPermissions(action.permissions, { user: action.user, action: action.action }, row);
  return { id, row };
}

async function retrieve(action: ActionRequest): Promise<ActionResult> {
  const { row } = await loadRecord(action);
  return { status: 200, body: action.collection.serializer.render(row) };
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
  const { database, collection, request } = action;
  const values = await collection.serializer.validate(action.body, 'create', writeContext(action));
  const id = await storing(database, () => insertRecord(database, collection.serializer.model, values));
  const row = await findRecord(database, collection.serializer.selection, id);
  if (!row) throw notFound();
  const path = `${request.url.split('?')[0]!.replace(/\/?$/, '/')}${id}/`;
  return {
    status: 201,
    body: collection.serializer.render(row),
    headers: { Location: absoluteUrl(request, path).toString() },
  };
}

async function change(action: ActionRequest, mode: WriteMode): Promise<ActionResult> {
  const { database, collection } = action;
  const { id } = await loadRecord(action);
  const values = await collection.serializer.validate(action.body, mode, writeContext(action));
  const found = await storing(database, () => updateRecord(database, collection.serializer.model, id, values));
  const row = found && (await findRecord(database, collection.serializer.selection, id));
  if (!row) throw notFound();
  return { status: 200, body: collection.serializer.render(row) };
}

async function destroy(action: ActionRequest): Promise<ActionResult> {
  const { id } = await loadRecord(action);
  if (!(await deleteRecord(action.database, action.collection.serializer.model, id))) throw notFound();
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
