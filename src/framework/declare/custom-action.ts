/**
 * Custom actions (DRF's `@action`): a collection's own endpoints beside the built-in six, on one
 * record (`/<collection>/{id}/<name>/`) or on the list (`/<collection>/<name>/`), run through the
 * same stages: authentication, permissions (the action's own, or the collection's for the
 * built-in action of the same shape), throttling, negotiation, parsing, and for a detail action
 * the record read through the scope with its object permissions (404, then 403).
 */
import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Field, JsonSchema } from '../../core/fields.js';
import { stringifyJson } from '../../core/json.js';
import { isPending } from '../../core/maybe-promise.js';
import type { Row } from '../../core/rows.js';
import type { Database } from '../../store/database.js';
import type { RecordId } from '../../store/records.js';
import { requestReader } from '../../store/reader.js';
import { unrestricted } from '../../store/visibility.js';
import { loadRecord, writeContext } from '../actions/index.js';
import { authenticate } from '../stages/authentication/index.js';
import type { Collection } from './collection.js';
import type { RecordLinks } from './computed.js';
import { API_MEDIA_TYPES, negotiate, type MediaType } from '../stages/negotiation.js';
import { actionBodySchema, errorResponses, operationId } from '../docs/openapi.js';
import { parseJsonBody, queryParameters } from '../stages/parsers.js';
import { checkPermissions, type Action, type Permission } from './permissions.js';
import { renderResult } from '../render/renderers.js';
import type { Endpoint, Method } from '../routing/router.js';
import { Serializer } from './serializer.js';
import type { Model } from './model.js';
import type { AuthUser } from '../base/auth-user.js';
import type { RequestContext } from './scope.js';
import { detailPath, listPath, withPathParameters } from './paths.js';
import { requestScope } from './parent.js';
import { documentedCredentials } from '../docs/credentials.js';
import { requestCredentials } from '../actions/credentials.js';
import type { Credentials } from './credentials.js';
import { permissionsFor, varyByRequester, type ApiRuntime } from '../views.js';

export interface CustomActionContext extends RequestContext {
  readonly request: FastifyRequest;
  /** To set a status (`reply.status(201)`) or headers; the returned value is the body. */
  readonly reply: FastifyReply;
  readonly database: Database;
  /** A detail action's record, as the collection's `serializer` reads it (not one of `serializers`; undefined on the list). */
  readonly record: Row | undefined;
  /**
   * The body (POST, PUT, PATCH; undefined otherwise): with a declared `body`, its values, validated
   * (field → parsed value, defaults filled in, as a create would store them); without, the JSON as sent.
   */
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
  /**
   * A POST, PUT or PATCH action's body. `false`: none (Conduit's `POST …/favorite` sends none), so
   * none is parsed or required. A serializer, or fields by the names clients send
   * (`{ channel: fields.string({ maxLength: 50 }) }`): validated as a collection's create body is
   * (400 `validation_failed` by field, unknown fields included) and handed to the handler parsed.
   * Left out (or `true`): any JSON, handed over as it is.
   */
  readonly body?: boolean | ActionBody;
  /** A declared body's fields it does not know: refused (400 "Unknown field.", the default) or left out of `body`. */
  readonly unknownFields?: 'refuse' | 'ignore';
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

/** What a custom action's body carries: a serializer's writable fields (as its create takes them), or fields by name. */
export type ActionBody = Serializer | Readonly<Record<string, Field>>;

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
    declaredBody(collection, name, actions[name]!);
  }
}

/** A declared body, ready to validate: its serializer and, with `unknownFields: 'ignore'`, the names kept (the rest left out, not refused). */
interface DeclaredBody {
  readonly serializer: Serializer;
  readonly kept?: ReadonlySet<string>;
}

/** The action's declared body (undefined: none, or any JSON); throws for a declaration that could never apply. */
function declaredBody(collection: string, name: string, action: CustomAction): DeclaredBody | undefined {
  const { body, unknownFields } = action;
  const declared = typeof body === 'object' ? body : undefined;
  if (declared && !withBody.has(action.method)) throw new Error(`${collection}: action "${name}" answers ${action.method}, which takes no body.`);
  if (unknownFields !== undefined && !declared) throw new Error(`${collection}: action "${name}" has unknownFields but declares no body.`);
  if (!declared) return undefined;
  const serializer = declared instanceof Serializer ? declared : fieldsSerializer(`${collection}: action "${name}"`, declared);
  if (unknownFields !== 'ignore') return { serializer };
  return { serializer, kept: new Set(serializer.fields.map((field) => serializer.shown(field))) };
}

