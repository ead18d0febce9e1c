/**
 * Custom actions (DRF's `@action`): a collection's own endpoints beside the built-in six, on one
 * record (`/<collection>/{id}/<name>/`) or on the list (`/<collection>/<name>/`), run through the
 * same stages: authentication, permissions (the action's own, or the collection's for the
 * built-in action of the same shape), throttling, negotiation, parsing, and for a detail action
 * the record read through the scope with its object permissions (404, then 403).
 */
import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { JsonSchema } from '../core/fields.js';
import type { Row } from '../core/rows.js';
import type { Database } from '../store/database.js';
import type { RecordId } from '../store/records.js';
import { requestReader } from '../store/reader.js';
import { loadRecord } from './actions.js';
import { authenticate } from './authentication/index.js';
import type { Collection } from './collection.js';
import type { RecordLinks } from './computed.js';
import { API_MEDIA_TYPES, negotiate, type MediaType } from './negotiation.js';
import { errorResponses, operationId } from './openapi.js';
import { parseJsonBody, queryParameters } from './parsers.js';
import { checkPermissions, type Action, type Permission } from './permissions.js';
import { renderResult } from './renderers.js';
import type { Endpoint, Method } from './router.js';
import { scopeRelated } from './related-scopes.js';
import type { RequestContext } from './scope.js';
import { detailPath, listPath, withPathParameters } from './collection-paths.js';
import { requestScope } from './nested.js';
import { documentedCredentials } from './documented-credentials.js';
import { requestCredentials, type Credentials } from './authentication/app-credentials.js';
import { permissionsFor, varyByRequester, type ApiRuntime } from './views.js';

export interface CustomActionContext extends RequestContext {
  readonly request: FastifyRequest;
  /** To set a status (`reply.status(201)`) or headers; the returned value is the body. */
  readonly reply: FastifyReply;
  readonly database: Database;
  /** A detail action's record, as the collection's `serializer` reads it (not one of `serializers`; undefined on the list). */
  readonly record: Row | undefined;
  /** The parsed JSON body (POST, PUT, PATCH); undefined otherwise. */
  readonly body: unknown;
  /** A nested collection's parent record id, from the path (found within the parent's scope); undefined otherwise. */
  readonly parent: RecordId | undefined;
  /** Checks a password and issues credentials; pass the context to a serializer's `render` to show what it issued (`computed.credential()`). */
  readonly credentials: Credentials;
  /** The records' own URLs, which `render` shows with the context (`computed.url()`). */
  readonly links?: RecordLinks;
}

export interface CustomAction {
  /** On one record (true) or on the list (false). */
  readonly detail: boolean;
  readonly method: Method;
  /**
   * The path segment it answers at, when it differs from its name: two actions (two names, two
   * operation ids) answering two methods at one path, as Conduit's `POST` and `DELETE …/follow`.
   */
  readonly path?: string;
  /** false: the action takes no body (Conduit's `POST …/favorite` sends none), so none is parsed or required. Default true. */
  readonly body?: boolean;
  /**
   * What it answers: JSON (the default: the returned value, or the browsable page for a browser),
   * or this media type, whose text the handler returns (`text/html`, say): escaping it is the handler's.
   */
  readonly mediaType?: string;
  /** Checks in place of the collection's for the built-in action of the same method and shape. */
  readonly permissions?: readonly Permission[];
  /** One line for the OpenAPI document and the browsable page. */
  readonly summary?: string;
  /** The JSON result's schema, for the OpenAPI document. */
  readonly response?: JsonSchema;
  handler(context: CustomActionContext): unknown;
}

const NAME = /^[a-z][a-z0-9_-]*$/;

/** The built-in action a custom one stands in for: whose permissions it takes by default, and its object checks. */
function builtIn({ detail, method }: CustomAction): Action {
  if (method === 'DELETE') return 'destroy';
  if (!detail) return method === 'GET' ? 'list' : 'create';
  return method === 'GET' ? 'retrieve' : 'partial_update';
}

const withBody: ReadonlySet<Method> = new Set(['POST', 'PUT', 'PATCH']);

