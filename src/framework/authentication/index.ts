/**
 * The authentication stage. Each kind (token, jwt, session) is one
 * Authenticator; they are tried in the configured order and the first that
 * recognises the credential decides.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../store/database.js';
import { findRecordAlongside, type RecordId } from '../../store/records.js';
import { authenticationFailed } from '../errors.js';
import type { Row, Selection } from '../../core/rows.js';
import type { UserRow } from '../../store/accounts/users.js';
import { findUser, toAuthUser, type AuthUser, type UserLookup } from './auth-user.js';
import { authorizationCredential } from './credentials.js';

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
  /** For a kind that finds its user with one query: that query for this credential (undefined: not this kind's). */
  lookup?(credential: Credential): UserLookup | undefined;
}

/** A kind whose credential names its user through one query (`lookup`). */
export function lookupAuthenticator(kind: AuthKind, database: Database, lookup: (credential: Credential) => UserLookup | undefined): Authenticator {
  return {
    kind,
    lookup,
    async authenticate(credential) {
      const found = lookup(credential);
      if (!found) return undefined;
      const user = await findUser(database, found);
      if (!user) throw authenticationFailed(found.failure);
      return user;
    },
  };
}

/** One kind as a whole: its Authenticator and the endpoints that hand out and take back its credentials. */
export interface AuthenticationKind {
  readonly authenticator: Authenticator;
  /** Registers the kind's endpoints on the API scope (under `/auth/`). */
  mount(scope: FastifyInstance): void;
}

export interface Authentication {
  readonly user: AuthUser | null;
  /** The RecordRead's record, when it came in the same round trip as the user. */
  readonly read?: { readonly selection: Selection; readonly row: Row | undefined };
}

/** A record a view is about to read, offered to the stage so that a user lookup can carry it along. */
export interface RecordRead {
  readonly database: Database;
  readonly selection: Selection;
  readonly id: RecordId;
}

const ANONYMOUS: Authentication = { user: null };

/** The credential a request carries: a Bearer (or Token) header first, else a cookie some kind reads. */
export function credentialOf(request: FastifyRequest, cookieName: string | undefined): Credential | null {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const found = authorizationCredential(header);
    // Other schemes are not ours: the request stays anonymous.
    if (!found) return null;
    if (!found.credential) throw authenticationFailed(`Invalid Authorization header: no credential after "${found.keyword}".`);
    return { scheme: 'bearer', value: found.credential };
  }
  const cookie = cookieName ? request.cookies?.[cookieName] : undefined;
  return cookie ? { scheme: 'cookie', value: cookie } : null;
}

/**
 * The request's user (null when it carries no credential); 401 for a credential no kind accepts.
 * Given `read`, a kind with a lookup sends it and the record read as one query: a detail read
 * authenticated by a token then costs one round trip, not two.
 */
export async function authenticate(
  request: FastifyRequest,
  authenticators: readonly Authenticator[],
  cookieName?: string,
  read?: RecordRead,
): Promise<Authentication> {
  const credential = credentialOf(request, cookieName);
  if (!credential) return ANONYMOUS;
  for (const authenticator of authenticators) {
    const lookup = read && authenticator.lookup?.(credential);
    if (lookup) {
      const found = await findRecordAlongside(read.database, read.selection, read.id, lookup);
      if (!found) throw authenticationFailed(lookup.failure);
      const user = toAuthUser(read.database, found.companion as unknown as UserRow, lookup.credentialId);
      return { user, read: { selection: read.selection, row: found.record } };
    }
    const user = await authenticator.authenticate(credential, request);
    if (user) return { user };
  }
  throw authenticationFailed('Unrecognised credential.');
}

export type { AuthUser } from './auth-user.js';
