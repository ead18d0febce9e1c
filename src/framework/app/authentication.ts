/**
 * The enabled kinds, in AUTH order, built from the settings: what the app
 * assembly needs to authenticate requests and mount the `/auth/` endpoints.
 */
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Database } from '../../store/connection/database.js';
import type { Config } from './config.js';
import type { AuthKind, Authenticator } from '../stages/authentication/index.js';
import { jwtCredentials } from '../stages/authentication/jwt.js';
import { SESSION_COOKIE, sessionCredentials, type SessionCredentials } from '../stages/authentication/session.js';
import { redisSessionStore } from '../stages/authentication/session-store-redis.js';
import { databaseSessionStore } from '../stages/authentication/session-store.js';
import { jwtKind } from '../routing/auth/jwt.js';
import type { AuthenticationKind, CredentialEnded } from '../routing/auth/kind.js';
import type { LoginCheck } from '../routing/auth/login.js';
import { sessionKind } from '../routing/auth/session.js';
import { tokenKind } from '../routing/auth/token.js';
import { activeUserById } from '../../store/accounts/users.js';
import { validationFailed } from '../base/errors.js';
import { toAuthUser } from '../base/auth-user.js';

const INACTIVE = 'This user is inactive (or gone): no credential is issued for it.';

export interface AuthSetup {
  readonly authenticators: readonly Authenticator[];
  /** The cookie a session may travel in, when sessions are enabled. */
  readonly sessionCookie: string | undefined;
  /** The sessions, when that kind is enabled (the admin logs staff in with them). */
  readonly sessions: SessionCredentials | undefined;
  mountRoutes(instance: FastifyInstance): void;
  /** A new credential for an active user, for the app's code (credentials.issue): an API token when token auth is on, else a JWT access token. */
  issue(database: Database, userId: number): Promise<string>;
}

/**
 * `jwtKey`: the key derived from SECRET_KEY for JWTs. `redis`: the app's connection when REDIS_URL is
 * set (sessions then live there). `ended`: told the user of a credential the endpoints end (a token
 * revoked, a logout), so that their live streams are checked again.
 */
export function authenticationFor(database: Database, config: Config, jwtKey: Uint8Array, login: LoginCheck, redis: Redis | undefined, ended: CredentialEnded): AuthSetup {
  const build: Record<AuthKind, () => AuthenticationKind> = {
    token: () => tokenKind(database, login, ended),
    jwt: () =>
      jwtKind(
        jwtCredentials(database, {
          signingKey: jwtKey,
          accessLifetime: config.jwtAccessLifetime,
          refreshLifetime: config.jwtRefreshLifetime,
        }),
        login,
      ),
    session: () => sessionKind(sessions!, login, ended),
  };
  const sessions = config.auth.includes('session')
    ? sessionCredentials(database, redis ? redisSessionStore(redis, config.redisKeyPrefix) : databaseSessionStore(database), config.sessionLifetime)
    : undefined;
  const kinds = config.auth.map((kind) => build[kind]());
  const issuer = ['token', 'jwt'].map((name) => kinds[config.auth.indexOf(name as AuthKind)]).find((kind) => kind?.issue);
  return {
    async issue(database, userId) {
      if (!issuer?.issue) throw new Error(`credentials.issue needs token or jwt authentication: AUTH is "${config.auth.join(',')}".`);
      // Issued under the version read now, so a credential of an inactive user cannot wake with it.
      const row = await activeUserById(database, userId);
      if (!row) throw validationFailed({ non_field_errors: [INACTIVE] }, INACTIVE);
      return issuer.issue(database, toAuthUser(database, row));
    },
    authenticators: kinds.map((kind) => kind.authenticator),
    sessionCookie: sessions ? SESSION_COOKIE : undefined,
    sessions,
    mountRoutes: (instance) => kinds.forEach((kind) => kind.mount(instance)),
  };
}
