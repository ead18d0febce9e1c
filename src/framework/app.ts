/**
 * An application: collections, migrations and extra routes, assembled into a
 * Fastify instance with what wraps every request (request id, one log line,
 * errors as 4xx/5xx envelopes) and the health endpoints.
 */
import { randomUUID } from 'node:crypto';
import { METHODS, createServer } from 'node:http';
import cookie from '@fastify/cookie';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Database } from '../store/database.js';
import { migrate, type Migrations } from '../store/migrations.js';
import type { AuthUser, Authenticator } from './authentication/index.js';
import { mountAuthRoutes } from './authentication/routes.js';
import { tokenAuthentication } from './authentication/token.js';
import { authMigrations } from './authentication/users.js';
import type { Collection } from './collection.js';
import type { Config } from './config.js';
import { ApiError, parseError } from './errors.js';
import { allowAny, isAuthenticated, readActions } from './permissions.js';
import { renderErrorsWith, renderHtmlError, renderJsonError, renderTextError } from './renderers.js';
import { mountBrowsableAssets, type BrowsableContext } from './browsable/index.js';
import { API_MEDIA_TYPES, preferredMediaType } from './negotiation.js';
import { registerOpenApi } from './openapi.js';
import { keepRawBodies, mountCollections, resource } from './router.js';
import { createThrottle, memoryCounterStore, type ThrottleRates } from './throttling.js';
import type { ApiRuntime } from './views.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication stage; null for anonymous requests. */
    user: AuthUser | null;
  }
}

export interface AppContext {
  readonly database: Database;
  readonly config: Config;
}

export interface AppDefinition {
  readonly collections: readonly Collection[];
  /** The app's own tables; they run after the framework's (users, permissions, tokens). */
  readonly migrations?: Migrations;
  /** Scoped throttle rates by collection name, in place of THROTTLE_ANON / THROTTLE_USER. */
  readonly throttles?: Readonly<Record<string, ThrottleRates>>;
  /** Routes outside the collection API (a Fastify plugin body). */
  readonly routes?: (app: FastifyInstance, context: AppContext) => void | Promise<void>;
}

export const defineApp = (definition: AppDefinition): AppDefinition => definition;

export const API_PREFIX = '/api/v1';
const statusSchema = { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] };
const MAX_URL_LENGTH = 16 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,200}$/;

/** The framework's migrations, then the app's. */
export async function migrateApp(database: Database, definition: AppDefinition): Promise<string[]> {
  return [
    ...(await migrate(database, 'restfold', authMigrations)),
    ...(await migrate(database, 'app', definition.migrations ?? {})),
  ];
}

export async function buildApp(definition: AppDefinition, context: AppContext): Promise<FastifyInstance> {
  const { database, config } = context;
  const app = Fastify({
    logger: { level: config.logLevel },
    // Fastify's own request lines (which would include headers) are off; see onResponse below.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    bodyLimit: config.maxBodyBytes,
    trustProxy: config.trustProxy,
    routerOptions: { maxParamLength: MAX_URL_LENGTH },
    // The 16 KiB request-line limit is ours (414); Node's own header limit (431) sits well above it.
    serverFactory: (handler) => createServer({ maxHeaderSize: 128 * 1024 }, handler),
    return503OnClosing: true,
    // A path that is not percent-encoded UTF-8 (`/api/v1/%FF/`): 400 in the surface's own error shape.
    frameworkErrors: (_error, request, reply) =>
      (request.url.startsWith(API_PREFIX) ? renderJsonError : renderTextError)(reply, parseError('The URL is not valid percent-encoded UTF-8.')),
  });
  // Every method Node parses reaches the router, so a known path answers 405 with Allow (not 404).
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  app.decorateRequest('user', null);
  await app.register(cookie);
  await registerOpenApi(app, config.auth, `${API_PREFIX}/schema/`);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-ID', request.id);
    if (request.url.length > MAX_URL_LENGTH) {
      throw new ApiError(414, 'uri_too_long', `The request URL is longer than ${MAX_URL_LENGTH} bytes.`);
    }
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        path: request.url.split('?')[0],
        route: request.routeOptions.url,
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
        user_id: request.user?.id ?? null,
      },
      'request',
    );
  });
  const page: BrowsableContext = {
    root: `${API_PREFIX}/`,
    loginUrl: config.auth.includes('session') ? `${API_PREFIX}/auth/login/` : undefined,
    logoutUrl: config.auth.includes('session') ? `${API_PREFIX}/auth/logout/` : undefined,
  };
  // A browser asking anything under the API prefix gets its error inside the browsable page.
  renderErrorsWith(app, database.isUnavailable, (reply, error) =>
    reply.request.url.startsWith(API_PREFIX) && preferredMediaType(reply.request, API_MEDIA_TYPES) === 'text/html'
      ? renderHtmlError(reply, error, page)
      : renderJsonError(reply, error),
  );

  const health = (summary: string) => ({
    schema: {
      tags: ['health'],
      summary,
      response: { '2xx': statusSchema, 503: { description: 'Database unreachable', ...statusSchema } },
    },
  });
  app.get('/healthz', health('The process is up'), async () => ({ status: 'ok' }));
  app.get('/readyz', health('The database is reachable'), async (_request, reply) => {
    try {
      await database.db.selectNoFrom((eb) => eb.lit(1).as('ok')).execute();
      return { status: 'ok' };
    } catch (error) {
      reply.log.warn({ err: error }, 'database unreachable');
      return reply.status(503).header('Retry-After', '5').send({ status: 'unavailable' });
    }
  });

  const authenticators: Authenticator[] = config.auth.flatMap((kind) =>
    kind === 'token' ? [tokenAuthentication(database)] : [],
  );
  const runtime: ApiRuntime = {
    database,
    authenticators,
    defaultPermissions: (action) =>
      config.requireAuth || !readActions.has(action) ? [isAuthenticated] : [allowAny],
    throttle: createThrottle(
      memoryCounterStore(),
      { anonymous: config.throttleAnonymous, user: config.throttleUser },
      definition.throttles,
    ),
    mediaTypes: API_MEDIA_TYPES,
    page,
  };
  mountBrowsableAssets(app);
  await app.register(
    async (api) => {
      keepRawBodies(api);
      mountAuthRoutes(api, database, config.auth);
      mountCollections(api, runtime, definition.collections);
      resource(api, '/schema/', {
        GET: { schema: { tags: ['api'], summary: 'This OpenAPI 3.1 document' }, handler: async () => app.swagger() },
      });
    },
    { prefix: API_PREFIX },
  );
  if (definition.routes) await app.register(async (scope) => definition.routes!(scope, context));
  return app;
}
