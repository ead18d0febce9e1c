/**
 * The collection handler: the pipeline's stages (docs/contract.md), in order, in one place.
 *   authentication → permissions → throttling → negotiation → parsing → action → rendering
 * Each request has one store reader, which every stage reads through. What the action will read is
 * announced to it first, so the reader may merge reads (docs/architecture.md); the stages still
 * decide, in their order, whether anything is shown.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../store/database.js';
import { requestReader } from '../store/reader.js';
import { announceReads, runAction, type ActionRequest, type ActionResult } from './actions.js';
import { authenticate, type Authenticator } from './authentication/index.js';
import { accountKey } from './authentication/auth-user.js';
import type { BrowsableContext } from './browsable/index.js';
import type { Collection, Singleton } from './collection.js';
import type { RecordLinks } from './computed.js';
import { notAuthenticated, notFound } from './errors.js';
import type { RequestContext } from './scope.js';
import { unwrapBody, wrapResult } from './envelopes.js';
import { API_MEDIA_TYPES, negotiate } from './negotiation.js';
import { parseJsonBody, queryParameters } from './parsers.js';
import { checkPermissions, type Action, type Permission } from './permissions.js';
import { renderResult } from './renderers.js';
import { RecordRefused } from '../core/refused.js';
import { scopeRelated, type RelatedScopes } from './related-scopes.js';
import { requestScope } from './nested.js';
import type { PasswordThrottle, Throttle } from './throttling.js';
import { requestCredentials, type CredentialSetup } from './authentication/app-credentials.js';
import { isPending } from '../core/maybe-promise.js';

export interface ApiRuntime {
  readonly database: Database;
  /** Signs pagination cursors (derived from SECRET_KEY). */
  readonly cursorKey: Uint8Array;
  readonly authenticators: readonly Authenticator[];
  readonly sessionCookie?: string;
  /** Checks for actions a collection leaves to the API. */
  defaultPermissions(action: Action): readonly Permission[];
  readonly throttle: Throttle;
  /** Counts each record of a body that sets a password, as a login counts (THROTTLE_LOGIN). */
  readonly passwordThrottle: PasswordThrottle;
  /** What the browsable page needs beyond the request (login URLs, the API root). */
  readonly page: BrowsableContext;
  /** The scoped collections' tables, whose records nested reads keep within the scopes. */
  readonly relatedScopes: RelatedScopes;
  /** What the app's code checks passwords and issues credentials with (Credentials). */
  readonly credentials: CredentialSetup;
  /** The URLs of the records a collection renders (set by the router for each collection it mounts). */
  readonly links?: RecordLinks;
}

const actionsWithBody: ReadonlySet<Action> = new Set(['create', 'update', 'partial_update']);

/**
 * What a collection's answer depends on besides its URL: the media type asked for, and the
 * credential (its header, or the session cookie), so no cache serves one user's answer to another.
 * Added to any Vary already set (CORS's Origin).
 */
export function varyByRequester(reply: FastifyReply, runtime: ApiRuntime): void {
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

export async function handleCollection(
  request: FastifyRequest,
  reply: FastifyReply,
  runtime: ApiRuntime,
  collection: Collection,
  action: Action,
): Promise<FastifyReply> {
  varyByRequester(reply, runtime);
  const reader = requestReader(runtime.database);
  const id = collection.singleton ? undefined : collection.lookup.segmentIn(request.params);
  announceReads[action]?.(reader, id, request.url, collection, runtime.relatedScopes, action);
  const user = await authenticate(request, runtime.authenticators, runtime.sessionCookie, reader);
  request.user = user;

  const permissions = permissionsFor(runtime, collection, action);
  const allowed = checkPermissions(permissions, { user, action });
  if (isPending(allowed)) await allowed;

  const counted = runtime.throttle.check(request, reply, user, collection.name);
  if (isPending(counted)) await counted;

  const parameters = queryParameters(request.url);
  const mediaType = negotiate(request, API_MEDIA_TYPES, parameters.get('format'));

  const body = actionsWithBody.has(action) ? unwrapBody(collection.envelope, parseJsonBody(request)) : undefined;
  // Hashing a password costs what checking one does, so it is limited as logins are, per acting user.
  for (let records = collection.serializerFor(action).hashingsIn(body); records > 0; records -= 1) {
    await runtime.passwordThrottle(request, reply, accountKey(user?.username));
  }

  const context = { user, parameters };
  const recordId = collection.singleton ? singletonId(collection.singleton, context) : id;
  // Awaited only for a nested collection, whose parent is read: a turn of the event loop less for the rest.
  const pending = requestScope(collection, request, reader, context);
  const { scope, fromPath } = isPending(pending) ? await pending : pending;
  // Every property named in one literal, no spread: V8 builds it on its fast path.
  const actionRequest: ActionRequest = {
    request,
    reader,
    cursorKey: runtime.cursorKey,
    collection,
    action,
    permissions,
    user,
    parameters,
    id: recordId,
    body,
    scope,
    fromPath,
    scopeRelated: scopeRelated(runtime.relatedScopes, context),
    credentials: requestCredentials(runtime.credentials, request, reply, reader.database),
    links: runtime.links,
  };
  let result: ActionResult;
  try {
    result = await runAction[action](actionRequest);
  } catch (error) {
    // What the database refused (a unique field taken, a slug naming nothing) under the names clients see.
    throw error instanceof RecordRefused && error.index === undefined ? new RecordRefused(collection.serializerFor(action).refusalDetails(error)) : error;
  }

  return renderResult(reply, mediaType, wrapResult(collection.envelope, action, result), runtime.page, collection, action);
}
