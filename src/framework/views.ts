/**
 * The one pipeline (DRF's `dispatch`): every action of a collection, built-in or custom, passes
 * the stages (docs/contract.md) in order, here and nowhere else.
 *   versioning → authentication → permissions → throttling → negotiation → parsing → scope → action → rendering
 * Each request has one store reader, which every stage reads through. What the action will read is
 * announced to it first, so the reader may merge reads (docs/architecture.md); the stages still
 * decide, in their order, whether anything is shown.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../store/connection/database.js';
import { requestReader } from '../store/read/reader.js';
import { unscoped } from '../store/conditions/table-scopes.js';
import type { ActionRequest, ActionResult, ActionRoute } from './actions/request.js';
import { authenticate, type Authenticator, type ForcedUser } from './stages/authentication/index.js';
import { askedIn } from './write/unit.js';
import { asAdminWrite } from './write/change-log.js';
import { isAdminCall, pageUserOf } from './base/admin-calls.js';
import type { BrowsableContext } from './render/browsable/index.js';
import { atVersion, type Collection, type Singleton } from './declare/collection.js';
import type { Serializer } from './declare/serializer.js';
import type { RecordLinks } from './declare/computed.js';
import { notAuthenticated, notFound } from './base/errors.js';
import type { RequestContext } from './declare/scope.js';
import { negotiate } from './stages/negotiation.js';
import { parseRecordBody, takesFiles, type UploadRules } from './stages/parsers/record-body.js';
import { queryParameters } from './base/query-string.js';
import type { Action, Permission } from './declare/permission-classes.js';
import { checkPermissions } from './stages/permissions.js';
import { renderResult, rendererFor } from './render/renderers.js';
import { RecordRefused } from '../core/refused.js';
import { requestScope } from './stages/scope/index.js';
import type { ScopePlan } from './stages/scope/plan.js';
import type { Throttle } from './stages/throttling.js';
import { requestCredentials, type CredentialSetup } from './toolkit/credential-store.js';
import { determineVersion, withoutVersion, type Versioning } from './stages/versioning.js';
import { linkQueryOf, withLinkQuery } from './render/record-links.js';
import { isPending } from '../core/maybe-promise.js';
import type { LiveHub } from './actions/live/hub.js';
import type { FileStorage } from '../store/files/storage.js';
import type { FileLinks } from './base/file-links.js';
import type { UploadLimits } from './stages/parsers/multipart.js';
import { FileWrites } from './write/file-writes.js';

/** Uploaded files: where they are stored, how links to them are signed, and the uploads' limits. */
export interface FilesRuntime {
  readonly storage: FileStorage;
  readonly links: FileLinks;
  /** SECRET_KEY's key for download links. */
  readonly linkKey: Uint8Array;
  readonly limits: UploadLimits;
  /** With S3: downloads answer 302 to a presigned URL. */
  readonly redirect: boolean;
}

export interface ApiRuntime {
  readonly database: Database;
  /** Signs pagination cursors (derived from SECRET_KEY). */
  readonly cursorKey: Uint8Array;
  readonly authenticators: readonly Authenticator[];
  readonly sessionCookie?: string;
  /** Testing only (AppContext.forcedUser). */
  readonly forcedUser?: ForcedUser;
  /** Checks for actions a collection leaves to the API. */
  defaultPermissions(action: Action): readonly Permission[];
  readonly throttle: Throttle;
  /** What the browsable page needs beyond the request (login URLs, the API root). */
  readonly page: BrowsableContext;
  /** Which tables requests may not see whole, and which scopes a request to each collection resolves. */
  readonly scopePlan: ScopePlan;
  /** What the app's code checks passwords and issues credentials with (Credentials). */
  readonly credentials: CredentialSetup;
  /** The URLs of the records a collection renders (set by the router for each collection it mounts). */
  readonly links?: RecordLinks;
  /** The process's live streams, when a collection has `live` (actions/live/hub.ts). */
  readonly live?: LiveHub;
  /** How requests name the API's version, when the app declares versions (stages/versioning.ts). */
  readonly versioning?: Versioning;
  /** The version this router's mount serves, under the path scheme (its prefix holds it). */
  readonly version?: string;
  /**
   * Put before a collection's name to name its throttle bucket: `auth/` for the framework's own
   * collections under `/auth/`, whose names (users, groups) an app's collections may also have, so
   * that an app's `throttles.users` neither applies to `/auth/users/` nor shares its counts.
   */
  readonly bucketPrefix?: string;
  readonly files?: FilesRuntime;
  /** With files: the upload rules of the models the collection's bodies are read by, built as it mounts (router.ts). */
  readonly uploadRules?: UploadRules;
}

