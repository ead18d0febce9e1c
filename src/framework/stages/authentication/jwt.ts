/**
 * JSON Web Tokens: an access token authenticates requests; a refresh token
 * trades for a new pair (the endpoints: routing/auth/jwt.ts). HS256 with a
 * key derived from SECRET_KEY; only that algorithm is accepted (so
 * `alg: none` and key-confusion tricks fail). A `token_type` claim keeps each
 * token to its own use; `ver` carries the user's credential version, so a
 * password change ends the tokens issued before it.
 *
 * Refresh tokens rotate. Each login starts a family (one row, swept once it
 * expires) whose generation the refresh token carries: a refresh moves the
 * generation on, so the token it was given no longer matches. A token used
 * twice means it leaked: the family is ended, the thief's branch and the
 * owner's alike. The rows are one per live login, not one per token used.
 */
import { randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { advanceRefreshFamily, endRefreshFamily, startRefreshFamily } from '../../../store/accounts/refresh-families.js';
import { loadedOnce } from '../../../core/load-once.js';
import type { Database } from '../../../store/connection/database.js';
import type { RequestReader } from '../../../store/read/reader.js';
import { authenticationFailed } from '../../base/errors.js';
import type { Authenticator } from './index.js';
import { findCurrentUser, type AuthUser } from '../../base/auth-user.js';

export interface JwtSettings {
  /** SECRET_KEY's key for JWTs (see signingKeys). */
  readonly signingKey: Uint8Array;
  /** Seconds. */
  readonly accessLifetime: number;
  readonly refreshLifetime: number;
}

// Loaded when a token is first signed or checked: an app without JWTs (or a test file) does not pay
// for its modules at start-up (docs/performance.md).
const jose = loadedOnce(() => import('jose'));

type TokenType = 'access' | 'refresh';
const ALGORITHM = 'HS256';
/** Three base64url parts (the last may be empty, as in an unsigned token, which is then refused). */
const jwtShape = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export interface JwtPair {
  readonly access: string;
  readonly refresh: string;
}

/** What the JWT endpoints hand out and check, and the stage's Authenticator. */
export interface JwtCredentials {
  readonly authenticator: Authenticator;
  /** A new access token for `user`. */
  access(user: AuthUser): Promise<string>;
  /** A login's pair, in a new refresh family. */
  login(user: AuthUser): Promise<JwtPair>;
  /** A valid refresh token's user (else 401), and the rotation to the family's next pair (401 when the token was used before). */
  refresh(token: string): Promise<{ readonly user: AuthUser; next(): Promise<JwtPair> }>;
}

export function jwtCredentials(database: Database, settings: JwtSettings): JwtCredentials {
  const key = settings.signingKey;
  const lifetimes: Record<TokenType, number> = { access: settings.accessLifetime, refresh: settings.refreshLifetime };

  const sign = async (user: AuthUser, type: TokenType, claims: Record<string, unknown> = {}): Promise<string> =>
    new (await jose()).SignJWT({ token_type: type, ver: user.credentialsVersion, ...claims })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(String(user.id))
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimes[type])
      .setJti(randomUUID())
      .sign(key);

  /** A new pair: the refresh token of `family`'s `generation`. */
  const pair = async (user: AuthUser, family: string, generation: number): Promise<JwtPair> => ({
    access: await sign(user, 'access'),
    refresh: await sign(user, 'refresh', { fam: family, gen: generation }),
  });

  const expiry = (): Date => new Date(Date.now() + settings.refreshLifetime * 1000);

  /** A login's pair, in a new family; expired families are swept here, at login, as sessions are. */
  async function startFamily(user: AuthUser) {
    const family = randomUUID();
    await startRefreshFamily(database, family, user.id, expiry());
    return pair(user, family, 0);
  }

  /** The next pair of the refresh token's family, if it is the family's latest; a token used before ends the family (401). */
  async function rotate(user: AuthUser, payload: JWTPayload) {
    const { fam: family, gen: generation } = payload;
    if (typeof family !== 'string' || !Number.isSafeInteger(generation)) throw authenticationFailed('Invalid or expired token.');
    // Compare-and-set: of two refreshes with the same token, one wins.
    if (!(await advanceRefreshFamily(database, family, user.id, generation as number, expiry()))) {
      await endRefreshFamily(database, family);
      throw authenticationFailed('Refresh token already used or revoked.');
    }
    return pair(user, family, (generation as number) + 1);
  }

  /** A valid, unexpired token of `type` and its user, active and for whom the token is still current; else 401. */
  async function verify(token: string, type: TokenType, reader?: RequestReader): Promise<{ user: AuthUser; payload: JWTPayload }> {
    let payload;
    try {
      ({ payload } = await (await jose()).jwtVerify(token, key, { algorithms: [ALGORITHM], requiredClaims: ['exp', 'sub'] }));
    } catch {
      throw authenticationFailed('Invalid or expired token.');
    }
    if (payload.token_type !== type) throw authenticationFailed(`Not ${type === 'access' ? 'an access' : 'a refresh'} token.`);
    const userId = Number(payload.sub);
    // Tokens from before credential versions carry none: they were issued under version 0.
    const version = payload.ver ?? 0;
    const valid = Number.isSafeInteger(userId) && userId > 0 && Number.isSafeInteger(version);
    const user = valid ? await findCurrentUser(database, { userId, version: version as number, id: payload.jti }, reader) : undefined;
    if (!user) throw authenticationFailed('Invalid or expired token.');
    return { user, payload };
  }

  return {
    authenticator: {
      kind: 'jwt',
      async authenticate(credential, _request, reader) {
        if (credential.scheme !== 'bearer' || !jwtShape.test(credential.value)) return undefined;
        return (await verify(credential.value, 'access', reader)).user;
      },
    },
    access: (user) => sign(user, 'access'),
    login: startFamily,
    async refresh(token) {
      const { user, payload } = await verify(token, 'refresh');
      return { user, next: () => rotate(user, payload) };
    },
  };
}
