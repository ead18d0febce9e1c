/**
 * Custom actions (DRF's `@action`): a collection's own endpoints beside the built-in six, on one
 * record (`/<collection>/{id}/<name>/`) or on the list (`/<collection>/<name>/`). Each stands for the
 * built-in action of its shape, whose stages it passes through (views.ts): authentication, its
 * permissions (its own, or the collection's for that action), throttling, negotiation, parsing and
 * the collection's envelope, and for a detail action the record read through the scope with its
 * object permissions (404, then 403). Only what it runs is the app's (actions/custom.ts): its
 * handler, or, for a list GET action with `where`, the list itself narrowed by those conditions.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Field, JsonSchema } from '../../core/fields.js';
import type { Filter } from '../../core/list-query.js';
import { isPending, type MaybePromise } from '../../core/maybe-promise.js';
import { ConditionError, isPlainObject, parseConditions } from '../../core/conditions.js';
import type { Row } from '../../core/rows.js';
import type { Database } from '../../store/connection/database.js';
import type { RecordId } from '../../store/read/records.js';
import type { RecordLinks } from './computed.js';
import type { Credentials } from './credentials.js';
import type { Model } from './model.js';
import type { Action, Permission } from './permission-classes.js';
import { describe, type RequestContext } from './scope.js';
import { Serializer } from './serializer.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * What a custom action's handler gets: the request's user and parameters, the record (detail actions), the
 * parsed body, the database and Fastify's request and reply.
 */
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

/** What every custom action may declare. */
interface ActionDeclaration {
  /**
   * The path segment it answers at, when it differs from its name: two actions (two names, two
   * operation ids) answering two methods at one path, as Conduit's `POST` and `DELETE …/follow`.
   */
  readonly path?: string;
  /** Checks in place of the collection's for the built-in action of the same method and shape. */
  readonly permissions?: readonly Permission[];
  /** One line for the OpenAPI document and the browsable page. */
  readonly summary?: string;
}

/** A custom action the app's handler answers. */
export interface HandlerAction extends ActionDeclaration {
  /** On one record (true) or on the list (false). */
  readonly detail: boolean;
  readonly method: Method;
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
  /**
   * Whether the collection's envelope (if it has one) wraps the body and the answer as it does the
   * built-in action's of the same shape (default true); false for an action that takes or answers
   * something other than the collection's records.
   */
  readonly envelope?: boolean;
  /** The JSON result's schema, for the OpenAPI document. */
  readonly response?: JsonSchema;
  /**
   * `record`: the handler answers one of the collection's records, and the action answers it as
   * retrieve does (`fields=` and `omit=`, the records' `url`, its ETag, its envelope): it returns
   * a row of the collection's model, as `record` is (the one given, or changed:
   * `{ ...record, starred: true }`), or a record's key, read anew through the scope (404 if none).
   */
  readonly answers?: 'record';
  readonly where?: never;
  handler(context: CustomActionContext): unknown;
}

/**
 * Conditions in the condition language, as scopes and `recordStore` take them
 * (`{ status: 'active', stock__lt: 5, owner_id: [1, 2] }`: a field and optionally `__` and one of its
 * lookups, each value of the field's type, an array alone meaning `in` and `null` "is null"), or a function of the request
 * answering them, for conditions that depend on the caller (`({ user }) => ({ owner_id: user?.id ?? null })`).
 */
export type ActionWhere = Row | ((context: RequestContext) => Row | Promise<Row>);

/**
 * A list action answering a page of the collection's own records (DRF's `@action(detail=False)`
 * that returns `paginate_queryset(filter_queryset(...))`): exactly what the collection's list
 * answers (its filters, search, ordering, `fields`, pagination, counts, ETag, envelope, browsable
 * page), narrowed by `where`, within the collection's scope. No handler: the list answers.
 */
export interface WhereAction extends ActionDeclaration {
  readonly detail: false;
  readonly method: 'GET';
  /** What the action's records meet besides the list's own filters and the scope. */
  readonly where: ActionWhere;
  readonly handler?: never;
  readonly body?: never;
  readonly unknownFields?: never;
  readonly mediaType?: never;
  readonly envelope?: never;
  readonly response?: never;
  readonly answers?: never;
}

/**
 * A collection's own endpoint: a handler's (any shape and method), or a filtered page of its list
 * (`where`, on the list with GET only).
 */
export type CustomAction = HandlerAction | WhereAction;

/** What a custom action's body carries: a serializer's writable fields (as its create takes them), or fields by name. */
export type ActionBody = Serializer | Readonly<Record<string, Field>>;

export const PATH_SEGMENT = /^[a-z][a-z0-9_-]*$/;

