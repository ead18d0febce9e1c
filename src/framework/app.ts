/**
 * An application: collections, migrations and extra routes, assembled into a
 * Fastify instance with what wraps every request (request id, one log line,
 * errors as 4xx/5xx envelopes) and the health endpoints.
 */
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { METHODS, createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import helmet from 'helmet';
import type { Redis } from 'ioredis';
import type { Database } from '../store/database.js';
import { migrate, type Migrations } from '../store/migrations.js';
import type { AuthUser } from './authentication/index.js';
import { resolveSecretKey } from './authentication/secrets.js';
import { loginCheck } from './authentication/routes.js';
import { authenticationFor } from './authentication/setup.js';
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
import { lazyChildLogger } from './request-logger.js';
import { closeRedis, connectRedis } from './redis.js';
import { createLoginThrottle, createThrottle, memoryCounterStore, redisCounterStore, type ScopedRates } from './throttling.js';
import type { ApiRuntime } from './views.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication stage; null for anonymous requests. */
    user: AuthUser | null;
    /** The CSRF token of a cookie-borne session, once authenticated. */
    csrfToken: string | undefined;
    /** Whether its handler has yet to reply: the shutdown waits for it (kept by the app's hooks). */
    awaitingReply: boolean;
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
  /** The app's own tables; they run after the framework's (users, permissions, tokens). */
  readonly migrations?: Migrations;
  /** Scoped throttle rates by collection name, in place of THROTTLE_ANON / THROTTLE_USER. */
  readonly throttles?: Readonly<Record<string, ScopedRates>>;
  /** Routes outside the collection API (a Fastify plugin body). */
  readonly routes?: (app: FastifyInstance, context: AppContext) => void | Promise<void>;
}

export const defineApp = (definition: AppDefinition): AppDefinition => definition;

/** Response headers a cross-origin script may read (when CORS_ORIGINS allows it). */
const EXPOSED_HEADERS = ['ETag', 'Location', 'Preference-Applied', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-ID'];

/**
 * Helmet's headers on the browsable pages: a strict same-origin CSP (the page
 * loads only its own script and style sheet), no framing, no sniffing. The
 * middleware is built once and runs only for HTML responses.
 */
function secureBrowsablePages(app: FastifyInstance): void {
  const secure = helmet({
    contentSecurityPolicy: {
      directives: { defaultSrc: ["'self'"], scriptSrc: ["'self'"], styleSrc: ["'self'"], imgSrc: ["'self'", 'data:'], formAction: ["'self'"] },
    },
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const isPage = request.url.startsWith(API_PREFIX) && String(reply.getHeader('content-type')).startsWith('text/html');
    if (!isPage) return done(null, payload);
    // Helmet sets its headers on the raw response; Node sends them with Fastify's.
    secure(request.raw, reply.raw, (error?: unknown) => (error ? done(error as FastifyError) : done(null, payload)));
  });
}

/** The one Redis connection (throttle counters, sessions) of an app, closed with it. */
async function sharedRedis(app: FastifyInstance, url: string): Promise<Redis> {
  const redis = await connectRedis(url, (error) => app.log.warn({ err: error }, 'redis connection error'));
  app.addHook('onClose', () => closeRedis(redis));
  return redis;
}

export const API_PREFIX = '/api/v1';
const statusSchema = { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] };
const MAX_URL_LENGTH = 16 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,200}$/;
const uriTooLong = (): ApiError => new ApiError(414, 'uri_too_long', `The request URL is longer than ${MAX_URL_LENGTH} bytes.`);
/** A socket silent this long mid-request (a client that stopped reading, say) is closed. */
const SOCKET_IDLE_TIMEOUT_MS = 60_000;
/** Log levels at which each request's line is written. */
const REQUEST_LINE_LEVELS: ReadonlySet<string> = new Set(['trace', 'debug', 'info']);
/** Under WORKERS > 1, which process answered (a small number, not the pid). */
const workerId = cluster.worker ? String(cluster.worker.id) : undefined;

/**
 * How many requests of each app have begun and not replied yet. Fastify's close waits for
 * connections, not handlers: a request whose client has hung up keeps running after its connection
 * is gone, and would find the database closed under it (a 500 in the log for a reply nobody reads).
 * A count and a flag on each request, not a Set of the requests: a Set churned by every request
 * kept ~1 KB of each alive through young collections, which V8 then promoted (3x the scavenge cost).
 */
const unreplied = new WeakMap<FastifyInstance, { count: number }>();

/**
 * How long a handler may go on after its client hung up and still be waited for: the longest
 * shutdown waits for handlers, and how long a request that never replies (a route that neither
 * sends nor hijacks after an abort) is remembered.
 */
export const HANDLER_GRACE_MS = 10_000;

/**
 * Waits until every request the app has begun has replied, or HANDLER_GRACE_MS have passed;
 * resolves with how many had not.
 */
