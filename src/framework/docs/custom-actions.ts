/** What the OpenAPI document says of a custom action: its path's parameters, body, answers and errors. */
import type { FastifySchema } from 'fastify';
import type { Collection } from '../declare/collection.js';
import { declaredBody, takesBody, type CustomAction } from '../declare/custom-action.js';
import { actionBodySchema, errorResponses, operationId } from './openapi.js';

export function customActionSchema(collection: Collection, name: string, declared: CustomAction): FastifySchema {
  const success = declared.mediaType
    ? { description: declared.summary ?? name, content: { [declared.mediaType]: { schema: { type: 'string' } } } }
    : { description: declared.summary ?? name, ...declared.response };
  const id = operationId(collection.name, name);
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
    ...(withBody && { body }),
    response: { 200: success, ...errorResponses([400, 401, 403, ...(declared.detail ? [404] : []), 406, ...(withBody ? [413, 415] : []), 429, 503]) },
  };
}
