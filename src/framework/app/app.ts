/**
 * An application: collections, migrations and extra routes, assembled into a
 * Fastify instance from the plugins in src/framework/plugins/, registered in
 * the order a request meets them (docs/architecture.md draws the path).
 */
import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Database } from '../../store/database.js';
import accountMigrations from '../../store/accounts/migrations/index.js';
import { migrate, type Migrations } from '../../store/migrations.js';
import { assertRelationsDeclared, filterableTables } from './schema.js';
import { withNamedFilters } from '../declare/named-filters.js';
import { RESERVED_PARAMETERS } from '../stages/list-query.js';
import { LIMIT_OFFSET_PARAMETERS } from '../actions/limit-offset.js';
import { authenticateAppRoutes } from '../routing/app-routes.js';
import type { AuthUser } from '../base/auth-user.js';
import { resolveSecretKey, signingKeys } from './secrets.js';
import { loginCheck } from '../routing/auth/login.js';
import { authenticationFor } from './authentication.js';
import { credentialSetup } from '../actions/credentials.js';
import { browsableAssets } from '../render/browsable/index.js';
import { assertKeywords, DEFAULT_KEYWORDS, endOf, type ExceptionHandler } from '../base/style.js';
import { mountedRouters, withAppDefaults, type MountedRouter, type RouterDefinition } from '../routing/routers.js';
import type { Collection, Pagination } from '../declare/collection.js';
import type { Envelope } from '../declare/collection.js';
import type { Config } from './config.js';
import type { Model } from '../declare/model.js';
import { User, type UserModel } from '../declare/users/model.js';
import { registerOpenApi } from '../docs/openapi.js';
import { allowAny, isAuthenticated, readActions } from '../declare/permissions.js';
import { allowedHosts } from './plugins/allowed-hosts.js';
import { browsableContext, collections } from './plugins/collections.js';
import { corsPolicy } from './plugins/cors.js';
import { errors, frameworkErrors } from './plugins/errors.js';
import { health } from './plugins/health.js';
import { httpProtocol, httpServerOptions } from './plugins/http-server.js';
import { requestIdentity, requestIdentityOptions } from './plugins/request-identity.js';
import { securityHeaders } from './plugins/security-headers.js';
import { closeRedis, connectRedis } from '../base/redis.js';
import { assertScope } from '../declare/scope.js';
import { visibilityPlan } from '../stages/visibility.js';
import { createPasswordThrottle, createThrottle, memoryCounterStore, redisCounterStore, type ScopedRates } from '../stages/throttling.js';


declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication stage; null for anonymous requests. */
    user: AuthUser | null;
    /** The CSRF token of a cookie-borne session, once authenticated. */
    csrfToken: string | undefined;
  }
}

export interface AppContext {
  readonly database: Database;
  readonly config: Config;
  /** Where log lines go (standard output when absent); lets tests read them. */
  readonly logStream?: { write(line: string): void };
}

export interface AppDefinition {
  readonly collections: readonly Collection[];
  /**
   * The app's own user model (Django's AUTH_USER_MODEL): `User.extend({ bio: fields.text({ nullable: true }) })`.
   * Its migrations alter the framework's `users` table; createuser checks its fields. Default: the framework's `User`.
   */
  readonly userModel?: UserModel;
  /** Models beside the collections' whose tables the app's migrations make (a model only its `routes` serve). */
  readonly models?: readonly Model[];
  /**
   * The app's migrations; they run after the framework's (users, permissions, tokens). Left out, the
   * CLI finds them by convention in `migrations/` beside the app's module (loadMigrations); given
   * (the index module `restfold makemigrations` keeps there, or any other), they are used instead.
   */
  readonly migrations?: Migrations;
  /** Scoped throttle rates by collection name, in place of THROTTLE_ANON / THROTTLE_USER. */
  readonly throttles?: Readonly<Record<string, ScopedRates>>;
  /**
   * Routes outside the collection API (a Fastify plugin body). Their requests are authenticated as
   * the collections' are (`request.user`); see requirePermissions and throttleRequest.
   */
  readonly routes?: (app: FastifyInstance, context: AppContext) => void | Promise<void>;
  /** false: the routes' requests are not authenticated (`request.user` stays null, any credential is ignored). Default true. */
  readonly authenticateRoutes?: boolean;
  // The API's style (docs/api-style.md); each left out keeps the style SPEC.md describes.
  /** Where the collections are served; the first router also serves `/auth/` and `/schema/`. Default: one at /api/v1, slashes required. */
  readonly routers?: readonly RouterDefinition[];
  /** The pagination of collections that name none (default `page`). */
  readonly pagination?: Pagination;
  /** The envelope of each collection that names none, by the collection's name (default none). */
  readonly envelope?: (collection: string) => Envelope | undefined;
  /** Chooses the status and body of the collection API's errors (DRF's EXCEPTION_HANDLER). */
  readonly exceptionHandler?: ExceptionHandler;
  /** The schemes `Authorization` accepts, for every authentication kind; the first is WWW-Authenticate's. Default `['Bearer', 'Token']`. */
  readonly credentialKeywords?: readonly string[];
}

/** The app, as declared; refused at once where a declaration cannot hold (a scope that is no function of the request). */
export function defineApp(definition: AppDefinition): AppDefinition {
  for (const { name, scope } of definition.collections) assertScope(name, scope);
  return definition;
}

