/**
 * What an action gets (ActionRequest) and gives back (ActionResult), the route the pipeline runs it
 * by, and what several actions share: the record the path names, read and checked; a write's
 * checks; a result written once for its ETag.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { stringifyJson } from '../../core/json.js';
import type { RecordScope } from '../../core/list-query.js';
import { readsScoped } from '../../store/conditions/table-scopes.js';
import type { RequestReader } from '../../store/read/reader.js';
import type { RecordId } from '../../store/read/records.js';
import type { WriteCheck } from '../write/unit.js';
import type { AuthUser } from '../base/auth-user.js';
import type { Collection, SerializerContext } from '../declare/collection.js';
import { assertMatches, strongEtag } from '../stages/conditional.js';
import { ApiError, emptyDetails, notAuthenticated, notFound, permissionDenied } from '../base/errors.js';
import { type Action, type Permission } from '../declare/permission-classes.js';
import { checkObjectPermissions } from '../stages/permissions.js';
import type { Representation } from '../declare/renderer.js';
import type { Row, Selection } from '../../core/rows.js';
import type { Serializer, WriteContext } from '../declare/serializer.js';
import type { RecordLinks } from '../declare/computed.js';
import { isPending, type MaybePromise } from '../../core/maybe-promise.js';
import { fromTable, type RequestCredentials } from '../toolkit/credential-store.js';

import type { FileLinks } from '../base/file-links.js';
import type { FileWrites } from '../write/file-writes.js';

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
  /** The detail routes' path segment naming the record (its `id`, or the collection's record key), unparsed. */
  readonly id?: string;
  readonly body?: unknown;
  /** The collection's scope for this request, when it has one (a nested collection's includes its parent). */
  readonly scope?: RecordScope;
  /** Values the path sets on a create (a nested collection's foreign key to its parent). */
  readonly fromPath?: Row;
  readonly credentials: RequestCredentials;
  /** The records' own URLs (`computed.url()`), as the request's router and version spell them. */
  readonly links?: RecordLinks;
  /** The query string the request's links and a created record's Location carry (render/record-links.ts, linkQueryOf): '' but under the query versioning scheme. */
  readonly linkQuery?: string;
  /** The API version the request asked for (the app's `versions`, DRF's `request.version`); undefined when it declares none. */
  readonly version?: string;
  /**
   * Whether the negotiated renderer takes every record a list selects (Renderer's `lists: 'all'`,
   * CSV's): the list then streams them, unless the request names a page.
   */
  readonly wholeLists?: boolean;
  /** How file fields render their signed links (when the app stores files). */
  readonly fileLinks?: FileLinks;
  /** What the write stored and replaced, for the files to be removed when it fails or after it commits. */
  readonly fileWrites?: FileWrites;
}

