/**
 * The router: mounts collections and the authentication endpoints under a
 * prefix (a Fastify plugin). Paths end in a slash; the unslashed path answers
 * 308, a known path with another method 405 with `Allow`, anything else under
 * the prefix a JSON 404.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Collection } from './collection.js';
import { customActionEndpoints } from './custom-actions.js';
import { methodNotAllowed, notFound } from './errors.js';
import { actionSchema, ANONYMOUS, errorResponses, operationId } from './openapi.js';
import { API_MEDIA_TYPES, negotiate } from './negotiation.js';
import { absoluteUrl } from './hosts.js';
import { queryParameters } from './parsers.js';
import { renderResult } from './renderers.js';
import type { Action } from './permissions.js';
import { documentedCredentials } from './documented-credentials.js';
import { handleCollection, type ApiRuntime } from './views.js';

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A handler and its schema (documentation for the OpenAPI document). */
export interface Endpoint {
  readonly handler: Handler;
  readonly schema?: FastifySchema;
}

/** Routes that only answer for the protocol (OPTIONS, 405, 308) stay out of the document. */
const hidden = { schema: { hide: true } } as const;

/** Body bytes are kept raw here and parsed by the parsing stage, after authentication. */
export function keepRawBodies(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}

/**
 * Registers `url` (ending in `/`) with its handlers, OPTIONS, 405 for the other
 * methods, and a 308 from the unslashed path.
 */
export function resource(scope: FastifyInstance, url: string, endpoints: Partial<Record<Method, Endpoint>>): void {
  const methods = Object.keys(endpoints) as Method[];
  const allowed = [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'];
  // Under a prefix, '/' must not also claim the unslashed prefix (that path redirects).
  const slashed = { url, prefixTrailingSlash: 'slash' } as const;
  for (const method of methods) scope.route({ ...slashed, method, ...endpoints[method]! });
  scope.route({
    ...slashed,
    ...hidden,
    method: 'OPTIONS',
    handler: async (_request, reply) => reply.status(204).header('Allow', allowed.join(', ')).send(),
  });
  const others = scope.supportedMethods.filter((method) => !allowed.includes(method));
  scope.route({
    ...slashed,
    ...hidden,
    method: others,
    handler: async (request) => {
      throw methodNotAllowed(request.method, allowed);
    },
  });
  scope.route({
    ...hidden,
    method: scope.supportedMethods,
    url: url.slice(0, -1),
    prefixTrailingSlash: 'no-slash',
    handler: async (request, reply) => {
      const query = request.url.indexOf('?');
      const path = request.url.slice(0, query === -1 ? undefined : query);
      return reply.redirect(`${path}/${query === -1 ? '' : request.url.slice(query)}`, 308);
    },
  });
}

const listActions: Partial<Record<Method, Action>> = { GET: 'list', POST: 'create' };
const detailActions: Partial<Record<Method, Action>> = {
  GET: 'retrieve',
  PUT: 'update',
  PATCH: 'partial_update',
  DELETE: 'destroy',
};

function endpointsFor(runtime: ApiRuntime, collection: Collection, actions: Partial<Record<Method, Action>>) {
  return Object.fromEntries(
    Object.entries(actions).map(([method, action]): [string, Endpoint] => [
      method,
      {
        handler: (request, reply) => handleCollection(request, reply, runtime, collection, action),
        schema: { ...actionSchema(collection, action), ...documentedCredentials(runtime, collection, action) },
      },
    ]),
  );
}

/**
 * Bulk create on a path of its own, so the document can say that an array
 * answers an array while a single create answers a record. (The collection's
 * own POST takes an array too, as the contract has always allowed.)
 */
function bulkCreateEndpoint(runtime: ApiRuntime, collection: Collection): Endpoint {
  return {
    handler: (request, reply) => handleCollection(request, reply, runtime, collection, 'create'),
    schema: { ...actionSchema(collection, 'bulk_create'), ...documentedCredentials(runtime, collection, 'create') },
  };
}

export function mountCollections(scope: FastifyInstance, runtime: ApiRuntime, collections: readonly Collection[]): void {
  const names = new Set<string>();
  for (const collection of collections) {
    if (names.has(collection.name)) throw new Error(`Two collections are named "${collection.name}".`);
    names.add(collection.name);
    resource(scope, `/${collection.name}/`, endpointsFor(runtime, collection, listActions));
    resource(scope, `/${collection.name}/:${collection.lookup.field}/`, endpointsFor(runtime, collection, detailActions));
    if (collection.bulkCreateMax !== undefined) resource(scope, `/${collection.name}/bulk/`, { POST: bulkCreateEndpoint(runtime, collection) });
    for (const [path, endpoints] of customActionEndpoints(runtime, collection)) resource(scope, path, endpoints);
  }
  resource(scope, '/', {
    GET: {
      schema: {
        summary: 'The collections and their URLs',
        tags: ['api'],
        operationId: operationId('api', 'root'),
        ...ANONYMOUS,
        response: {
          200: { description: 'Collection name → URL', type: 'object', additionalProperties: { type: 'string', format: 'uri' } },
          ...errorResponses([406]),
        },
      },
      handler: async (request, reply) => {
        const mediaType = negotiate(request, API_MEDIA_TYPES, queryParameters(request.url).get('format'));
        const root = absoluteUrl(request).pathname;
        const body = Object.fromEntries(collections.map(({ name }) => [name, absoluteUrl(request, `${root}${name}/`).toString()]));
        return renderResult(reply, mediaType, { status: 200, body }, runtime.page);
      },
    },
  });
  scope.setNotFoundHandler(async () => {
    throw notFound();
  });
}
