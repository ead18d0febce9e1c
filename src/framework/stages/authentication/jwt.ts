/**
 * JSON Web Tokens: `POST <prefix>/auth/jwt/` trades credentials for an access
 * and a refresh token; `POST <prefix>/auth/jwt/refresh/` trades a refresh
 * token for a new pair. HS256 with a key derived from SECRET_KEY; only that algorithm is
 * accepted (so `alg: none` and key-confusion tricks fail). A `token_type`
 * claim keeps each token to its own use; `ver` carries the user's credential
 * version, so a password change ends the tokens issued before it.
 *
 * Refresh tokens rotate. Each login starts a family (one row, swept once it
 * expires) whose generation the refresh token carries: a refresh moves the
 * generation on, so the token it was given no longer matches. A token used
 * twice means it leaked: the family is ended, the thief's branch and the
 * owner's alike. The rows are one per live login, not one per token used.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, type JWTPayload } from 'jose';
import { advanceRefreshFamily, endRefreshFamily, startRefreshFamily } from '../../../store/accounts/refresh-families.js';
import type { Database } from '../../../store/database.js';
import { authenticationFailed, validationFailed } from '../../base/errors.js';
import { ANONYMOUS, errorResponses } from '../../docs/openapi.js';
import { parseJsonBody } from '../parsers.js';
import { resource } from '../../routing/router.js';
import type { AuthenticationKind } from './index.js';
import { credentialsSchema, objectOf, passwordChecked, type LoginCheck } from '../../routing/auth/login.js';
import { findCurrentUser, type AuthUser } from '../../base/auth-user.js';

export interface JwtSettings {
  /** SECRET_KEY's key for JWTs (see signingKeys). */
  readonly signingKey: Uint8Array;
  /** Seconds. */
  readonly accessLifetime: number;
  readonly refreshLifetime: number;
}

type TokenType = 'access' | 'refresh';
const ALGORITHM = 'HS256';
/** Three base64url parts (the last may be empty, as in an unsigned token, which is then refused). */
const jwtShape = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function jwtKind(database: Database, settings: JwtSettings, login: LoginCheck): AuthenticationKind {
  const key = settings.signingKey;
  const lifetimes: Record<TokenType, number> = { access: settings.accessLifetime, refresh: settings.refreshLifetime };

  const sign = (user: AuthUser, type: TokenType, claims: Record<string, unknown> = {}): Promise<string> =>
    new SignJWT({ token_type: type, ver: user.credentialsVersion, ...claims })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(String(user.id))
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimes[type])
      .setJti(randomUUID())
      .sign(key);

  /** A new pair: the refresh token of `family`'s `generation`. */
  const pair = async (user: AuthUser, family: string, generation: number) => ({
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
  async function verify(token: string, type: TokenType): Promise<{ user: AuthUser; payload: JWTPayload }> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, key, { algorithms: [ALGORITHM], requiredClaims: ['exp', 'sub'] }));
    } catch {
      throw authenticationFailed('Invalid or expired token.');
    }
    if (payload.token_type !== type) throw authenticationFailed(`Not ${type === 'access' ? 'an access' : 'a refresh'} token.`);
    const userId = Number(payload.sub);
    // Tokens from before credential versions carry none: they were issued under version 0.
    const version = payload.ver ?? 0;
    const valid = Number.isSafeInteger(userId) && userId > 0 && Number.isSafeInteger(version);
    const user = valid ? await findCurrentUser(database, { userId, version: version as number, id: payload.jti }) : undefined;
    if (!user) throw authenticationFailed('Invalid or expired token.');
    return { user, payload };
  }

  return {
    issue: (_database, user) => sign(user, 'access'),
    authenticator: {
      kind: 'jwt',
      async authenticate(credential) {
        if (credential.scheme !== 'bearer' || !jwtShape.test(credential.value)) return undefined;
        return (await verify(credential.value, 'access')).user;
      },
    },
    mount(scope) {
      resource(scope, '/auth/jwt/', {
        POST: {
          schema: {
            tags: ['auth'],
            summary: 'Obtain a JWT access and refresh token',
            operationId: 'jwtObtain',
            ...ANONYMOUS,
            body: credentialsSchema,
            response: passwordChecked({
              200: objectOf({ access: 'Authenticates requests as Bearer', refresh: 'Obtains new access tokens' }),
              ...errorResponses([400, 413, 415, 429, 503]),
            }),
          },
          handler: async (request, reply) => {
            const user = await login(request, reply);
            request.user = user;
            return reply.send(await startFamily(user));
          },
        },
      });
      resource(scope, '/auth/jwt/refresh/', {
        POST: {
          schema: {
            tags: ['auth'],
            summary: 'Trade a refresh token for a new access and refresh token (the old one is then refused)',
            operationId: 'jwtRefresh',
            ...ANONYMOUS,
            body: { type: 'object', properties: { refresh: { type: 'string' } }, required: ['refresh'] },
            response: {
              200: objectOf({ access: 'A new access token', refresh: 'The next refresh token' }),
              ...errorResponses([400, 401, 413, 415, 503]),
            },
          },
          handler: async (request, reply) => {
            const body = parseJsonBody(request);
            const refresh = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).refresh : undefined;
            if (typeof refresh !== 'string' || refresh === '') throw validationFailed({ refresh: ['This field is required.'] });
            const { user, payload } = await verify(refresh, 'refresh');
            request.user = user;
            return reply.send(await rotate(user, payload));
          },
        },
      });
    },
  };
}
