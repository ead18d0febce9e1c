/** What the OpenAPI document says of a custom action: its path's parameters, body, answers and errors (a where action's: its list's). */
import { BODY_MEDIA_TYPES } from '../stages/parsers.js';
import type { FastifySchema } from 'fastify';
import type { Collection } from '../declare/collection.js';
import { declaredBody, takesBody, type CustomAction } from '../declare/custom-action.js';
import { actionBodySchema, actionSchema, errorResponses, operationId } from './openapi.js';

/** `scoped`: the app's scoped tables, as actionSchema takes them. */
export function customActionSchema(collection: Collection, name: string, declared: CustomAction, scoped: ReadonlySet<string>): FastifySchema {
  const id = operationId(collection.name, name);
  // A where action answers the list's page: the list's parameters, headers and answers, under its own name.
  if (declared.where !== undefined) return { ...actionSchema(collection, 'list', scoped), summary: declared.summary ?? `${name} (a page of the list)`, operationId: id };
  const success = declared.mediaType
    ? { description: declared.summary ?? name, content: { [declared.mediaType]: { schema: { type: 'string' } } } }
    : { description: declared.summary ?? name, ...declared.response };
  const withBody = takesBody(declared);
  const declaredAs = declaredBody(collection.name, name, declared);
  const body = declaredAs
    ? actionBodySchema(declaredAs.serializer, `${id[0]!.toUpperCase()}${id.slice(1)}Body`, declaredAs.kept !== undefined)
    : { description: 'Any JSON, which the action reads.' };
  return {
    tags: [collection.name],
    summary: declared.summary ?? `${name} (${declared.detail ? 'one record' : 'the list'})`,
    operationId: id,
    ...(declared.detail && { params: collection.recordKey.params }),
    ...(withBody && { body, consumes: [...BODY_MEDIA_TYPES] }),
    response: { 200: success, ...errorResponses([400, 401, 403, ...(declared.detail ? [404] : []), 406, ...(withBody ? [413, 415] : []), 429, 503]) },
  };
}
