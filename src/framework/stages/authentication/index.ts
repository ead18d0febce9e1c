/**
 * The authentication stage. Each kind (token, jwt, session) is one
 * Authenticator; they are tried in the configured order and the first that
 * recognises the credential decides.
 */
import type { FastifyRequest } from 'fastify';
import type { UserRow } from '../../../store/accounts/users.js';
import type { RequestReader } from '../../../store/read/reader.js';
import { styleOf } from '../../base/style.js';
import { activeUserById } from '../../../store/accounts/users.js';
import { authenticationFailed } from '../../base/errors.js';
import { toAuthUser, type AuthUser, type UserQuery } from '../../base/auth-user.js';
import { authorizationCredential } from './opaque-credentials.js';

export type AuthKind = 'token' | 'jwt' | 'session';

export interface Credential {
  /** `bearer` from the Authorization header; `cookie` from the session cookie. */
  readonly scheme: 'bearer' | 'cookie';
  readonly value: string;
}

export interface Authenticator {
  readonly kind: AuthKind;
  /**
   * undefined: not this kind's credential. Throws authenticationFailed for a bad one of its own.
   * `reader` is the request's: a kind that reads its user through it lets the reader send that read
   * with what the request announced it will read.
   */
  authenticate(credential: Credential, request: FastifyRequest, reader: RequestReader): Promise<AuthUser | undefined>;
}

/** A kind whose credential names its user through one query (`userQuery`), asked of the request's reader. */
export function userQueryAuthenticator(kind: AuthKind, userQuery: (credential: Credential) => UserQuery | undefined): Authenticator {
  return {
    kind,
    // The reader's promise chained, not wrapped in one more async frame (the authentication stage awaits it).
    authenticate(credential, _request, reader) {
      const found = userQuery(credential);
      if (!found) return Promise.resolve(undefined);
      return reader.companion(found).then((row) => {
        if (!row) throw authenticationFailed(found.failure);
        return toAuthUser(reader.database, row as unknown as UserRow, found.credentialId);
      });
    },
  };
}

/** The credential a request carries: an Authorization header with one of the app's keywords first, else a cookie some kind reads. */
export function credentialOf(request: FastifyRequest, cookieName: string | undefined): Credential | null {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const found = authorizationCredential(header, styleOf(request).credentialKeywords);
    // Other schemes are not ours: the request stays anonymous.
    if (!found) return null;
    if (!found.credential) throw authenticationFailed(`Invalid Authorization header: no credential after "${found.keyword}".`);
    return { scheme: 'bearer', value: found.credential };
  }
  const cookie = cookieName ? request.cookies?.[cookieName] : undefined;
  return cookie ? { scheme: 'cookie', value: cookie } : null;
}

/**
 * Testing only: the id of the user a request is made by whatever it carries, or undefined to
 * authenticate it by its credentials. Only an app built with AppContext.forcedUser asks (as
 * restfold/testing builds them, for `client.as`); a served app never has one.
 */
export type ForcedUser = (request: FastifyRequest) => number | undefined;

async function forcedUser(reader: RequestReader, id: number): Promise<AuthUser> {
  const row = await activeUserById(reader.database, id);
  if (!row) throw authenticationFailed('The user this request is forced to be made by is inactive or gone.');
  return toAuthUser(reader.database, row);
}

/**
 * The request's user (null when it carries no credential); 401 for a credential no kind accepts.
 * Not async: the kinds' promises are chained, one after another, with no frame around them (every
 * request passes here). A malformed Authorization header throws at once; the callers await it
 * within their own async stage, where that is a rejection as any other.
 */
export function authenticate(
  request: FastifyRequest,
  authenticators: readonly Authenticator[],
  cookieName: string | undefined,
  reader: RequestReader,
  forced?: ForcedUser,
): Promise<AuthUser | null> {
  const forcedId = forced?.(request);
  if (forcedId !== undefined) return forcedUser(reader, forcedId);
  const credential = credentialOf(request, cookieName);
  if (!credential) return Promise.resolve(null);
  const tryFrom = (index: number): Promise<AuthUser> => {
    const authenticator = authenticators[index];
    if (!authenticator) return Promise.reject(authenticationFailed('Unrecognised credential.'));
    return authenticator.authenticate(credential, request, reader).then((user) => user ?? tryFrom(index + 1));
  };
  return tryFrom(0);
}

