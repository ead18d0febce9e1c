/**
 * JSON Web Tokens: `POST <prefix>/auth/jwt/` trades credentials for an access
 * and a refresh token; `POST <prefix>/auth/jwt/refresh/` trades a refresh
 * token for a new access token. HS256 over SECRET_KEY; only that algorithm is
 * accepted (so `alg: none` and key-confusion tricks fail). A `token_type`
 * claim keeps each token to its own use.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { Database } from '../../store/database.js';
import { authenticationFailed, validationFailed } from '../errors.js';
import { errorResponses } from '../openapi.js';
import { parseJsonBody } from '../parsers.js';
import { resource } from '../router.js';
import type { AuthenticationKind } from './index.js';
import { credentialsSchema, objectOf, type LoginCheck } from './routes.js';
import { findActiveUser, type AuthUser } from './users.js';

export interface JwtSettings {
  readonly secretKey: string;
  /** Seconds. */
  readonly accessLifetime: number;
  readonly refreshLifetime: number;
}

type TokenType = 'access' | 'refresh';
const ALGORITHM = 'HS256';
/** Three base64url parts (the last may be empty, as in an unsigned token, which is then refused). */
const jwtShape = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function jwtKind(database: Database, settings: JwtSettings, login: LoginCheck): AuthenticationKind {
  const key = new TextEncoder().encode(settings.secretKey);
  const lifetimes: Record<TokenType, number> = { access: settings.accessLifetime, refresh: settings.refreshLifetime };

  const sign = (user: AuthUser, type: TokenType): Promise<string> =>
    new SignJWT({ token_type: type })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(String(user.id))
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimes[type])
      .setJti(randomUUID())
      .sign(key);

  /** The active user a valid, unexpired token of `type` names; else 401. */
  async function verify(token: string, type: TokenType): Promise<AuthUser> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, key, { algorithms: [ALGORITHM], requiredClaims: ['exp', 'sub'] }));
    } catch {
      throw authenticationFailed('Invalid or expired token.');
    }
    if (payload.token_type !== type) throw authenticationFailed(`Not ${type === 'access' ? 'an access' : 'a refresh'} token.`);
    const id = Number(payload.sub);
    const user = Number.isSafeInteger(id) && id > 0 ? await findActiveUser(database, id) : undefined;
    if (!user) throw authenticationFailed('Invalid or expired token.');
    return user;
  }

  return {
    authenticator: {
      kind: 'jwt',
      async authenticate(credential) {
        if (credential.scheme !== 'bearer' || !jwtShape.test(credential.value)) return undefined;
        return verify(credential.value, 'access');
      },
    },
    mount(scope) {
      resource(scope, '/auth/jwt/', {
        POST: {
          schema: {
            tags: ['auth'],
            summary: 'Obtain a JWT access and refresh token',
            body: credentialsSchema,
            response: {
              200: objectOf({ access: 'Authenticates requests as Bearer', refresh: 'Obtains new access tokens' }),
              ...errorResponses([400, 413, 415, 503]),
            },
          },
          handler: async (request, reply) => {
            const user = await login(request, reply);
            request.user = user;
            return reply.send({ access: await sign(user, 'access'), refresh: await sign(user, 'refresh') });
          },
        },
      });
      resource(scope, '/auth/jwt/refresh/', {
        POST: {
          schema: {
            tags: ['auth'],
            summary: 'Obtain a new JWT access token with a refresh token',
            body: { type: 'object', properties: { refresh: { type: 'string' } }, required: ['refresh'] },
            response: { 200: objectOf({ access: 'A new access token' }), ...errorResponses([400, 401, 413, 415, 503]) },
          },
          handler: async (request, reply) => {
            const body = parseJsonBody(request);
            const refresh = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).refresh : undefined;
            if (typeof refresh !== 'string' || refresh === '') throw validationFailed({ refresh: ['This field is required.'] });
            const user = await verify(refresh, 'refresh');
            request.user = user;
            return reply.send({ access: await sign(user, 'access') });
          },
        },
      });
    },
  };
}
