/** Cross-origin requests, for the origins CORS_ORIGINS names (none: no CORS headers at all). */
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import { appWide } from '../../base/app-wide.js';

/** Response headers a cross-origin script may read. */
const EXPOSED_HEADERS = ['ETag', 'Location', 'Preference-Applied', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-ID'];

/**
 * Methods a cross-origin script may use (CORS preflight): every one a collection serves.
 * @fastify/cors would allow only GET, HEAD and POST, so updates and deletes failed their preflight.
 */
const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

const common = { methods: CORS_METHODS, exposedHeaders: EXPOSED_HEADERS };

/**
 * Listed origins are echoed and may send credentials (cookies, Authorization). `*` lets any other
 * origin read the API without them: browsers refuse `Access-Control-Allow-Origin: *` beside
 * `Access-Control-Allow-Credentials: true`, so that pair is never sent (the CORS protocol).
 */
export const corsPolicy = appWide<{ readonly origins: readonly string[] }>('cors', async (app, { origins }) => {
  if (origins.length === 0) return;
  const listed = origins.filter((origin) => origin !== '*');
  const withCredentials: FastifyCorsOptions = { ...common, origin: listed, credentials: true };
  if (!origins.includes('*')) {
    await app.register(cors, withCredentials);
    return;
  }
  const anyOrigin: FastifyCorsOptions = { ...common, origin: '*', credentials: false };
  if (listed.length === 0) {
    await app.register(cors, anyOrigin);
    return;
  }
  // Chosen per request by its Origin (the answer then varies on it, which @fastify/cors says in Vary).
  await app.register(cors, {
    delegator: (request, callback) => callback(null, listed.includes(request.headers.origin ?? '') ? withCredentials : anyOrigin),
  });
});
