/**
 * The collection handler: the pipeline's stages (docs/contract.md), in order, in one place.
 *   authentication → permissions → throttling → negotiation → parsing → action → rendering
 * On PostgreSQL the record a plain detail read or update reads first is read with the
 * authentication's own query (one round trip, not two) and handed to the action; the stages still decide, in their order, whether it is shown.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../store/database.js';
import { runAction } from './actions.js';
import { authenticate, type Authenticator, type RecordRead } from './authentication/index.js';
import type { BrowsableContext } from './browsable/index.js';
import type { Collection } from './collection.js';
import { idOf } from './record-id.js';
import { API_MEDIA_TYPES, negotiate } from './negotiation.js';
import { parseJsonBody, queryParameters } from './parsers.js';
import { checkPermissions, type Action, type Permission } from './permissions.js';
import { renderResult } from './renderers.js';
import { scopeFor } from './scope.js';
import type { PasswordThrottle, Throttle } from './throttling.js';

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
}

const actionsWithBody: ReadonlySet<Action> = new Set(['create', 'update', 'partial_update']);
/** Actions that read the record before anything else: a detail read, and an update (404 and 403 before its body is judged). */
const readsRecordFirst: ReadonlySet<Action> = new Set(['retrieve', 'update', 'partial_update']);

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

/**
 * A detail read whose record is known before the stages run: a valid id and no query string
 * (`fields` and `omit` change what is read). Anything else is read by the action, where its
 * errors come in their usual order. Only where a query is a round trip: SQLite answers in-process,
 * and it ran the paired query slower than the two apart (measured in docs/performance.md).
 */
function plainDetailRead(request: FastifyRequest, runtime: ApiRuntime, collection: Collection): RecordRead | undefined {
  // A scoped collection reads its record with the scope's conditions, which the user lookup cannot carry.
  if (!runtime.database.capabilities.mergesRoundTrips || collection.scope) return undefined;
  const id = request.url.includes('?') ? undefined : idOf((request.params as { id: string }).id);
  return id === undefined ? undefined : { database: runtime.database, selection: collection.serializer.selection, id };
}

/** An action's checks: `own` (a custom action's), else the collection's, else the API's default; and the model's. */
export function permissionsFor(runtime: ApiRuntime, collection: Collection, action: Action, own?: readonly Permission[]): readonly Permission[] {
  const chosen = own ?? collection.permissionsFor(action) ?? runtime.defaultPermissions(action);
  const ruled = collection.serializer.model.rules?.permissions;
  return ruled ? [...chosen, ...ruled] : chosen;
}

export async function handleCollection(
  request: FastifyRequest,
  reply: FastifyReply,
  runtime: ApiRuntime,
  collection: Collection,
  action: Action,
): Promise<FastifyReply> {
  varyByRequester(reply, runtime);
  const read = readsRecordFirst.has(action) ? plainDetailRead(request, runtime, collection) : undefined;
  const authentication = await authenticate(request, runtime.authenticators, runtime.sessionCookie, read);
  const { user } = authentication;
  request.user = user;

  const permissions = permissionsFor(runtime, collection, action);
  await checkPermissions(permissions, { user, action });

  await runtime.throttle.check(request, reply, user, collection.name);

  const parameters = queryParameters(request.url);
  const mediaType = negotiate(request, API_MEDIA_TYPES, parameters.get('format'));

  const body = actionsWithBody.has(action) ? parseJsonBody(request) : undefined;
  // Hashing a password costs what checking one does, so it is limited as logins are, per acting user.
  for (let records = collection.serializer.hashingsIn(body); records > 0; records -= 1) {
    await runtime.passwordThrottle(request, reply, user ? `id:${user.id}` : undefined);
  }

  const { id } = request.params as { id?: string };
  const result = await runAction[action]({
    request,
    database: runtime.database,
    cursorKey: runtime.cursorKey,
    collection,
    action,
    permissions,
    user,
    parameters,
    id,
    body,
    read: authentication.read,
    scope: scopeFor(collection.scope, collection.queryRules.fields, { user, parameters }),
  });

  return renderResult(reply, mediaType, result, { ...runtime.page, collection, action });
}
