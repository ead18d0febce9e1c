/**
 * The health endpoints: /healthz (the process is up) and /readyz (the process takes requests: the
 * database is reachable and it is not shutting down; with replicas, which are in use; with Redis,
 * whether it answers; with live changes over PostgreSQL, whether its LISTEN connection is up). A 503 is the API's error envelope, its reason in `error`, with Retry-After.
 */
import type { Redis } from 'ioredis';
import type { Database } from '../../../store/connection/database.js';
import { ping } from '../../../store/connection/ping.js';
import { ANONYMOUS, errorResponses, operationId } from '../../docs/openapi.js';
import { appWide } from '../../base/app-wide.js';
import { ApiError, databaseUnavailable } from '../../base/errors.js';
import { renderJsonError } from '../../render/renderers.js';
import { isDraining } from './draining.js';

/** Probes address a machine by its IP, so these answer outside ALLOWED_HOSTS. */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

const statusSchema = { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] };
/** With read replicas: each one's state (`in use`, `lagging`, `unreachable`, `not a standby`) and lag; reads skip all but those in use. */
const replicasSchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: { name: { type: 'string' }, state: { type: 'string' }, lag_ms: { type: ['integer', 'null'] } },
    required: ['name', 'state', 'lag_ms'],
  },
};

/** With REDIS_URL: whether Redis answers (`ok`) or not (`unreachable`: the process serves on without it). */
const redisSchema = { type: 'string', enum: ['ok', 'unreachable'] };

/**
 * With live changes carried by PostgreSQL (no REDIS_URL): whether the LISTEN connection is up
 * (`ok`) or being connected again (`reconnecting`: other processes' changes do not reach this
 * one's streams until it is back, when they get `reset`; everything else is served).
 */
const listenSchema = { type: 'string', enum: ['ok', 'reconnecting'] };

const documented = (name: string, summary: string, errors: readonly number[]) => ({
  schema: {
    tags: ['health'],
    summary,
    operationId: operationId(name, 'check'),
    ...ANONYMOUS,
    response: {
      200: { description: 'OK', ...statusSchema, properties: { ...statusSchema.properties, replicas: replicasSchema, redis: redisSchema, listen: listenSchema } },
      ...errorResponses(errors),
    },
  },
});

/** A process shutting down: a load balancer sends elsewhere at once. */
const shuttingDown = (): ApiError =>
  new ApiError(503, 'service_unavailable', 'This server is shutting down; send requests to another.', undefined, { 'Retry-After': '1' });

/**
 * `redis`: REDIS_URL's connection, and `listening` the LISTEN connection's, whose states the body tells without a 503:
 * every process would be out of rotation at once, while what needs Redis alone fails (docs/deploying.md, Dependency outages).
 */
export const health = appWide<{ readonly database: Database; readonly redis?: Redis; readonly listening?: () => boolean }>('health', async (app, { database, redis, listening }) => {
  app.get('/healthz', documented('health', 'The process is up', []), async () => ({ status: 'ok' }));
  app.get('/readyz', documented('readiness', 'The process takes requests: the database is reachable and it is not shutting down', [503]), async (_request, reply) => {
    if (isDraining(app)) return renderJsonError(reply, shuttingDown());
    try {
      await ping(database);
      // Ready while the primary answers: a replica out of use only moves its reads there.
      const replicas = database.replicas?.status().map(({ name, state, lagMillis }) => ({ name, state, lag_ms: lagMillis }));
      return {
        status: 'ok',
        ...(replicas && { replicas }),
        ...(redis && { redis: redis.status === 'ready' ? 'ok' : 'unreachable' }),
        ...(listening && { listen: listening() ? 'ok' : 'reconnecting' }),
      };
    } catch (error) {
      reply.log.warn({ err: error }, 'database unreachable');
      return renderJsonError(reply, databaseUnavailable());
    }
  });
});