export interface ActionResult {
  readonly status: number;
  readonly body?: unknown;
  /** The body as JSON, when it was already written (to compute its ETag). */
  readonly json?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** The media type the body is already written in (a custom action's own, `text/csv` say): sent as it is, never rendered. */
  readonly type?: string;
  /** A list streamed whole (ActionRequest's `wholeLists`), in place of a body: its records as they are read and rendered. */
  readonly records?: AsyncIterable<Row>;
  /** The fields each record shows, in order (a streamed list's, which may have no record to show them). */
  readonly fields?: readonly string[];
}

/**
 * What the pipeline (views.ts) runs after its stages: a built-in action, or an app's custom one
 * (custom.ts), which differs only in what it runs.
 */
export interface ActionRoute {
  /** The built-in action it is, or stands for: whose permissions, object checks and envelope apply. */
  readonly action: Action;
  /** Set for an app's custom action: its path is its own, not its collection's list or record path. */
  readonly custom?: boolean;
  /** A custom action's own checks, in place of the collection's for its built-in action. */
  readonly permissions?: readonly Permission[];
  /** What it answers in: the API's media types, or a custom action's own. */
  readonly mediaTypes: readonly Representation[];
  /** Whether a body is read (and taken out of the collection's envelope). */
  readonly takesBody: boolean;
  /** Whether the collection's envelope wraps its body and answer (a custom action may opt out). */
  readonly enveloped: boolean;
  /** The serializer whose password fields a body may set, for the request (`collection` as its version sees it): each set password is a hash, throttled as a request. */
  bodySerializer?(context: SerializerContext, collection: Collection): Serializer;
  /** Tells the request's reader what the action will read, before the stages run (see announceRecord); `collection` as the request's version sees it. */
  announce?(reader: RequestReader, id: string | undefined, url: string, scopedTables: ReadonlySet<string>, collection: Collection): void;
  run(request: ActionRequest): Promise<ActionResult>;
}

/** What the action reads of its records (its serializer's, or a narrowed one), for this request, found by the record key. */
export const selectionOf = (action: ActionRequest, serializer = action.collection.serializerFor(action)): Selection =>
  action.collection.recordKey.selection(serializer.selectionFor(action.user));

/** A result whose JSON is written once, for both its ETag and the response (which may be a 304: see renderResult). */
export function written(status: number, body: unknown, tag: (json: string) => string, location?: string): ActionResult {
  const json = stringifyJson(body);
  const etag = tag(json);
  return { status, body, json, headers: location === undefined ? { ETag: etag } : { Location: location, ETag: etag } };
}

/**
 * What a write's transaction (its hooks, the model's rules) threw, with a refusal's details under
 * the names clients see: a hook names the model's fields, as `values` does.
 */
export function shownRefusal(action: ActionRequest, error: unknown): unknown {
  if (!(error instanceof ApiError) || !error.details) return error;
  return new ApiError(error.status, error.code, error.message, action.collection.serializerFor(action).shownDetails(error.details), error.headers);
}

/** The object-level permission checks on the record named by the path: a promise only when one answers later. */
const checkRecord = (action: ActionRequest, row: Row): MaybePromise<void> =>
  checkObjectPermissions(action.permissions, { user: action.user, action: action.action, version: action.version }, row);

/** The key the path names its record by (400 or 404 when no record can have it). */
export function pathKey({ collection: { recordKey }, id = '' }: ActionRequest): RecordId {
  const key = recordKey.key(id);
  if (key === undefined) throw recordKey.unreachable();
  return key;
}

/**
 * The record named by the path as `serializer` reads it (by default, the action's), after the
 * object-level permission checks. A path naming no valid key throws at once rather than rejecting:
 * every caller awaits it in an async function, where the two are the same.
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

/**
 * The records' fields the request may not write (the serializer's `writableBy`): 403, or 401 when
 * anonymous, naming them in `details` (a bulk create's, `many`, under `<index>.<field>`), before
 * anything is parsed. `existing`: the record an update writes.
 */
export function assertWritable(action: ActionRequest, serializer: Serializer, records: readonly unknown[], many: boolean, existing?: Row): Promise<void> | undefined {
  return serializer.writableBy.size === 0 ? undefined : refuseWrites(action, serializer, records, many, existing);
}

async function refuseWrites(action: ActionRequest, serializer: Serializer, records: readonly unknown[], many: boolean, existing?: Row): Promise<void> {
  const context = { user: action.user, action: action.action };
  const details = emptyDetails();
  const fields = new Set<string>();
  for (const [index, record] of records.entries()) {
    const pending = serializer.refusedWrites(record, context, existing);
    const refused = isPending(pending) ? await pending : pending;
    for (const [field, messages] of Object.entries(refused ?? {})) {
      fields.add(field);
      details[many ? `${index}.${field}` : field] = messages;
    }
  }
  if (fields.size === 0) return;
  const denied = action.user ? permissionDenied() : notAuthenticated();
  throw new ApiError(denied.status, denied.code, `You do not have permission to set ${[...fields].join(', ')}.`, details, denied.headers);
}

/** What a body's fields are parsed with: the requesting user, and what they may do. */
export function writeContext({ user, version }: Pick<ActionRequest, 'user' | 'version'>): WriteContext {
  return {
    userId: user?.id ?? null,
    hasPermission: async (name) => (await user?.hasPermission(name)) ?? false,
    version,
  };
}

/**
 * What a write checks on the record it writes (the locked one, or the one it saw when the write is
 * conditional on it being unchanged): the object permissions, then If-Match against the record's
 * ETag — so two writers holding the same ETag cannot both succeed.
 */
export const guard =
  (action: ActionRequest, then?: WriteCheck): WriteCheck =>
  async (row, database) => {
    const checked = checkRecord(action, row);
    if (isPending(checked)) await checked;
    assertCurrent(action, row);
    if (then) await then(row, database);
  };

/** If-Match against the record's ETag. */
export const assertCurrent = (action: ActionRequest, row: Row): void =>
  assertMatches(action.request, () => strongEtag(stringifyJson(action.collection.serializerFor(action).render(row, action))));

/**
 * A detail read or update reads its record first: announced to the reader before authentication
 * when the record is known from the path alone (a valid id and no query string, as `fields` and
 * `omit` change what is read), so the reader may send it with the query finding the credential's user. Not where
 * what is read depends on the user, who is not known yet: a scoped (or nested) collection's record (read within
 * the scope), a selection with aggregates over the user's rows, or reaching a table requests may
 * not see whole (`scopedTables`).
 */
export function announceRecord(reader: RequestReader, id: string | undefined, url: string, collection: Collection, scopedTables: ReadonlySet<string>, serializer: Serializer): void {
  if (collection.scope || collection.parent || serializer.perUser || readsScoped(serializer.selection, scopedTables)) return;
  const { recordKey } = collection;
  const recordId = url.includes('?') ? undefined : recordKey.key(id ?? '');
  if (recordId !== undefined) reader.announce(recordKey.selection(serializer.selection), recordId);
}
