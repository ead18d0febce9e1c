/**
 * Simple routes: a fixed set of JSON routes under a prefix, outside the
 * collection API, whose errors are plain text (the same typed errors as
 * collections, rendered by renderTextError). Paths are taken exactly, with no
 * trailing-slash variant; a known path with another method is 405 with
 * `Allow`. Bodies stay raw bytes until a handler calls readJsonBody, so a
 * malformed body is reported by the framework's parser, as text.
 */
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, onRequestAsyncHookHandler } from 'fastify';
import type { Database } from '../../store/connection/database.js';
import { notFound } from '../base/errors.js';
import { decodeJson, rawBody } from '../stages/parsers.js';
import { renderErrorsWith, renderTextError } from '../render/renderers.js';
import { keepRawBodies } from './router.js';
import { refuseOtherMethods } from './method-not-allowed.js';
import { RATE_LIMIT_HEADERS, withHeaders } from '../docs/openapi.js';
import type { JsonSchema } from '../../core/fields.js';
import type { Throttle } from '../stages/throttling.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's throttle (set by buildApp), for simple routes that declare a bucket. */
    restfoldThrottle?: Throttle;
  }
}

/**
 * A Fastify handler: return a value to send it as JSON (200), or use `reply` for another status.
 * Values are sent as JSON.stringify writes them, whatever the response schema says: send records
 * rendered by a serializer (as recordStore does), never raw rows.
 */
export type SimpleHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
/** A method `mountSimpleRoutes` serves. */
export type SimpleMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** A handler and its schema (for the OpenAPI document; it does not filter the body). */
export interface SimpleEndpoint {
  readonly handler: SimpleHandler;
  readonly schema?: FastifySchema;
  /**
   * A throttle bucket: each request counts in that bucket's own window, anonymous clients by IP, at
   * THROTTLE_ANON / THROTTLE_USER; over the rate it is 429 with Retry-After, before the body is read.
   */
  readonly throttle?: string;
}
/** Path under the prefix (`/` for the prefix itself, `/:id`, …) → endpoint per method. */
export type SimpleRoutes = Readonly<Record<string, Partial<Record<SimpleMethod, SimpleEndpoint>>>>;

/** JSON routes of your own over a model, with plain-text errors (docs/posts.md). */
export async function mountSimpleRoutes(
  app: FastifyInstance,
  database: Database,
  prefix: string,
  routes: SimpleRoutes,
): Promise<void> {
  await app.register(
    async (instance) => {
      keepRawBodies(instance);
      renderErrorsWith(instance, database.isUnavailable, renderTextError);
      // `/:id` would also match an empty segment (`<prefix>/`), which names no route.
      instance.addHook('onRequest', (request, _reply, done) => {
        done(Object.values(request.params as Record<string, string>).includes('') ? notFound() : undefined);
      });
      for (const [url, handlers] of Object.entries(routes)) {
        const methods = Object.keys(handlers) as SimpleMethod[];
        // 'no-slash': the prefix itself, not also `<prefix>/`.
        const path = { url, prefixTrailingSlash: 'no-slash' } as const;
        for (const method of methods) {
          const { throttle: bucket, ...endpoint } = handlers[method]!;
          if (!bucket) {
            instance.route({ ...path, method, ...endpoint });
            continue;
          }
          // Every answer of a throttled route carries the RateLimit-* headers: the document says so.
          const response = endpoint.schema?.response as Record<string, JsonSchema> | undefined;
          const schema = response ? { ...endpoint.schema, response: withHeaders(response, RATE_LIMIT_HEADERS) } : endpoint.schema;
          instance.route({ ...path, method, ...endpoint, schema, onRequest: throttled(instance, bucket) });
        }
        refuseOtherMethods(instance, path, methods);
      }
    },
    { prefix },
  );
}

/** A hook counting each request against the app's throttle in `bucket`. */
function throttled(instance: FastifyInstance, bucket: string): onRequestAsyncHookHandler {
  const throttle = instance.restfoldThrottle;
  if (!throttle) throw new Error(`Simple routes throttled in "${bucket}" must be mounted in an app built by buildApp.`);
  return (request, reply) => throttle.checkBucket(request, reply, request.user, bucket);
}

/** JSON gathered before a write: fewer, larger writes than one per item. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Sends `items` as one JSON array (200 unless set), written as they come and as fast as the client
 * reads: the response's backpressure pulls the next ones, so the array is never held whole. An
 * error before the first byte is answered as any error; after it the status is already sent, so
 * the error is logged and Fastify destroys the connection (the client sees a cut-off body, never a
 * complete-looking one). A client that leaves ends the iteration (`items` is returned).
 */
export function sendJsonArray(reply: FastifyReply, items: AsyncIterable<unknown>): FastifyReply {
  reply.type('application/json; charset=utf-8');
  // A HEAD reply has no body, and Fastify would read a stream to its end to discard it.
  if (reply.request.method === 'HEAD') return reply.send();
  return reply.send(Readable.from(jsonArray(items, reply.log), { objectMode: false }));
}

async function* jsonArray(items: AsyncIterable<unknown>, log: FastifyBaseLogger): AsyncGenerator<string> {
  let chunk = '[';
  let separator = '';
  let started = false;
  try {
    for await (const item of items) {
      chunk += separator + JSON.stringify(item);
      separator = ',';
      if (chunk.length >= CHUNK_CHARS) {
        started = true;
        yield chunk;
        chunk = '';
      }
    }
  } catch (error) {
    // Before the first byte the error handler answers and logs it; after, Fastify only cuts the connection.
    if (started) log.error({ err: error }, 'response cut short: reading its items failed');
    throw error;
  }
  yield `${chunk}]`;
}

/** The request body as JSON, whatever its Content-Type; invalid UTF-8 or JSON is 400 with the parser's reason. */
export const readJsonBody = (request: FastifyRequest): unknown => decodeJson(rawBody(request));
