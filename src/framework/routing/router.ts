/**
 * The router: mounts collections and the authentication endpoints under a
 * prefix (a Fastify plugin). Paths end in a slash and the unslashed path answers
 * 308, unless the router spells them otherwise (api-style.ts); a known path with
 * another method answers 405 with `Allow`, anything else under the prefix a JSON 404.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { pathEnd } from '../base/style.js';
import { atVersion, type Collection } from '../declare/collection.js';
import type { VersionedRouteConfig } from '../docs/versions.js';
import { detailPath, filesPath, listPath, withPathParameters } from '../declare/paths.js';
import type { CustomAction, Method } from '../declare/custom-action.js';
import { customActionPath } from '../declare/paths.js';
import { envelopedSchema } from '../docs/envelopes.js';
import { customActionSchema } from '../docs/custom-actions.js';
import { builtInRoute } from '../actions/index.js';
import { customRoute } from '../actions/custom.js';
import { eventsRoute } from '../actions/events.js';
import { authenticate } from '../stages/authentication/index.js';
import { requestReader } from '../../store/read/reader.js';
import { notFound } from '../base/errors.js';
import { refuseOtherMethods } from './method-not-allowed.js';
import { actionSchema, ANONYMOUS, credentialsFor, downloadSchema, errorResponses, operationId } from '../docs/openapi.js';
import { API_REPRESENTATIONS, negotiate } from '../stages/negotiation.js';
import { absoluteLink, absoluteUrl } from '../base/hosts.js';
import { queryParameters } from '../base/query-string.js';
import { recordLinks } from '../render/record-links.js';
import { renderResult } from '../render/renderers.js';
import type { Action, Permission } from '../declare/permission-classes.js';
import { dispatch, hasFiles, permissionsFor, type ApiRuntime } from '../views.js';
import { downloadHandler } from './downloads.js';
import { DRAINED_LIMITS, dropRest, isMultipart } from '../stages/parsers/multipart.js';
import { uploadRulesFor } from '../stages/parsers/record-body.js';
import type { ActionRoute } from '../actions/request.js';
import type { Model } from '../declare/model.js';

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** A handler and its schema (documentation for the OpenAPI document). */
export interface Endpoint {
  readonly handler: Handler;
  readonly schema?: FastifySchema;
  /** Its schema in each version's document, where the app has versions. */
  readonly config?: VersionedRouteConfig;
}

/** Routes that only answer for the protocol (OPTIONS, 405, 308) stay out of the document. */
const hidden = { schema: { hide: true } } as const;

/** Body bytes are kept raw here (a multipart body unread) and parsed by the parsing stage, after authentication. */
export function keepRawBodies(instance: FastifyInstance, maxMultipartBytes?: number): void {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  // Never buffered: the parsing stage streams a multipart body's files to storage as they arrive.
  keepMultipartUnread(instance, maxMultipartBytes);
}

/**
 * A multipart body left unread by the content-type parsers, for its reader to stream; one answered
 * before its body was read (401, 403, 415) reads it first: a client still sending it would drop the
 * connection.
 */
export function keepMultipartUnread(instance: FastifyInstance, maxMultipartBytes?: number): void {
  instance.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
  // The callback form: a promise only for the multipart body it drops, not one per request.
  instance.addHook('onSend', (request, _reply, payload, done) => {
    if (request.raw.complete || !isMultipart(request.headers['content-type'])) return done(null, payload);
    dropRest(request.raw, DRAINED_LIMITS * (maxMultipartBytes ?? request.routeOptions.bodyLimit ?? 0)).then(() => done(null, payload), done);
  });
}

/**
 * The methods the app's own routes answer at `url` of the instance (they are registered before the
 * collections): a collection's path leaves them to the app, and the methods it does not serve
 * stay free for them.
 */
const appMethods = (instance: FastifyInstance, url: string): string[] =>
  instance.supportedMethods.filter((method) => instance.hasRoute({ url: `${instance.prefix}${url}`, method }));

