/** The health endpoints: /healthz (the process is up) and /readyz (the database is reachable). */
import type { Database } from '../../store/database.js';
import { ping } from '../../store/ping.js';
import { appWide } from './app-wide.js';

/** Probes address a machine by its IP, so these answer outside ALLOWED_HOSTS. */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

const statusSchema = { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] };

const documented = (summary: string) => ({
  schema: {
    tags: ['health'],
    summary,
    response: { '2xx': statusSchema, 503: { description: 'Database unreachable', ...statusSchema } },
  },
});

export const health = appWide<{ readonly database: Database }>('health', async (app, { database }) => {
  app.get('/healthz', documented('The process is up'), async () => ({ status: 'ok' }));
  app.get('/readyz', documented('The database is reachable'), async (_request, reply) => {
    try {
      await ping(database);
      return { status: 'ok' };
    } catch (error) {
      reply.log.warn({ err: error }, 'database unreachable');
      return reply.status(503).header('Retry-After', '5').send({ status: 'unavailable' });
    }
  });
});
