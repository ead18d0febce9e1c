/**
 * An application: collections, migrations and extra routes, assembled into a
 * Fastify instance from the plugins in src/framework/plugins/, registered in
 * the order a request meets them (docs/architecture.md draws the path).
 */
import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { assertRelationsDeclared, filterableTables } from './declared-schema.js';
import { appVersioning, type AppContext, type AppDefinition } from './definition.js';
import { withNamedFilters } from '../declare/named-filters.js';
import { RESERVED_PARAMETERS } from '../stages/list-params.js';
import { LIMIT_OFFSET_PARAMETERS } from '../actions/limit-offset.js';
import { authenticateAppRoutes } from '../toolkit/app-routes.js';
import type { AuthUser } from '../base/auth-user.js';
import { resolveSecretKey, signingKeys } from './secrets.js';
import { openFileStorage } from '../../store/files/open.js';
import { fileLinks, linkPath } from '../base/file-links.js';
import { attachFiles, type AttachedFiles } from '../../store/files/attached.js';
import { filePlaceIn } from '../render/record-links.js';
import { listPath } from '../declare/paths.js';
import { hasFiles } from '../views.js';
import type { FilesRuntime } from '../views.js';
import type { Config } from './config.js';
import { credentialCheck, loginCheck } from '../routing/auth/login.js';
import { adminSite } from '../admin/index.js';
import { HISTORY_SHOWN } from '../admin/history.js';
import { loggedName, loggingWrites } from '../write/change-log.js';
import { logEntriesOf } from '../../store/accounts/log-entries.js';
import { adminCollections } from './admin-site.js';
import { authenticationFor } from './authentication.js';
import { credentialSetup } from '../toolkit/credential-store.js';
import { browsableAssets } from '../render/browsable/index.js';
import { assertKeywords, DEFAULT_KEYWORDS, endOf } from '../base/style.js';
import { mountedRouters, withAppDefaults, type MountedRouter } from '../routing/routers.js';
import { User } from '../declare/users/user-model.js';
import { authCollections } from '../declare/users/group-collections.js';
import type { Collection } from '../declare/collection.js';
import { registerOpenApi } from '../docs/openapi.js';
import { allowAny, isAuthenticated, readActions } from '../declare/permission-classes.js';
import { allowedHosts } from './plugins/allowed-hosts.js';
import { browsableContext, collections } from './plugins/collections.js';
import { corsPolicy } from './plugins/cors.js';
import { errors, frameworkErrors } from './plugins/error-replies.js';
import { health } from './plugins/health.js';
import { draining } from './plugins/draining.js';
import { readYourWrites } from './plugins/read-your-writes.js';
import { httpProtocol, httpServerOptions } from './plugins/http-server.js';
import { requestIdentity, requestIdentityOptions } from './plugins/request-identity.js';
import { securityHeaders } from './plugins/security-headers.js';
import { closeRedis, connectRedis } from '../base/redis.js';
import { liveChanges } from './live.js';
import { scopePlan } from '../stages/scope/plan.js';
import { createPasswordThrottle, createThrottle, memoryCounterStore, sharedOrLocalCounterStore } from '../stages/throttling.js';


declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication stage; null for anonymous requests. */
    user: AuthUser | null;
    /** The CSRF token of a cookie-borne session, once authenticated. */
    csrfToken: string | undefined;
  }
}

/** The one Redis connection (throttle counters, sessions, live changes' messages sent) of an app, closed with it. */
async function sharedRedis(app: FastifyInstance, url: string): Promise<Redis> {
  const redis = await connectRedis(url, (error) => app.log.warn({ err: error }, 'redis connection error'));
  app.addHook('onClose', () => closeRedis(redis));
  return redis;
}

function assertThrottledCollectionsExist(definition: AppDefinition): void {
  for (const bucket of Object.keys(definition.throttles ?? {})) {
    if (!definition.collections.some(({ name }) => name === bucket)) throw new Error(`throttles: no collection named "${bucket}".`);
  }
}