/** `url`'s handlers, OPTIONS, and 405 for the other methods; `hide`: left out of the document (the same path's other spelling). */
function answer(instance: FastifyInstance, url: string, endpoints: Partial<Record<Method, Endpoint>>, hide: boolean): void {
  const methods = Object.keys(endpoints) as Method[];
  const apps = appMethods(instance, url);
  const clashing = methods.filter((method) => apps.includes(method));
  if (clashing.length > 0) throw new Error(`The app's routes answer ${clashing.join(', ')} ${instance.prefix}${url}, which a collection serves there.`);
  // Under a prefix, '/' must not also claim the unslashed prefix (that path redirects), nor '' the slashed one.
  const path = { url, prefixTrailingSlash: url === '' ? 'no-slash' : 'slash' } as const;
  for (const method of methods) instance.route({ ...path, method, ...endpoints[method]!, ...(hide && hidden) });
  const allow = refuseOtherMethods(instance, path, methods, [...apps, 'OPTIONS']);
  if (!apps.includes('OPTIONS')) {
    instance.route({
      ...path,
      ...hidden,
      method: 'OPTIONS',
      handler: async (_request, reply) => reply.status(204).header('Allow', allow).send(),
    });
  }
}

/** The methods the app's own routes leave free at `url`. */
function freeMethods(instance: FastifyInstance, url: string): string[] {
  const apps = appMethods(instance, url);
  return instance.supportedMethods.filter((method) => !apps.includes(method));
}

/** A 308 from `url` to the same path with its trailing slash added or taken off, the query kept. */
function redirect(instance: FastifyInstance, url: string, addSlash: boolean): void {
  const methods = freeMethods(instance, url);
  if (methods.length === 0) return;
  instance.route({
    ...hidden,
    method: methods,
    url,
    prefixTrailingSlash: url === '' ? 'no-slash' : 'slash',
    handler: async (request, reply) => {
      const query = request.url.indexOf('?');
      const path = request.url.slice(0, query === -1 ? undefined : query);
      return reply.redirect(`${addSlash ? `${path}/` : path.slice(0, -1)}${query === -1 ? '' : request.url.slice(query)}`, 308);
    },
  });
}

/**
 * A path whose actions a collection leaves out: 404 for every method, in both spellings (else the
 * list path, unslashed, would be taken for a detail path with an empty key and redirected).
 */
function absent(instance: FastifyInstance, url: string): void {
  for (const spelling of [url, url.slice(0, -1)]) {
    const methods = freeMethods(instance, spelling);
    if (methods.length === 0) continue;
    instance.route({
      ...hidden,
      method: methods,
      url: spelling,
      prefixTrailingSlash: spelling === '' ? 'no-slash' : 'slash',
      handler: async () => {
        throw notFound();
      },
    });
  }
}

/**
 * Registers `url` (written ending in `/`) with its handlers, as the instance's router spells paths
 * (api-style.ts): ending in `/`, with a 308 from the bare path (the default); bare, with a 308
 * from the slashed one; or both answering (the slashed one documented).
 */
export function resource(instance: FastifyInstance, url: string, endpoints: Partial<Record<Method, Endpoint>>): void {
  const bare = url.slice(0, -1);
  // A router at the server's root (prefix ''): its root is `/`, which has no other spelling.
  if (instance.prefix === '' && bare === '') return answer(instance, url, endpoints, false);
  const slash = instance.restfoldTrailingSlash ?? 'required';
  if (slash !== 'absent') answer(instance, url, endpoints, false);
  if (slash !== 'required') answer(instance, bare, endpoints, slash === 'optional');
  if (slash === 'required') redirect(instance, bare, true);
  if (slash === 'absent') redirect(instance, url, false);
}

/** What the document says of an action's credential: optional where its checks let anyone through. */
const documentedCredentials = (runtime: ApiRuntime, collection: Collection, action: Action, own?: readonly Permission[]): FastifySchema =>
  credentialsFor(
    runtime.authenticators.map(({ kind }) => kind),
    permissionsFor(runtime, collection, action, own),
    action,
  );

/**
 * An endpoint's schema, built from the collection as each version sees it (its serializers'
 * fields): a router mounted for one version (the path scheme's) documents that one; one serving
 * every version documents each in its own document (docs/versions.ts), the default's by its own.
 */
function documented(runtime: ApiRuntime, collection: Collection, schemaOf: (seen: Collection) => FastifySchema): Pick<Endpoint, 'schema' | 'config'> {
  const { versioning, version } = runtime;
  if (!versioning) return { schema: schemaOf(collection) };
  if (version !== undefined) return { schema: schemaOf(atVersion(collection, version)) };
  const schemas = Object.fromEntries(versioning.allowed.map((each) => [each, schemaOf(atVersion(collection, each))]));
  return { schema: schemas[versioning.default ?? versioning.allowed[0]!], config: { restfoldSchemas: schemas } };
}

/** A collection's custom action, and its route, built once. */
type CustomActionRoute = readonly [name: string, declared: CustomAction, route: ActionRoute];

