/**
 * Who a request is in the log and to the shutdown: its id (X-Request-ID, the
 * client's when well formed), the worker that answered, whether its handler
 * has yet to reply, and the one log line written when it is done (one per admin page, whatever
 * in-process calls it makes to the API).
 */
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { LogController, type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { Config } from '../config.js';
import { lazyChildLogger } from '../../base/request-logger.js';
import { appWide } from '../../base/app-wide.js';
import { isAdminCall, pageRequestId } from '../../base/admin-calls.js';
import { MAX_URL_LENGTH, uriTooLong } from './error-replies.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Whether its handler has yet to reply: the shutdown waits for it (kept by the hooks below). */
    awaitingReply: boolean;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,200}$/;
/** Log levels at which each request's line is written. */
const REQUEST_LINE_LEVELS: ReadonlySet<string> = new Set(['trace', 'debug', 'info']);
/** Under WORKERS > 1, which process answered (a small number, not the pid). */
const workerId = cluster.worker ? String(cluster.worker.id) : undefined;

/** The app's logger and how each request's id is chosen and logged (Fastify options, fixed at construction). */
export function requestIdentityOptions(config: Config, logStream: { write(line: string): void } | undefined): FastifyServerOptions {
  return {
    logger: {
      level: config.logLevel,
      ...(logStream && { stream: logStream }),
      // Nothing logs these today; the redaction keeps a future log call from leaking them.
      redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', 'body.password'],
    },
    // Fastify's own request lines (which would include headers) are off; see the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    childLoggerFactory: lazyChildLogger,
    requestIdHeader: false,
    genReqId: (request) => {
      // An admin page's in-process call is the page's: whatever it logs bears the page's id.
      const page = pageRequestId(request.headers);
      if (page !== undefined) return page;
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
  };
}

/**
 * How many requests of each app have begun and not replied yet. Fastify's close waits for
 * connections, not handlers: a request whose client has hung up keeps running after its connection
 * is gone, and would find the database closed under it (a 500 in the log for a reply nobody reads).
 * A count and a flag on each request, not a Set of the requests: nothing holds a request after it
 * replied, so it is collected young (measured in docs/performance.md).
 */
const unreplied = new WeakMap<FastifyInstance, { count: number }>();

/**
 * How long a handler may go on after its client hung up and still be waited for: the longest
 * shutdown waits for handlers, and how long a request that never replies (a route that neither
 * sends nor hijacks after an abort) is remembered.
 */
const HANDLER_GRACE_MS = 10_000;

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

/** `appLogLevel`: LOG_LEVEL (Fastify reserves `logLevel` among a plugin's options for the plugin's own). */
export const requestIdentity = appWide<{ readonly appLogLevel: string }>('request-identity', async (app, { appLogLevel }) => {
  // Hooks on every request take Fastify's callback form: no promise per hook per request.
  const awaiting = { count: 0 };
  unreplied.set(app, awaiting);
  app.decorateRequest('awaitingReply', false);
  const replied = (request: FastifyRequest): void => {
    if (!request.awaitingReply) return;
    request.awaitingReply = false;
    awaiting.count--;
  };
  const writesRequestLines = REQUEST_LINE_LEVELS.has(appLogLevel);
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
    // An admin page's call writes none: the page's line is the one (base/admin-calls.ts).
    if (writesRequestLines && !isAdminCall(request)) request.log.info(
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
});
