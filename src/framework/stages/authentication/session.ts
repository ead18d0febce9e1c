/**
 * Sessions: `POST <prefix>/auth/login/` starts one (a signed, HttpOnly,
 * SameSite=Lax cookie, and the id in the body for Bearer use);
 * `POST <prefix>/auth/logout/` ends it. A session borne by the cookie must
 * send its CSRF token in `X-CSRF-Token` on unsafe methods (a browser attaches
 * cookies to cross-site requests, never an Authorization header).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../../store/database.js';
import { authenticationFailed, notAuthenticated, permissionDenied, validationFailed } from '../../base/errors.js';
import { ANONYMOUS, errorResponses } from '../../docs/openapi.js';
import { resource } from '../../routing/router.js';
import { constantTimeEqual, credentialShape, hashOf, newCredential } from './credentials.js';
import { credentialOf, type AuthenticationKind, type Authenticator, type Credential } from './index.js';
import { credentialsSchema, objectOf, passwordChecked, type LoginCheck } from '../../routing/auth/login.js';
import type { SessionStore } from './session-store.js';
import { findCurrentUser, type AuthUser } from '../../base/auth-user.js';

const PREFIX = 'rfs_';
const sessionShape = credentialShape(PREFIX);
export const SESSION_COOKIE = 'restfold_session';
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export function sessionKind(database: Database, store: SessionStore, lifetime: number, checkLogin: LoginCheck): AuthenticationKind {
  /** The session id a credential carries; undefined when it is not a session's. Tampered cookies fail. */
  function sessionIdOf(credential: Credential, request: FastifyRequest): string | undefined {
    if (credential.scheme === 'bearer') return sessionShape.test(credential.value) ? credential.value : undefined;
    const { valid, value } = request.unsignCookie(credential.value);
    if (!valid || value === null || !sessionShape.test(value)) throw authenticationFailed('Invalid session.');
    return value;
  }

  async function userOf(id: string, credential: Credential, request: FastifyRequest): Promise<AuthUser> {
    const idHash = hashOf(id);
    const stored = await store.load(idHash);
    const user = stored && (await findCurrentUser(database, { userId: stored.userId, version: stored.version ?? 0, id: idHash }));
    if (!stored || !user) throw authenticationFailed('Invalid or expired session.');
    // The browsable page renders it for its own forms; other origins cannot read the page.
    if (credential.scheme === 'cookie') request.csrfToken = stored.csrfToken;
    if (credential.scheme === 'cookie' && !SAFE_METHODS.has(request.method)) {
      const sent = request.headers[CSRF_HEADER];
      if (typeof sent !== 'string' || !constantTimeEqual(sent, stored.csrfToken)) {
        throw permissionDenied('CSRF check failed: send the session\'s csrf_token in the X-CSRF-Token header.');
      }
    }
    return user;
  }

  const authenticator: Authenticator = {
    kind: 'session',
    async authenticate(credential, request) {
      const id = sessionIdOf(credential, request);
      return id === undefined ? undefined : userOf(id, credential, request);
    },
  };

  async function login(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const user = await checkLogin(request, reply);
    request.user = user;
    // Always a new id, so a session planted before login (fixation) is worth nothing after it.
    const session = newCredential(PREFIX);
    const csrfToken = newCredential('');
    await store.save(hashOf(session), { userId: user.id, csrfToken, version: user.credentialsVersion }, lifetime);
    reply.setCookie(SESSION_COOKIE, session, {
      signed: true,
      httpOnly: true,
      sameSite: 'lax',
      secure: request.protocol === 'https',
      path: '/',
      maxAge: lifetime,
    });
    return reply.send({ session, csrf_token: csrfToken });
  }

  async function logout(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const credential = credentialOf(request, SESSION_COOKIE);
    if (!credential) throw notAuthenticated();
    const id = sessionIdOf(credential, request);
    if (id === undefined) {
      throw validationFailed({ non_field_errors: ['Only a session logs out; revoke an API token with DELETE /auth/token/.'] });
    }
    request.user = await userOf(id, credential, request);
    await store.remove(hashOf(id));
    return reply.clearCookie(SESSION_COOKIE, { path: '/' }).status(204).send();
  }

  return {
    authenticator,
    mount(scope) {
      resource(scope, '/auth/login/', {
        POST: {
          schema: {
            tags: ['auth'],
            summary: 'Log in: start a session (cookie and Bearer credential)',
            operationId: 'sessionLogin',
            ...ANONYMOUS,
            body: credentialsSchema,
            response: passwordChecked({
              200: objectOf({ session: 'The session id, usable as Bearer', csrf_token: 'Send as X-CSRF-Token with the cookie on unsafe methods' }),
              ...errorResponses([400, 413, 415, 429, 503]),
            }),
          },
          handler: login,
        },
      });
      resource(scope, '/auth/logout/', {
        POST: {
          schema: {
            tags: ['auth'],
            summary: 'Log out: end the session',
            operationId: 'sessionLogout',
            // The session to end: in its cookie, or its id in the Authorization header.
            security: [{ session: [] }, { sessionId: [] }],
            headers: { type: 'object', properties: { 'X-CSRF-Token': { type: 'string', description: 'Needed with the cookie: the csrf_token login answered.' } } },
            response: { 204: { description: 'Logged out', type: 'null' }, ...errorResponses([400, 401, 403, 503]) },
          },
          handler: logout,
        },
      });
    },
  };
}