/**
 * The models the collection's bodies are read by, whose upload rules it mounts with: its serializers'
 * (a version's serializer keeps its model), and its custom actions' declared bodies' (one serializer
 * whatever the request, made as the route is).
 */
function bodyModels(collection: Collection, custom: readonly CustomActionRoute[]): Model[] {
  const declared = custom.flatMap(([, , route]) => (route.bodySerializer ? [route.bodySerializer({ action: route.action, user: null }, collection).model] : []));
  return [...collection.serializers.map(({ model }) => model), ...declared];
}

/** Each custom action's endpoint, by path (one per method). */
function customActionEndpoints(runtime: ApiRuntime, collection: Collection, custom: readonly CustomActionRoute[]): Map<string, Partial<Record<Method, Endpoint>>> {
  const byPath = new Map<string, Partial<Record<Method, Endpoint>>>();
  for (const [name, declared, route] of custom) {
    const path = customActionPath(collection, name, declared);
    const endpoints = byPath.get(path) ?? {};
    if (endpoints[declared.method]) throw new Error(`${collection.name}: two actions answer ${declared.method} ${path}.`);
    const schema = customActionSchema(collection, name, declared, runtime.scopePlan.scopedTables);
    endpoints[declared.method] = {
      handler: (request, reply) => dispatch(request, reply, runtime, collection, route),
      schema: withPathParameters(collection, {
        ...(route.enveloped ? envelopedSchema(collection.envelope, route.action, schema) : schema),
        ...documentedCredentials(runtime, collection, route.action, declared.permissions),
      }),
    };
    byPath.set(path, endpoints);
  }
  return byPath;
}

const listActions: Partial<Record<Method, Action>> = { GET: 'list', POST: 'create' };
const detailActions: Partial<Record<Method, Action>> = {
  GET: 'retrieve',
  PUT: 'update',
  PATCH: 'partial_update',
  DELETE: 'destroy',
};

/** The endpoints of the built-in actions the collection serves, of `actions` (none: the path is not mounted). */
function endpointsFor(runtime: ApiRuntime, collection: Collection, actions: Partial<Record<Method, Action>>) {
  return Object.fromEntries(
    Object.entries(actions).filter(([, action]) => collection.builtInActions.has(action)).map(([method, action]): [string, Endpoint] => {
      const schemaOf = (seen: Collection): FastifySchema => {
        const { params, ...schema } = { ...envelopedSchema(collection.envelope, action, actionSchema(seen, action, runtime.scopePlan.scopedTables)), ...documentedCredentials(runtime, collection, action) };
        // A singleton's path names no record.
        return withPathParameters(collection, collection.singleton || params === undefined ? schema : { ...schema, params });
      };
      const route = builtInRoute(collection, action);
      return [method, { handler: (request, reply) => dispatch(request, reply, runtime, collection, route), ...documented(runtime, collection, schemaOf) }];
    }),
  );
}

/**
 * Bulk create on a path of its own, so the document can say that an array
 * answers an array while a single create answers a record. (The collection's
 * own POST takes an array too, as the contract has always allowed.)
 */
function bulkCreateEndpoint(runtime: ApiRuntime, collection: Collection): Endpoint {
  const route = builtInRoute(collection, 'create');
  return {
    handler: (request, reply) => dispatch(request, reply, runtime, collection, route),
    ...documented(runtime, collection, (seen) =>
      withPathParameters(collection, { ...envelopedSchema(collection.envelope, 'bulk_create', actionSchema(seen, 'bulk_create', runtime.scopePlan.scopedTables)), ...documentedCredentials(runtime, collection, 'create') }),
    ),
  };
}

/**
 * DELETE on the list path (bulkDelete), with the destroy action's permissions. One statement reads
 * no record, so permissions that check each record (hasObjectPermission) refuse it at start-up.
 */
function bulkDeleteEndpoint(runtime: ApiRuntime, collection: Collection): Endpoint {
  if (permissionsFor(runtime, collection, 'destroy').some((permission) => permission.hasObjectPermission)) {
    throw new Error(`${collection.name}: bulkDelete deletes in one statement, reading no record, so its destroy permissions cannot check each record (hasObjectPermission); limit what a request may delete with a scope.`);
  }
  const route = builtInRoute(collection, 'destroy');
  return {
    handler: (request, reply) => dispatch(request, reply, runtime, collection, route),
    ...documented(runtime, collection, (seen) => withPathParameters(collection, { ...actionSchema(seen, 'bulk_destroy', runtime.scopePlan.scopedTables), ...documentedCredentials(runtime, collection, 'destroy') })),
  };
}

