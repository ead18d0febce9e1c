/**
 * A custom action as the pipeline runs it (views.ts): after the stages every action passes, its
 * record read through the scope and its object permissions (a detail action), its declared body
 * validated, then the app's handler, whose value is the answer's body; or, for a where action,
 * the collection's list narrowed by its conditions (list.ts).
 */
import { isJsonObject, stringifyJson } from '../../core/json.js';
import { isPending } from '../../core/maybe-promise.js';
import type { RecordId } from '../../store/read/records.js';
import { unscoped } from '../../store/conditions/table-scopes.js';
import type { Collection } from '../declare/collection.js';
import { declaredBody, standsFor, takesBody, whereFilters, type CustomAction, type DeclaredBody, type HandlerAction, type WhereAction } from '../declare/custom-action.js';
import { chosenFields } from '../declare/serializer.js';
import { notFound } from '../base/errors.js';
import { strongEtag } from '../stages/conditional.js';
import { list } from './list.js';
import { announceRecord, assertWritable, loadRecord, selectionOf, writeContext, written, type ActionRequest, type ActionResult, type ActionRoute } from './request.js';

/** The declared body's values: parsed, then checked as a whole, as a create's (400 `validation_failed`). */
async function validBody({ serializer, kept }: DeclaredBody, body: unknown, action: ActionRequest): Promise<unknown> {
  const sent = kept && isJsonObject(body) ? Object.fromEntries(Object.entries(body).filter(([key]) => kept.has(key))) : body;
  const refused = assertWritable(action, serializer, [sent], false);
  if (refused) await refused;
  const parsed = serializer.parseBody(sent, 'create', writeContext(action));
  const values = isPending(parsed) ? await parsed : parsed;
  const validated = serializer.validateObject(values, { existing: undefined, user: action.user, version: action.version });
  if (validated) await validated;
  return values;
}

async function run(collection: Collection, declared: HandlerAction, body: DeclaredBody | undefined, action: ActionRequest): Promise<ActionResult> {
  const { request, reply, user, parameters, version, credentials, links, fromPath } = action;
  const record = declared.detail ? (await loadRecord(action, collection.serializer)).row : undefined;
  // Judged after the record, as a collection's update judges its body after 404 and 403.
  const values = body ? await validBody(body, action.body, action) : action.body;
  const parent = collection.parent && (fromPath?.[collection.parent.field] as RecordId);
  // The handler is the app's own code: it reads and writes as the app, every row (as hooks do).
  const database = unscoped(action.reader.database);
  const result = await declared.handler({ user, parameters, version, request, reply, database, record, body: values, parent, credentials, links });
  if (declared.mediaType) return { status: reply.statusCode, body: String(result), type: `${declared.mediaType}; charset=utf-8` };
  if (declared.answers === 'record') return recordAnswer(action, collection, result);
  return { status: reply.statusCode, body: result, json: stringifyJson(result) };
}

/**
 * A handler's record (`answers: 'record'`) as retrieve answers it: by the collection's serializer
 * (what `record` is read with) narrowed by `fields=`, with its URL and ETag. A key is read anew
 * through the scope, as retrieve reads the path's.
 */
async function recordAnswer(action: ActionRequest, collection: Collection, answer: unknown): Promise<ActionResult> {
  const serializer = chosenFields(collection.serializer, action.parameters);
  if (!isJsonObject(answer) && typeof answer !== 'string' && typeof answer !== 'number') throw new Error(`${collection.name}: an action answering a record returned ${typeof answer}, neither a row nor a key.`);
  const row = isJsonObject(answer) ? answer : await action.reader.record(selectionOf(action, serializer), answer, action.scope);
  if (!row) throw notFound();
  return written(action.reply.statusCode, serializer.render(row, action), strongEtag);
}

/** The custom action `name` of `collection` as the pipeline runs it. */
export function customRoute(collection: Collection, name: string, declared: CustomAction): ActionRoute {
  if (declared.where !== undefined) return whereRoute(collection, name, declared);
  const body = declaredBody(collection.name, name, declared);
  return {
    action: standsFor(declared),
    custom: true,
    permissions: declared.permissions,
    mediaTypes: declared.mediaType ? [{ mediaType: declared.mediaType }] : collection.representations,
    takesBody: takesBody(declared),
    enveloped: declared.envelope ?? true,
    bodySerializer: body && (() => body.serializer),
    announce: declared.detail ? (reader, id, url, scopedTables) => announceRecord(reader, id, url, collection, scopedTables, collection.serializer) : undefined,
    run: (action) => run(collection, declared, body, action),
  };
}

/** A where action: the collection's list (the built-in action it stands for), narrowed by its conditions for the request. */
function whereRoute(collection: Collection, name: string, declared: WhereAction): ActionRoute {
  const where = whereFilters(collection.name, name, declared, collection.queryRules.fields);
  return {
    action: 'list',
    custom: true,
    permissions: declared.permissions,
    mediaTypes: collection.representations,
    takesBody: false,
    enveloped: true,
    run: async (action) => {
      const conditions = where(action);
      return list(action, isPending(conditions) ? await conditions : conditions);
    },
  };
}