export function assertCustomActions(collection: string, actions: Readonly<Record<string, CustomAction>>): void {
  for (const name of Object.keys(actions)) {
    const { path = name, detail } = actions[name]!;
    if (!NAME.test(name)) throw new Error(`${collection}: action name "${name}" must match ${NAME}.`);
    if (!NAME.test(path)) throw new Error(`${collection}: action path "${path}" must match ${NAME}.`);
    // The list's `bulk/` path is the router's, for bulk create.
    if (path === 'bulk' && !detail) throw new Error(`${collection}: "bulk" is the bulk create's path; name the action otherwise.`);
  }
}

export const customActionPath = (collection: Collection, name: string, action: CustomAction): string =>
  `${action.detail ? detailPath(collection) : listPath(collection)}${action.path ?? name}/`;

async function handleCustomAction(
  request: FastifyRequest,
  reply: FastifyReply,
  runtime: ApiRuntime,
  collection: Collection,
  declared: CustomAction,
): Promise<FastifyReply> {
  varyByRequester(reply, runtime);
  const reader = requestReader(runtime.database);
  const user = await authenticate(request, runtime.authenticators, runtime.sessionCookie, reader);
  request.user = user;
  const action = builtIn(declared);
  const permissions = permissionsFor(runtime, collection, action, declared.permissions);
  await checkPermissions(permissions, { user, action });
  await runtime.throttle.check(request, reply, user, collection.name);

  const parameters = queryParameters(request.url);
  const available = declared.mediaType ? [declared.mediaType as MediaType] : API_MEDIA_TYPES;
  const mediaType = negotiate(request, available, parameters.get('format'));
  const body = withBody.has(declared.method) && declared.body !== false ? parseJsonBody(request) : undefined;

  const { scope, fromPath } = await requestScope(collection, request, reader, { user, parameters });
  const related = scopeRelated(runtime.relatedScopes, { user, parameters });
  const credentials = requestCredentials(runtime.credentials, request, reply, reader.database);
  const id = collection.lookup.segmentIn(request.params);
  const record = declared.detail
    ? (await loadRecord({ request, reader, cursorKey: runtime.cursorKey, collection, action, permissions, user, parameters, id, scope, scopeRelated: related, credentials }, collection.serializer)).row
    : undefined;

  const parent = collection.parent && (fromPath?.[collection.parent.field] as RecordId);
  const result = await declared.handler({ user, parameters, request, reply, database: reader.database, record, body, parent, credentials, links: runtime.links });
  if (reply.sent) return reply;
  if (declared.mediaType) return reply.type(`${declared.mediaType}; charset=utf-8`).send(String(result));
  return renderResult(reply, mediaType, { status: reply.statusCode, body: result, json: JSON.stringify(result) }, runtime.page, collection);
}

function schemaOf(collection: Collection, name: string, declared: CustomAction): FastifySchema {
  const success = declared.mediaType
    ? { description: declared.summary ?? name, content: { [declared.mediaType]: { schema: { type: 'string' } } } }
    : { description: declared.summary ?? name, ...declared.response };
  return {
    tags: [collection.name],
    summary: declared.summary ?? `${name} (${declared.detail ? 'one record' : 'the list'})`,
    operationId: operationId(collection.name, name),
    ...(declared.detail && { params: collection.lookup.params }),
    response: { 200: success, ...errorResponses([400, 401, 403, ...(declared.detail ? [404] : []), 406, 429, 503]) },
  };
}

/** Each custom action's endpoint, by path (one per method). */
export function customActionEndpoints(runtime: ApiRuntime, collection: Collection): Map<string, Partial<Record<Method, Endpoint>>> {
  const byPath = new Map<string, Partial<Record<Method, Endpoint>>>();
  for (const [name, declared] of Object.entries(collection.customActions)) {
    const path = customActionPath(collection, name, declared);
    const endpoints = byPath.get(path) ?? {};
    if (endpoints[declared.method]) throw new Error(`${collection.name}: two actions answer ${declared.method} ${path}.`);
    endpoints[declared.method] = {
      handler: (request, reply) => handleCustomAction(request, reply, runtime, collection, declared),
      schema: withPathParameters(collection, {
        ...schemaOf(collection, name, declared),
        ...documentedCredentials(runtime, collection, builtIn(declared), declared.permissions),
      }),
    };
    byPath.set(path, endpoints);
  }
  return byPath;
}