/** A live collection's stream of changes (`/<name>/events/`, or its `live.path`), through the pipeline with the list's permissions. */
function eventsEndpoint(runtime: ApiRuntime, collection: Collection): Endpoint {
  if (!runtime.live) throw new Error(`${collection.name}: live changes need the app's live hub.`);
  // On the primary: a replica behind it could still hold a revoked credential.
  const route = eventsRoute(runtime.live, (request) => authenticate(request, runtime.authenticators, runtime.sessionCookie, requestReader(runtime.database), runtime.forcedUser));
  return {
    handler: (request, reply) => dispatch(request, reply, runtime, collection, route),
    ...documented(runtime, collection, (seen) => withPathParameters(collection, { ...actionSchema(seen, 'events', runtime.scopePlan.scopedTables), ...documentedCredentials(runtime, collection, 'list') })),
  };
}

/** The collections' endpoints, and with `root` the API root listing them. */
export function mountCollections(instance: FastifyInstance, runtime: ApiRuntime, collections: readonly Collection[], root = true): void {
  const names = new Set<string>();
  for (const collection of collections) {
    if (names.has(collection.name)) throw new Error(`Two collections are named "${collection.name}".`);
    names.add(collection.name);
    // By name: the routers mount copies that carry the app's pagination and envelope (api-style.ts).
    const { parent } = collection;
    if (parent && !collections.some(({ name }) => name === parent.collection.name)) {
      throw new Error(`${collection.name}: its parent "${parent.collection.name}" is not among the app's collections.`);
    }
    // A record's browsable page links to the collections nested under it.
    const nested = collections.filter(({ parent }) => parent?.collection.name === collection.name).map(({ name }) => name);
    const custom = (Object.entries(collection.customActions) as [string, CustomAction][]).map(([name, declared]): CustomActionRoute => [name, declared, customRoute(collection, name, declared)]);
    const uploadRules = runtime.files && uploadRulesFor(bodyModels(collection, custom), runtime.files.limits);
    const own = { ...runtime, page: { ...runtime.page, nested }, links: recordLinks(collection, collections), uploadRules };
    // A singleton's one record is at its list path.
    const paths = collection.singleton ? [[listPath(collection), detailActions] as const] : ([[listPath(collection), listActions], [detailPath(collection), detailActions]] as const);
    for (const [path, actions] of paths) {
      const endpoints = endpointsFor(own, collection, actions);
      if (actions === listActions && collection.bulkDelete) endpoints.DELETE = bulkDeleteEndpoint(own, collection);
      if (Object.keys(endpoints).length > 0) resource(instance, path, endpoints);
      else absent(instance, path);
    }
    if (own.files && hasFiles(collection)) {
      const kinds = own.authenticators.map(({ kind }) => kind);
      resource(instance, filesPath(collection), { GET: { handler: downloadHandler(own, own.files, collection), ...documented(own, collection, (seen) => withPathParameters(collection, downloadSchema(seen, kinds))) } });
    }
    if (collection.bulkCreateMax !== undefined) resource(instance, `${listPath(collection)}bulk/`, { POST: bulkCreateEndpoint(own, collection) });
    if (collection.live) resource(instance, `${listPath(collection)}${collection.live.path}/`, { GET: eventsEndpoint(own, collection) });
    for (const [path, endpoints] of customActionEndpoints(own, collection, custom)) resource(instance, path, endpoints);
  }
  if (!root) return;
  resource(instance, '/', {
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
        const mediaType = negotiate(request, API_REPRESENTATIONS, queryParameters(request.url).get('format'));
        const root = absoluteUrl(request).pathname.replace(/\/?$/, '/');
        // A nested collection has no URL of its own: its parent's records lead to it; nor has one without list or create.
        const topLevel = collections.filter(({ parent, builtInActions }) => !parent && (builtInActions.has('list') || builtInActions.has('create')));
        const body = Object.fromEntries(topLevel.map(({ name }) => [name, absoluteLink(request, `${root}${name}${pathEnd(request)}`)]));
        return renderResult(reply, mediaType, { status: 200, body }, runtime.page);
      },
    },
  });
  // At the server's root (prefix '') the app's own not-found handler is this one (renderers.ts).
  if (instance.prefix === '') return;
  instance.setNotFoundHandler(async () => {
    throw notFound();
  });
}