/** Fields by name as a serializer's: the fields of a model that is never stored, which is what parsing and documenting them needs. */
function fieldsSerializer(declaration: string, fields: Readonly<Record<string, Field>>): Serializer {
  // A record's `id` is never taken from a body (see Serializer): a field of that name would be ignored.
  if (Object.hasOwn(fields, 'id')) throw new Error(`${declaration} declares a body field "id", which a body cannot set; name it otherwise.`);
  const model: Model = { table: declaration, fields, facts: {} };
  return new Serializer(model, { fields: Object.keys(fields) });
}

/** The declared body's values: parsed, then checked as a whole, as a create's (400 `validation_failed`). */
async function validBody({ serializer, kept }: DeclaredBody, body: unknown, user: AuthUser | null): Promise<unknown> {
  const sent = kept && typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.fromEntries(Object.entries(body).filter(([key]) => kept.has(key))) : body;
  const parsed = serializer.parseBody(sent, 'create', writeContext({ user }));
  const values = isPending(parsed) ? await parsed : parsed;
  const validated = serializer.validateObject(values, { existing: undefined, user });
  if (validated) await validated;
  return values;
}

export const customActionPath = (collection: Collection, name: string, action: CustomAction): string =>
  `${action.detail ? detailPath(collection) : listPath(collection)}${action.path ?? name}/`;

async function handleCustomAction(
  request: FastifyRequest,
  reply: FastifyReply,
  runtime: ApiRuntime,
  collection: Collection,
  declared: CustomAction,
  declaredBody: DeclaredBody | undefined,
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

  const { scope, fromPath } = await requestScope(runtime.visibility, collection, request, reader, { user, parameters });
  // The handler is the app's own code: it reads and writes as the app, every row (as hooks do).
  const database = unrestricted(reader.database);
  const credentials = requestCredentials(runtime.credentials, request, reply, database);
  const id = collection.lookup.segmentIn(request.params);
  const record = declared.detail
    ? (await loadRecord({ request, reader, cursorKey: runtime.cursorKey, collection, action, permissions, user, parameters, id, scope, credentials }, collection.serializer)).row
    : undefined;

  const parent = collection.parent && (fromPath?.[collection.parent.field] as RecordId);
  // Judged after the record, as a collection's update judges its body after 404 and 403.
  const values = declaredBody ? await validBody(declaredBody, body, user) : body;
  const result = await declared.handler({ user, parameters, request, reply, database, record, body: values, parent, credentials, links: runtime.links });
  if (reply.sent) return reply;
  if (declared.mediaType) return reply.type(`${declared.mediaType}; charset=utf-8`).send(String(result));
  return renderResult(reply, mediaType, { status: reply.statusCode, body: result, json: stringifyJson(result) }, runtime.page, collection);
}

function schemaOf(collection: Collection, name: string, declared: CustomAction, declaredBody: DeclaredBody | undefined): FastifySchema {
  const success = declared.mediaType
    ? { description: declared.summary ?? name, content: { [declared.mediaType]: { schema: { type: 'string' } } } }
    : { description: declared.summary ?? name, ...declared.response };
  const id = operationId(collection.name, name);
  const takesBody = withBody.has(declared.method) && declared.body !== false;
  const body = declaredBody
    ? actionBodySchema(declaredBody.serializer, `${id[0]!.toUpperCase()}${id.slice(1)}Body`, declaredBody.kept !== undefined)
    : { description: 'Any JSON, which the action reads.' };
  return {
    tags: [collection.name],
    summary: declared.summary ?? `${name} (${declared.detail ? 'one record' : 'the list'})`,
    operationId: id,
    ...(declared.detail && { params: collection.lookup.params }),
    ...(takesBody && { body }),
    response: { 200: success, ...errorResponses([400, 401, 403, ...(declared.detail ? [404] : []), 406, ...(takesBody ? [413, 415] : []), 429, 503]) },
  };
}

/** Each custom action's endpoint, by path (one per method). */
export function customActionEndpoints(runtime: ApiRuntime, collection: Collection): Map<string, Partial<Record<Method, Endpoint>>> {
  const byPath = new Map<string, Partial<Record<Method, Endpoint>>>();
  for (const [name, declared] of Object.entries(collection.customActions)) {
    const path = customActionPath(collection, name, declared);
    const endpoints = byPath.get(path) ?? {};
    if (endpoints[declared.method]) throw new Error(`${collection.name}: two actions answer ${declared.method} ${path}.`);
    const body = declaredBody(collection.name, name, declared);
    endpoints[declared.method] = {
      handler: (request, reply) => handleCustomAction(request, reply, runtime, collection, declared, body),
      schema: withPathParameters(collection, {
        ...schemaOf(collection, name, declared, body),
        ...documentedCredentials(runtime, collection, builtIn(declared), declared.permissions),
      }),
    };
    byPath.set(path, endpoints);
  }
  return byPath;
}