/** The names of the migrations one migrateApp ran, by whose they are. */
export interface AppliedMigrations {
  /** The framework's (its users, permissions, tokens, sessions), tracked in `restfold_migrations`. */
  readonly framework: readonly string[];
  /** The app's own, tracked in `app_migrations`. */
  readonly app: readonly string[];
}

/** The framework's migrations (generated from its declarations: store/accounts/migrations/), then the app's. */
export async function migrateFrameworkAndApp(database: Database, definition: AppDefinition): Promise<AppliedMigrations> {
  const framework = await migrate(database, 'restfold', accountMigrations);
  return { framework, app: await migrate(database, 'app', definition.migrations ?? {}) };
}

/** migrateFrameworkAndApp's names in the order they ran. */
export async function migrateApp(database: Database, definition: AppDefinition): Promise<string[]> {
  const { framework, app } = await migrateFrameworkAndApp(database, definition);
  return [...framework, ...app];
}

/** The one Redis connection (throttle counters, sessions) of an app, closed with it. */
async function sharedRedis(app: FastifyInstance, url: string): Promise<Redis> {
  const redis = await connectRedis(url, (error) => app.log.warn({ err: error }, 'redis connection error'));
  app.addHook('onClose', () => closeRedis(redis));
  return redis;
}

function assertThrottledCollectionsExist(definition: AppDefinition): void {
  for (const scope of Object.keys(definition.throttles ?? {})) {
    if (!definition.collections.some(({ name }) => name === scope)) throw new Error(`throttles: no collection named "${scope}".`);
  }
}

export async function buildApp(definition: AppDefinition, context: AppContext): Promise<FastifyInstance> {
  const { database, config } = context;
  assertThrottledCollectionsExist(definition);
  assertRelationsDeclared(definition);
  const credentialKeywords = definition.credentialKeywords ?? DEFAULT_KEYWORDS;
  assertKeywords(credentialKeywords);
  const tables = filterableTables(definition);
  const styled = withAppDefaults(definition.collections, definition).map((collection) => withNamedFilters(collection, tables, [...RESERVED_PARAMETERS, ...LIMIT_OFFSET_PARAMETERS]));
  const routers = mountedRouters(definition.routers, styled);
  const [first] = routers as [MountedRouter];
  const app = Fastify({ ...requestIdentityOptions(config, context.logStream), ...httpServerOptions(config), frameworkErrors });
  app.decorate('restfoldStyle', { prefixes: routers.map(({ prefix }) => prefix), exceptionHandler: definition.exceptionHandler, credentialKeywords });
  await app.register(httpProtocol);

  // What requests share: counters (in Redis when REDIS_URL is set), the keys derived from SECRET_KEY,
  // the enabled authentication kinds and the throttles.
  app.decorateRequest('user', null);
  app.decorateRequest('csrfToken', undefined);
  const redis = config.redisUrl ? await sharedRedis(app, config.redisUrl) : undefined;
  const counters = redis ? redisCounterStore(redis, config.redisKeyPrefix) : memoryCounterStore();
  const keys = signingKeys(await resolveSecretKey(config, app.log));
  await app.register(cookie, { secret: keys.cookie });
  const passwordThrottle = createPasswordThrottle(counters, config.throttleLogin);
  const auth = authenticationFor(database, config, keys.jwt, loginCheck(database, passwordThrottle), redis);
  const throttle = createThrottle(counters, { anonymous: config.throttleAnonymous, user: config.throttleUser, signup: config.throttleSignup }, definition.throttles);
  // Simple routes (mounted by the app's `routes`) that declare a throttle scope count with the same counters.
  app.decorate('restfoldThrottle', throttle);
  const end = endOf(first.trailingSlash);
  await registerOpenApi(app, config.auth, { keywords: credentialKeywords, prefix: first.prefix, end });

  // The plugins, in the order a request meets their hooks (after the cookie parser's, above).
  const page = browsableContext(config.auth, first.prefix, end);
  await app.register(requestIdentity, { appLogLevel: config.logLevel });
  await app.register(allowedHosts, { allowedHosts: config.allowedHosts });
  await app.register(errors, { isDatabaseUnavailable: database.isUnavailable, page });
  await app.register(health, { database });
  await app.register(securityHeaders);
  await app.register(corsPolicy, { origins: config.corsOrigins });
  await app.register(browsableAssets);
  // prom-client is loaded only when metrics are on.
  if (config.metrics) (await import('./metrics.js')).serveMetrics(app, database, config);
  // The app's own routes first: a collection's path leaves them the methods it does not serve (router.ts).
  if (definition.routes) {
    await app.register(async (scope) => {
      if (definition.authenticateRoutes !== false) authenticateAppRoutes(scope, database, auth.authenticators, auth.sessionCookie);
      await definition.routes!(scope, context);
    });
  }
  await app.register(collections, {
    routers,
    mountAuthRoutes: auth.mountRoutes,
    runtime: {
      database,
      cursorKey: keys.cursor,
      authenticators: auth.authenticators,
      sessionCookie: auth.sessionCookie,
      defaultPermissions: (action) => (config.requireAuth || !readActions.has(action) ? [isAuthenticated] : [allowAny]),
      throttle,
      page,
      visibility: visibilityPlan(styled, tables),
      credentials: credentialSetup(definition.userModel ?? User, passwordThrottle, auth.issue),
    },
  });
  return app;
}