export async function repliesSent(app: FastifyInstance): Promise<number> {
  const awaiting = unreplied.get(app);
  if (!awaiting || awaiting.count === 0) return 0;
  app.log.info({ requests: awaiting.count }, 'waiting for requests still being handled');
  const deadline = Date.now() + HANDLER_GRACE_MS;
  while (awaiting.count > 0 && Date.now() < deadline) await sleep(20);
  return awaiting.count;
}

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
    logger: {
      level: config.logLevel,
      ...(context.logStream && { stream: context.logStream }),
      // Nothing logs these today; the redaction keeps a future log call from leaking them.
      redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', 'body.password'],
    },
    // Fastify's own request lines (which would include headers) are off; see onResponse below.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    childLoggerFactory: lazyChildLogger,
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    bodyLimit: config.maxBodyBytes,
    trustProxy: config.trustProxy,
    routerOptions: { maxParamLength: MAX_URL_LENGTH },
    // The 16 KiB request-line limit is ours (414); Node's own header limit (431) sits well above it.
    // With a serverFactory Fastify applies none of its timeouts, so they are all set here.
    serverFactory: (handler) => {
      const server = createServer(
        {
          maxHeaderSize: 128 * 1024,
          requestTimeout: config.requestTimeoutMs,
          headersTimeout: config.headersTimeoutMs,
          keepAliveTimeout: config.keepAliveTimeoutMs,
          // How often Node looks for connections past those timeouts (its default, 30 s, would blunt them).
          connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
        },
        handler,
      );
      server.setTimeout(SOCKET_IDLE_TIMEOUT_MS);
      return server;
    },
    return503OnClosing: true,
    // URLs the router refuses before any hook runs: our error shape (JSON under the API, text elsewhere), never an echo of the URL.
    frameworkErrors: (error, request, reply) => {
      reply.header('X-Request-ID', request.id);
      const render = request.url.startsWith(API_PREFIX) ? renderJsonError : renderTextError;
      return render(reply, error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? uriTooLong() : parseError('The URL is not valid percent-encoded UTF-8.'));
    },
  });
  // Bodies go out through V8's JSON.stringify: response schemas document the routes (OpenAPI), they do
  // not filter them, and compiling a fast-json-stringify serializer per route and status cost ~8 MB of
  // RSS for nothing (collections send JSON they have already written, to hash it for the ETag).
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Every method Node parses reaches the router, so a known path answers 405 with Allow (not 404).
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  app.decorateRequest('user', null);
  app.decorateRequest('csrfToken', undefined);
  const redis = config.redisUrl ? await sharedRedis(app, config.redisUrl) : undefined;
  const counters = redis ? redisCounterStore(redis, config.redisKeyPrefix) : memoryCounterStore();
  const secretKey = await resolveSecretKey(config, app.log);
  await app.register(cookie, { secret: secretKey });
  const login = loginCheck(database, createLoginThrottle(counters, config.throttleLogin));
  const auth = authenticationFor(database, config, secretKey, login, redis);
  app.addHook('onClose', auth.close);
  await registerOpenApi(app, config.auth, `${API_PREFIX}/schema/`);

  // Hooks on every request take Fastify's callback form: no promise per hook per request.
  const awaiting = { count: 0 };
  unreplied.set(app, awaiting);
  app.decorateRequest('awaitingReply', false);
  const replied = (request: FastifyRequest): void => {
    if (!request.awaitingReply) return;
    request.awaitingReply = false;
    awaiting.count--;
  };
  const writesRequestLines = REQUEST_LINE_LEVELS.has(config.logLevel);
  app.addHook('onRequest', (request, reply, done) => {
    request.awaitingReply = true;
    awaiting.count++;
    reply.header('X-Request-ID', request.id);
    if (workerId) reply.header('X-Worker-Id', workerId);
    done(request.url.length > MAX_URL_LENGTH ? uriTooLong() : undefined);
  });
  // A handler has replied once its reply reaches onSend; what is left is writing it out. onResponse
  // covers replies written past onSend (hijacked, raw); it never comes for a request whose client has
  // gone, which is forgotten HANDLER_GRACE_MS after the abort if its handler never replies at all.
  app.addHook('onSend', (request, _reply, payload, done) => {
    replied(request);
    done(null, payload);
  });
  app.addHook('onRequestAbort', (request, done) => {
    setTimeout(() => replied(request), HANDLER_GRACE_MS).unref();
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    replied(request);
    // Built only when it will be written (LOG_LEVEL=warn drops it): routeOptions is made anew per read.
    if (writesRequestLines) request.log.info(
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
    done();
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

  for (const scope of Object.keys(definition.throttles ?? {})) {
    if (!definition.collections.some(({ name }) => name === scope)) throw new Error(`throttles: no collection named "${scope}".`);
  }
  const runtime: ApiRuntime = {
    database,
    secretKey,
    authenticators: auth.authenticators,
    sessionCookie: auth.sessionCookie,
    defaultPermissions: (action) =>
      config.requireAuth || !readActions.has(action) ? [isAuthenticated] : [allowAny],
    throttle: createThrottle(counters, { anonymous: config.throttleAnonymous, user: config.throttleUser }, definition.throttles),
    mediaTypes: API_MEDIA_TYPES,
    page,
  };
  secureBrowsablePages(app);
  if (config.corsOrigins.length > 0) await app.register(cors, { origin: [...config.corsOrigins], credentials: true, exposedHeaders: EXPOSED_HEADERS });
  mountBrowsableAssets(app);
  // prom-client is loaded only when metrics are on.
  if (config.metrics) (await import('./metrics.js')).serveMetrics(app, database, config);
  await app.register(
    async (api) => {
      keepRawBodies(api);
      auth.mountRoutes(api);
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
