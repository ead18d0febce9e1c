/**
 * Simple routes: a fixed set of JSON routes under a prefix, outside the
 * collection API, whose errors are plain text (the same typed errors as
 * collections, rendered by renderTextError). Paths are taken exactly, with no
 * trailing-slash variant; a known path with another method is 405 with
 * `Allow`. Bodies stay raw bytes until a handler calls readJsonBody, so a
 * malformed body is reported by the framework's parser, as text.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Database } from '../store/database.js';
import { methodNotAllowed, notFound } from './errors.js';
import { decodeJson, rawBody } from './parsers.js';
import { renderErrorsWith, renderTextError } from './renderers.js';
import { keepRawBodies } from './router.js';

/**
 * A Fastify handler: return a value to send it as JSON (200), or use `reply` for another status.
 * Values are sent as JSON.stringify writes them, whatever the response schema says: send records
 * rendered by a serializer (as recordStore does), never raw rows.
 */
export type SimpleHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
export type SimpleMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** A handler and its schema (for the OpenAPI document; it does not filter the body). */
export interface SimpleEndpoint {
  readonly handler: SimpleHandler;
  readonly schema?: FastifySchema;
}
/** Path under the prefix (`/` for the prefix itself, `/:id`, …) → endpoint per method. */
export type SimpleRoutes = Readonly<Record<string, Partial<Record<SimpleMethod, SimpleEndpoint>>>>;

export async function mountSimpleRoutes(
  app: FastifyInstance,
  database: Database,
  prefix: string,
  routes: SimpleRoutes,
): Promise<void> {
  await app.register(
    async (scope) => {
      keepRawBodies(scope);
      renderErrorsWith(scope, database.isUnavailable, renderTextError);
      // `/:id` would also match an empty segment (`<prefix>/`), which names no route.
      scope.addHook('onRequest', (request, _reply, done) => {
        done(Object.values(request.params as Record<string, string>).includes('') ? notFound() : undefined);
      });
      for (const [url, handlers] of Object.entries(routes)) {
        const methods = Object.keys(handlers) as SimpleMethod[];
        const allowed = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])];
        // 'no-slash': the prefix itself, not also `<prefix>/`.
        const path = { url, prefixTrailingSlash: 'no-slash' } as const;
        for (const method of methods) scope.route({ ...path, method, ...handlers[method]! });
        scope.route({
          ...path,
          schema: { hide: true },
          method: scope.supportedMethods.filter((method) => !allowed.includes(method)),
          handler: async (request) => {
            throw methodNotAllowed(request.method, allowed);
          },
        });
      }
    },
    { prefix },
  );
}

/** The request body as JSON, whatever its Content-Type; invalid UTF-8 or JSON is 400 with the parser's reason. */
export const readJsonBody = (request: FastifyRequest): unknown => decodeJson(rawBody(request));