/**
 * What a collection's answer depends on besides its URL: the media type asked for, and the
 * credential (its header, or the session cookie), so no cache serves one user's answer to another.
 * Added to any Vary already set (CORS's Origin).
 */
function varyByRequester(reply: FastifyReply, runtime: ApiRuntime): void {
  const names = runtime.sessionCookie ? 'Accept, Authorization, Cookie' : 'Accept, Authorization';
  const vary = reply.getHeader('vary');
  reply.header('Vary', vary ? `${String(vary)}, ${names}` : names);
}

/** An action's checks: `own` (a custom action's), else the collection's, else the API's default; and the model's. */
export function permissionsFor(runtime: ApiRuntime, collection: Collection, action: Action, own?: readonly Permission[]): readonly Permission[] {
  const chosen = own ?? collection.permissionsFor(action) ?? runtime.defaultPermissions(action);
  const ruled = collection.serializer.model.rules?.permissions;
  return ruled ? [...chosen, ...ruled] : chosen;
}

/** The singleton's record id for this request, as a path would name it: 401 when it chooses none for an anonymous caller, 404 for a user. */
function singletonId(singleton: Singleton, context: RequestContext): string {
  const id = singleton(context);
  if (id === undefined || id === null) throw context.user ? notFound() : notAuthenticated();
  return String(id);
}

const READ_ONLY_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/**
 * Every action of a collection, built-in or custom, through the stages in SPEC's order; `route`
 * says which action runs at the end (actions/index.ts, actions/custom.ts).
 */
