/**
 * The app's own routes (AppDefinition.routes) as first-class endpoints: every request to them is
 * authenticated by the API's authenticators (`request.user` is set; a bad credential is 401 as on
 * the collections), and a handler may check the same permissions and count in the same throttles.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../store/connection/database.js';
import { requestReader } from '../../store/read/reader.js';
import { authenticate, type Authenticator, type ForcedUser } from '../stages/authentication/index.js';
import { readPermissions } from '../base/auth-user.js';
import { type Action, type Permission } from '../declare/permission-classes.js';
import { checkPermissions } from '../stages/permissions.js';

export function authenticateAppRoutes(
  instance: FastifyInstance,
  database: Database,
  authenticators: readonly Authenticator[],
  sessionCookie: string | undefined,
  forcedUser: ForcedUser | undefined,
): void {
  instance.addHook('onRequest', async (request) => {
    request.user = await authenticate(request, authenticators, sessionCookie, requestReader(database), forcedUser);
    // The handler is the app's own code, which may ask inside a transaction it opens.
    await readPermissions(request.user);
  });
}

/** The collection action a method stands for, for checks that look at it. */
const ACTION_OF: Readonly<Record<string, Action>> = { GET: 'retrieve', HEAD: 'retrieve', POST: 'create', PUT: 'update', PATCH: 'partial_update', DELETE: 'destroy' };

/**
 * Throws unless the request's user passes every check: 401 for an anonymous request, 403 for an
 * authenticated one. `action` defaults to the one the request's method stands for.
 */
export async function requirePermissions(request: FastifyRequest, permissions: readonly Permission[], action?: Action): Promise<void> {
  await checkPermissions(permissions, { user: request.user, action: action ?? ACTION_OF[request.method] ?? 'retrieve' });
}

/** Counts the request in the throttle bucket's own window (THROTTLE_ANON / THROTTLE_USER, or the app's `throttles`); 429 over it. */
export async function throttleRequest(request: FastifyRequest, reply: FastifyReply, bucket: string): Promise<void> {
  const throttle = request.server.restfoldThrottle;
  if (!throttle) throw new Error('throttleRequest needs an app built by buildApp.');
  await throttle.checkBucket(request, reply, request.user, bucket);
}
