/** Cross-origin requests, for the origins CORS_ORIGINS names (none: no CORS headers at all). */
import cors from '@fastify/cors';
import { appWide } from './app-wide.js';

/** Response headers a cross-origin script may read. */
const EXPOSED_HEADERS = ['ETag', 'Location', 'Preference-Applied', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-ID'];

/**
 * Methods a cross-origin script may use (CORS preflight): every one a collection serves.
 * @fastify/cors would allow only GET, HEAD and POST, so updates and deletes failed their preflight.
 */
const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

export const corsPolicy = appWide<{ readonly origins: readonly string[] }>('cors', async (app, { origins }) => {
  if (origins.length > 0) await app.register(cors, { origin: [...origins], credentials: true, methods: CORS_METHODS, exposedHeaders: EXPOSED_HEADERS });
});
