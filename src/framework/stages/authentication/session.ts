/**
 * Sessions: a session id, borne by a signed cookie or as Bearer, names a
 * stored session (the login and logout endpoints: routing/auth/session.ts).
 * A session borne by the cookie must send its CSRF token in `X-CSRF-Token`
 * on unsafe methods (a browser attaches cookies to cross-site requests,
 * never an Authorization header).
 */
import type { FastifyRequest } from 'fastify';
import type { Database } from '../../../store/connection/database.js';
import type { RequestReader } from '../../../store/read/reader.js';
import { authenticationFailed, permissionDenied } from '../../base/errors.js';
import { constantTimeEqual, credentialShape, hashOf, newCredential } from './opaque-credentials.js';
import type { Authenticator, Credential } from './index.js';
import type { SessionStore } from './session-store.js';
import { findCurrentUser, type AuthUser } from '../../base/auth-user.js';

const PREFIX = 'rfs_';
const sessionShape = credentialShape(PREFIX);
export const SESSION_COOKIE = 'restfold_session';
const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** What the session endpoints start and end, and the stage's Authenticator. */
export interface SessionCredentials {
  readonly authenticator: Authenticator;
  /** Seconds a session lives. */
  readonly lifetime: number;
  /** A new session for `user`: its id (the cookie's value, or Bearer) and its CSRF token. */
  start(user: AuthUser): Promise<{ readonly session: string; readonly csrfToken: string }>;
  /** The session a credential names and its user, checked as authentication checks them (else 401, or 403 for CSRF); undefined when the credential is not a session's. */
  current(credential: Credential, request: FastifyRequest): Promise<{ readonly id: string; readonly user: AuthUser } | undefined>;
  end(id: string): Promise<void>;
}

export function sessionCredentials(database: Database, store: SessionStore, lifetime: number): SessionCredentials {
  /** The session id a credential carries; undefined when it is not a session's. Tampered cookies fail. */
  function sessionIdOf(credential: Credential, request: FastifyRequest): string | undefined {
    if (credential.scheme === 'bearer') return sessionShape.test(credential.value) ? credential.value : undefined;
    const { valid, value } = request.unsignCookie(credential.value);
    if (!valid || value === null || !sessionShape.test(value)) throw authenticationFailed('Invalid session.');
    return value;
  }

  async function userOf(id: string, credential: Credential, request: FastifyRequest, reader?: RequestReader): Promise<AuthUser> {
    const idHash = hashOf(id);
    const stored = await store.load(idHash);
    const user = stored && (await findCurrentUser(database, { userId: stored.userId, version: stored.version ?? 0, id: idHash }, reader));
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
    async authenticate(credential, request, reader) {
      const id = sessionIdOf(credential, request);
      return id === undefined ? undefined : userOf(id, credential, request, reader);
    },
  };

  return {
    authenticator,
    lifetime,
    async start(user) {
      // Always a new id, so a session planted before login (fixation) is worth nothing after it.
      const session = newCredential(PREFIX);
      const csrfToken = newCredential('');
      await store.save(hashOf(session), { userId: user.id, csrfToken, version: user.credentialsVersion }, lifetime);
      return { session, csrfToken };
    },
    async current(credential, request) {
      const id = sessionIdOf(credential, request);
      return id === undefined ? undefined : { id, user: await userOf(id, credential, request) };
    },
    async end(id) {
      await store.remove(hashOf(id));
    },
  };
}