/**
 * The files the app's database lends a record store: its storage, and links under the first
 * router's prefix to the records of its top-level collections (a path from the app's origin: no
 * request names the host).
 */
function recordStoreFiles(first: MountedRouter, files: FilesRuntime, seconds: number): AttachedFiles {
  return {
    storage: files.storage,
    maxFileBytes: files.limits.maxFileBytes,
    link(table, row, field, stored) {
      const target = first.collections.find((collection) => !collection.parent && collection.serializer.model.table === table && hasFiles(collection));
      const place = target && filePlaceIn(target, listPath(target), row);
      if (!place) return null;
      const expires = Math.floor(Date.now() / 1000) + seconds;
      return `${first.prefix}${linkPath(files.linkKey, place, field, stored, expires, endOf(first.trailingSlash))}`;
    },
  };
}

/** Uploaded files' store (FILES_STORAGE), opened at start so a bad setting stops the process there, and the links' signing. */
async function filesRuntime(app: FastifyInstance, config: Config, linkKey: Uint8Array): Promise<FilesRuntime> {
  const storage = await openFileStorage({ url: config.files.storage, env: config.files.s3Env });
  app.addHook('onClose', () => storage.close());
  const { maxBodyBytes, maxParts, maxFileBytes, linkSeconds, s3Redirect } = config.files;
  return { storage, linkKey, links: fileLinks(linkKey, linkSeconds), limits: { maxBodyBytes, maxParts, maxFileBytes, maxFieldBytes: config.maxBodyBytes }, redirect: s3Redirect };
}

/** The framework's top-level collection `name` among its styled `/auth/` sets (a user's `groups` is nested, the groups are not). */
const topLevel = (sets: readonly (readonly Collection[])[], name: string): Collection => sets.flat().find((own) => own.name === name && !own.parent)!;

/**
 * The app as a Fastify instance on `context.database`, not listening: `serve` listens; a test sends it
 * requests with `inject` (docs/guides/testing.md). Refuses a declaration that cannot be served.
 */
