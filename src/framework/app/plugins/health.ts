/** The health endpoints: /healthz (the process is up) and /readyz (the database is reachable; with replicas, which are in use). */
import type { Database } from '../../../store/connection/database.js';
import { ping } from '../../../store/connection/ping.js';
import { ANONYMOUS, errorResponses, operationId } from '../../docs/openapi.js';
import { appWide } from '../../base/app-wide.js';

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

const documented = (name: string, summary: string) => ({
  schema: {
    tags: ['health'],
    summary,
    operationId: operationId(name, 'check'),
    ...ANONYMOUS,
    response: {
      200: { description: 'OK', ...statusSchema, properties: { ...statusSchema.properties, replicas: replicasSchema } },
      ...errorResponses([]),
      503: { description: 'Database unreachable', ...statusSchema, headers: { 'Retry-After': { type: 'integer', description: 'Seconds to wait.' } } },
    },
  },
});

export const health = appWide<{ readonly database: Database }>('health', async (app, { database }) => {
  app.get('/healthz', documented('health', 'The process is up'), async () => ({ status: 'ok' }));
  app.get('/readyz', documented('readiness', 'The database is reachable'), async (_request, reply) => {
    try {
      await ping(database);
      // Ready while the primary answers: a replica out of use only moves its reads there.
      const replicas = database.replicas?.status().map(({ name, state, lagMillis }) => ({ name, state, lag_ms: lagMillis }));
      return replicas ? { status: 'ok', replicas } : { status: 'ok' };
    } catch (error) {
      reply.log.warn({ err: error }, 'database unreachable');
      return reply.status(503).header('Retry-After', '5').send({ status: 'unavailable' });
    }
  });
});