/** The built-in action a custom one stands in for: whose permissions it takes by default, and its object checks. */
export function standsFor({ detail, method }: CustomAction): Action {
  if (method === 'DELETE') return 'destroy';
  if (!detail) return method === 'GET' ? 'list' : 'create';
  return method === 'GET' ? 'retrieve' : 'partial_update';
}

const withBody: ReadonlySet<Method> = new Set(['POST', 'PUT', 'PATCH']);

/** Whether the action reads a body: it answers a method that has one, and does not declare `body: false`. */
export const takesBody = (action: CustomAction): boolean => withBody.has(action.method) && action.body !== false;

/** Refuses, at start-up, actions that could never answer: a bad name or path, a body that cannot apply, a `where` that is no conditions over `fields`. */
export function assertCustomActions(collection: string, actions: Readonly<Record<string, CustomAction>>, fields: Readonly<Record<string, Field>>): void {
  for (const name of Object.keys(actions)) {
    const action = actions[name]!;
    const { path = name, detail } = action;
    if (!PATH_SEGMENT.test(name)) throw new Error(`${collection}: action name "${name}" must match ${PATH_SEGMENT}.`);
    if (!PATH_SEGMENT.test(path)) throw new Error(`${collection}: action path "${path}" must match ${PATH_SEGMENT}.`);
    // The list's `bulk/` path is the router's, for bulk create.
    if (path === 'bulk' && !detail) throw new Error(`${collection}: "bulk" is the bulk create's path; name the action otherwise.`);
    if (action.where !== undefined) whereFilters(collection, name, action, fields);
    else if (typeof action.handler !== 'function') throw new Error(`${collection}: action "${name}" needs a handler, or a where (a list GET action answering a page of the list).`);
    if (action.answers !== undefined && action.answers !== 'record') throw new Error(`${collection}: action "${name}": answers must be 'record'.`);
    if (action.answers !== undefined && action.mediaType !== undefined) throw new Error(`${collection}: action "${name}" answers a record, rendered as retrieve renders it: it cannot also answer ${action.mediaType}.`);
    declaredBody(collection, name, action);
  }
}

/** What a where action's declaration may not say: it answers the list's page, as the list would. */
const notForWhere = ['handler', 'body', 'unknownFields', 'mediaType', 'envelope', 'response', 'answers'] as const;

/**
 * A where action's conditions for a request, as filters over `fields` (the collection's). Checked
 * here once when they are fixed (thrown at start-up); a function's answer is checked at each
 * request, where a bad one is the app's bug: thrown, a 500 whose log says what it answered.
 */
export function whereFilters(collection: string, name: string, action: WhereAction, fields: Readonly<Record<string, Field>>): (context: RequestContext) => MaybePromise<readonly Filter[]> {
  const declaration = `${collection}: action "${name}"`;
  if (action.detail !== false || action.method !== 'GET') throw new Error(`${declaration}: only a list GET action (detail: false, method: 'GET') answers a page of the list, so only it may have a where.`);
  const refused = notForWhere.filter((key) => action[key] !== undefined);
  if (refused.length > 0) throw new Error(`${declaration}: has a where, so it answers the list's page itself; ${refused.join(', ')} cannot apply.`);
  const { where } = action;
  if (typeof where !== 'function') {
    const filters = conditionsOver(`${declaration}: where`, fields, where);
    return () => filters;
  }
  const checked = (answer: unknown): readonly Filter[] => conditionsOver(`${declaration}: its where answered`, fields, answer);
  return (context) => {
    const answer = where(context);
    return isPending(answer) ? Promise.resolve(answer).then(checked) : checked(answer);
  };
}

/** `where` as filters (the condition language, core/conditions.ts); anything else (no object, an undefined value, an unknown field or lookup, a value not of its field's type) thrown, said as `what`. */
function conditionsOver(what: string, fields: Readonly<Record<string, Field>>, where: unknown): readonly Filter[] {
  if (!isPlainObject(where)) throw new Error(`${what} ${describe(where)}, not conditions (an object of field or field__lookup → value).`);
  try {
    return parseConditions({ fields }, where, 'code');
  } catch (error) {
    if (error instanceof ConditionError) throw new Error(`${what}: ${error.message}`);
    throw error;
  }
}

/** A declared body, ready to validate: its serializer and, with `unknownFields: 'ignore'`, the names kept (the rest left out, not refused). */
export interface DeclaredBody {
  readonly serializer: Serializer;
  readonly kept?: ReadonlySet<string>;
}

/** The action's declared body (undefined: none, or any JSON); throws for a declaration that could never apply. */
export function declaredBody(collection: string, name: string, action: CustomAction): DeclaredBody | undefined {
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