export async function buildApp(definition: AppDefinition, context: AppContext): Promise<FastifyInstance> {
  const { config } = context;
  assertThrottledCollectionsExist(definition);
  assertRelationsDeclared(definition);
  const credentialKeywords = definition.credentialKeywords ?? DEFAULT_KEYWORDS;
  assertKeywords(credentialKeywords);
  const tables = filterableTables(definition);
  const styled = withAppDefaults(definition.collections, definition).map((collection) => withNamedFilters(collection, tables, [...RESERVED_PARAMETERS, ...LIMIT_OFFSET_PARAMETERS]));
  const versioning = appVersioning(definition);
  const routers = mountedRouters(definition.routers, styled, versioning);
  const [first] = routers as [MountedRouter];
  const app = Fastify({ ...requestIdentityOptions(config, context.logStream), ...httpServerOptions(config), frameworkErrors });
  app.decorate('restfoldStyle', { prefixes: routers.map(({ prefix }) => prefix), exceptionHandler: definition.exceptionHandler, credentialKeywords });
  await app.register(httpProtocol);
  await app.register(draining);

  // What requests share: counters (in Redis when REDIS_URL is set), the keys derived from SECRET_KEY,
  // the enabled authentication kinds and the throttles.
  app.decorateRequest('user', null);
  app.decorateRequest('csrfToken', undefined);
  const redis = config.redisUrl ? await sharedRedis(app, config.redisUrl) : undefined;
  // With a live collection, every write goes through a database that tells the live streams what it changed.
  const { database: telling, hub, listening } = await liveChanges(app, styled, context.database, config, redis, (definition.userModel ?? User).table);
  const database = loggingWrites(telling, config.history);
  const counters = redis ? sharedOrLocalCounterStore(redis, config.redisKeyPrefix, app.log) : memoryCounterStore();
  const keys = signingKeys(await resolveSecretKey(config, app.log));
  await app.register(cookie, { secret: keys.cookie });
  const passwordThrottle = createPasswordThrottle(counters, config.throttleLogin);
  const auth = authenticationFor(database, config, keys.jwt, loginCheck(database, passwordThrottle), redis, (userId) => hub?.publishCredentials([userId]));
  const throttle = createThrottle(counters, { anonymous: config.throttleAnonymous, user: config.throttleUser, signup: config.throttleSignup }, definition.throttles);
  // Simple routes (mounted by the app's `routes`) that declare a throttle bucket count with the same counters.
  app.decorate('restfoldThrottle', throttle);
  const files = await filesRuntime(app, config, keys.files);
  for (const lent of new Set([context.database, database])) attachFiles(lent, recordStoreFiles(first, files, config.files.linkSeconds));
  const end = endOf(first.trailingSlash);
  const document = await registerOpenApi(app, config.auth, { keywords: credentialKeywords, prefix: first.prefix, end, pattern: first.pattern }, versioning);

  // The plugins, in the order a request meets their hooks (after the cookie parser's, above).
  const page = browsableContext(config.auth, first.prefix, end);
  await app.register(requestIdentity, { appLogLevel: config.logLevel });
  await app.register(allowedHosts, { allowedHosts: config.allowedHosts });
  await app.register(errors, { isDatabaseUnavailable: database.isUnavailable, page });
  await app.register(health, { database, redis, listening });
  if (database.replicas) await app.register(readYourWrites, { replicas: database.replicas });
  await app.register(securityHeaders, { pagePrefixes: config.adminPrefix ? [config.adminPrefix] : [] });
  await app.register(corsPolicy, { origins: config.corsOrigins });
  await app.register(browsableAssets);
  // prom-client is loaded only when metrics are on.
  if (config.metrics) (await import('./metrics.js')).serveMetrics(app, database, config, counters);
  // The app's own routes first: a collection's path leaves them the methods it does not serve (router.ts).
  if (definition.routes) {
    await app.register(async (instance) => {
      if (definition.authenticateRoutes !== false) authenticateAppRoutes(instance, database, auth.authenticators, auth.sessionCookie, context.forcedUser);
      await definition.routes!(instance, { ...context, database });
    });
  }
  // The framework's groups and users as the app's defaults style them: served under /auth/, and read so by the admin.
  const ownAuth = authCollections.map((set) => withAppDefaults(set, definition));
  await app.register(collections, {
    routers,
    mountAuthRoutes: auth.mountRoutes,
    document,
    authCollections: ownAuth.map((own) => ({ collections: own, scopePlan: scopePlan(own, tables) })),
    runtime: {
      versioning,
      database,
      cursorKey: keys.cursor,
      authenticators: auth.authenticators,
      sessionCookie: auth.sessionCookie,
      forcedUser: context.forcedUser,
      defaultPermissions: (action) => (config.requireAuth || !readActions.has(action) ? [isAuthenticated] : [allowAny]),
      throttle,
      page,
      scopePlan: scopePlan(styled, tables),
      credentials: credentialSetup(definition.userModel ?? User, passwordThrottle, auth.issue),
      live: hub,
      files,
    },
  });
  // The admin needs sessions: with AUTH leaving them out, it is off (docs/admin.md).
  if (config.adminPrefix && auth.sessions) {
    await app.register(adminSite, {
      root: `${config.adminPrefix}/`,
      collections: adminCollections(routers, definition.admin),
      auth: { api: `${first.prefix}/auth`, end, groups: topLevel(ownAuth, 'groups'), users: topLevel(ownAuth, 'users') },
      sessions: auth.sessions,
      throttle,
      check: credentialCheck(database, passwordThrottle),
      ended: (userId) => hub?.publishCredentials([userId]),
      uploads: { maxBodyBytes: config.files.maxBodyBytes },
      history: (collection, id) => logEntriesOf(database, loggedName(collection), id, HISTORY_SHOWN),
    });
  }
  return app;
}