export async function dispatch(request: FastifyRequest, reply: FastifyReply, runtime: ApiRuntime, collection: Collection, route: ActionRoute): Promise<FastifyReply> {
  varyByRequester(reply, runtime);
  const { action } = route;
  // First, as DRF's initial() does: the version chooses the serializers, whose reads are announced.
  const version = determineVersion(runtime.versioning, request, runtime.version);
  const seen = atVersion(collection, version);
  // A GET or HEAD writes nothing (a custom action's code writes on the primary all the same): its reads may go to a replica.
  const readOnly = READ_ONLY_METHODS.has(request.method);
  // Where the app's code may ask for a permission inside a transaction (a write's hooks, a custom
  // action's), the user's are read through it if asked there: nothing is read unless asked.
  const database = readOnly && !route.custom ? runtime.database : askedIn(isAdminCall(request) ? asAdminWrite(runtime.database) : runtime.database, () => request.user);
  const reader = requestReader(database, readOnly);
  const id = collection.singleton ? undefined : collection.recordKey.segmentIn(request.params);
  route.announce?.(reader, id, request.url, runtime.scopePlan.scopedTables, seen);
  // An admin page's call is made by the page's user, authenticated (and counted below) once for the page.
  const pageUser = pageUserOf(request);
  const user = pageUser ?? (await authenticate(request, runtime.authenticators, runtime.sessionCookie, reader, runtime.forcedUser));
  request.user = user;
  reader.authenticated(user !== null);

  const permissions = permissionsFor(runtime, collection, action, route.permissions);
  const allowed = checkPermissions(permissions, { user, action, version });
  if (isPending(allowed)) await allowed;

  const bucket = `${runtime.bucketPrefix ?? ''}${collection.name}`;
  const counted = pageUser ? undefined : runtime.throttle.check(request, reply, user, bucket);
  if (isPending(counted)) await counted;

  const parameters = withoutVersion(queryParameters(request.url), runtime.versioning);
  const mediaType = negotiate(request, route.mediaTypes, parameters.get('format'));

  const envelope = route.enveloped ? collection.envelope : undefined;
  const bodySerializer = route.bodySerializer?.({ action, user, version }, seen);
  // Only a write that may store or replace files keeps account of them.
  const { files, uploadRules } = runtime;
  const storesFiles = files && uploadRules && (route.takesBody || action === 'destroy') && (takesFiles(uploadRules, collection.serializer.model) || (bodySerializer !== undefined && takesFiles(uploadRules, bodySerializer.model)));
  const fileWrites = storesFiles ? new FileWrites(files.storage, request.log) : undefined;
  let result: ActionResult;
  try {
    result = await acted();
  } catch (error) {
    await fileWrites?.discard();
    throw error;
  }
  await fileWrites?.settle();
  if (reply.sent) return reply;
  const page = route.custom ? { ...runtime.page, custom: true } : runtime.page;
  return renderResult(reply, mediaType, result, page, seen, action, envelope);

  /** The body parsed, then the action run (what it stored removed by the caller if either fails). */
  async function acted(): Promise<ActionResult> {
  const fromForm = (form: URLSearchParams): unknown => formBody(seen, route, bodySerializer, form);
  // A body's serializer takes a multipart body (its fields read as a form's; files only to its file fields).
  const uploads = files && uploadRules && bodySerializer && { model: bodySerializer.model, rules: uploadRules, storage: files.storage, limits: files.limits, stored: fileWrites?.stored ?? [] };
  const parsed = route.takesBody ? parseRecordBody(request, envelope, fromForm, uploads) : undefined;
  const body = isPending(parsed) ? await parsed : parsed;
  // Setting a password checks none, so it is not a login's to limit: a user's hashes count as requests, an anonymous client's as sign-ups.
  const hashings = bodySerializer?.hashingsIn(body) ?? 0;
  if (hashings > 0) await runtime.throttle.passwordWrites(request, reply, user, bucket, hashings);

  const context = { user, parameters, version };
  const recordId = collection.singleton ? singletonId(collection.singleton, context) : id;
  // Pending only for a nested collection, whose parent is read, or a scope that answers later.
  const pending = requestScope(runtime.scopePlan, collection, request, reader, context);
  const { scope, fromPath } = isPending(pending) ? await pending : pending;
  const linkQuery = linkQueryOf(runtime.versioning?.scheme === 'query' ? runtime.versioning.param : undefined, version);
  const actionRequest: ActionRequest = {
    request,
    reply,
    reader,
    cursorKey: runtime.cursorKey,
    collection: seen,
    action,
    permissions,
    user,
    parameters,
    version,
    id: recordId,
    body,
    scope,
    fromPath,
    credentials: requestCredentials(runtime.credentials, request, reply, unscoped(reader.database)),
    links: runtime.links && linkQuery ? withLinkQuery(runtime.links, linkQuery) : runtime.links,
    linkQuery,
    wholeLists: rendererFor(mediaType, collection)?.lists === 'all',
    fileLinks: runtime.files?.links,
    fileWrites,
  };
  try {
    return await route.run(actionRequest);
  } catch (error) {
    // What the database refused (a unique field taken, a slug naming nothing) under the names clients see.
    throw error instanceof RecordRefused && error.index === undefined ? new RecordRefused(seen.serializerFor({ action, user, version }).refusalDetails(error)) : error;
  }
  }
}

/** Whether the collection's model has a file field (as it mounts: a request asks its upload rules). */
export const hasFiles = (collection: Collection): boolean => Object.values(collection.serializer.model.fields).some((field) => field.file);

/** A form's fields as the body JSON would carry, read by the serializer that validates it (strings, where none does). */
function formBody(collection: Collection, route: ActionRoute, serializer: Serializer | undefined, form: URLSearchParams): unknown {
  if (!serializer) return Object.fromEntries(form);
  const mode = route.custom || route.action === 'create' ? 'create' : route.action === 'update' ? collection.putMode : 'partial_update';
  return serializer.formBody(form, mode);
}
