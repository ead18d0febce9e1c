/**
 * The authentication stage. Each kind (token, jwt, session) is one
 * Authenticator; they are tried in the configured order and the first that
 * recognises the credential decides.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authenticationFailed } from '../errors.js';
import type { AuthUser } from './users.js';

export type AuthKind = 'token' | 'jwt' | 'session';

export interface Credential {
  /** `bearer` from the Authorization header; `cookie` from the session cookie. */
  readonly scheme: 'bearer' | 'cookie';
  readonly value: string;
}

export interface Authenticator {
  readonly kind: AuthKind;
  /** undefined: not this kind's credential. Throws authenticationFailed for a bad one of its own. */
  authenticate(credential: Credential, request: FastifyRequest): Promise<AuthUser | undefined>;
}

/** One kind as a whole: its Authenticator and the endpoints that hand out and take back its credentials. */
export interface AuthenticationKind {
  readonly authenticator: Authenticator;
  /** Registers the kind's endpoints on the API scope (under `/auth/`). */
  mount(scope: FastifyInstance): void;
  /** Releases what the kind holds open (a Redis connection, say). */
  close?(): Promise<void>;
}

export interface Authentication {
  readonly user: AuthUser | null;
  readonly credential: Credential | null;
}

const ANONYMOUS: Authentication = { user: null, credential: null };

/** The credential a request carries: a Bearer header first, else a cookie some kind reads. */
export function credentialOf(request: FastifyRequest, cookieName: string | undefined): Credential | null {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer(?: +(\S*))?\s*$/i.exec(header);
    // Other schemes (Basic, say) are not ours: the request stays anonymous.
    if (!match) return null;
    if (!match[1]) throw authenticationFailed('Invalid Authorization header: no credential after "Bearer".');
    return { scheme: 'bearer', value: match[1] };
  }
  const cookie = cookieName ? request.cookies?.[cookieName] : undefined;
  return cookie ? { scheme: 'cookie', value: cookie } : null;
}

export async function authenticate(
  request: FastifyRequest,
  authenticators: readonly Authenticator[],
  cookieName?: string,
): Promise<Authentication> {
  const credential = credentialOf(request, cookieName);
  if (!credential) return ANONYMOUS;
  for (const authenticator of authenticators) {
    const user = await authenticator.authenticate(credential, request);
    if (user) return { user, credential };
  }
  throw authenticationFailed('Unrecognised credential.');
}

export type { AuthUser } from './users.js';
