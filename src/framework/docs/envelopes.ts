/** An action's documented body and answer inside the collection's envelope, as render/envelopes.ts wraps them. */
import type { FastifySchema } from 'fastify';
import type { JsonSchema } from '../../core/fields.js';
import type { Envelope } from '../declare/collection.js';
import { PAGE_KEYS } from '../render/envelopes.js';
import type { DocumentedAction } from './openapi.js';

/** A response schema (with its description and headers) with its body schema under `key`. */
function wrappedResponse(response: JsonSchema, wrap: (schema: JsonSchema) => JsonSchema): JsonSchema {
  const { description, headers, ...schema } = response;
  return { description, ...(headers !== undefined && { headers }), ...wrap(schema) };
}

/** An unpaginated list's schema (an array) as the page wrapPage makes of it. */
const wholeList = (records: JsonSchema): Record<string, JsonSchema> => ({
  results: records,
  count: { type: 'integer', minimum: 0, description: 'How many records the list holds.' },
  next: { type: 'null' },
  previous: { type: 'null' },
});

const objectWith = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: 'object', required: Object.keys(properties), properties });

/** An action's route schema as the envelope changes it: the body, and the success response. */
export function envelopedSchema(envelope: Envelope | undefined, action: DocumentedAction, schema: FastifySchema): FastifySchema {
  if (!envelope) return schema;
  const responses = { ...(schema.response as Record<string, JsonSchema>) };
  const success = Object.keys(responses).find((status) => status === '200' || status === '201');
  // An answer in a media type of its own (a custom action's `mediaType`) is sent as written, never wrapped.
  if (success && responses[success]!.content === undefined) {
    responses[success] = wrappedResponse(responses[success]!, (inner) => {
      const properties = inner.type === 'array' ? wholeList(inner) : (inner.properties as Record<string, JsonSchema> | undefined);
      // A custom list action may answer something other than a page: wrapped as wrapResult wraps it.
      if (action !== 'list' || properties?.results === undefined) return wrapped(envelope, inner);
      return objectWith({
        [envelope.list]: properties.results!,
        ...Object.fromEntries(PAGE_KEYS.filter((name) => envelope[name] !== undefined).map((name) => [envelope[name]!, properties[name]!])),
      });
    });
  }
  return { ...schema, ...(schema.body !== undefined && { body: wrapped(envelope, schema.body as JsonSchema) }), response: responses };
}

/**
 * A body's schema in the envelope, as wrapResult wraps the body: an array under `list`, anything
 * else under `record`.
 */
function wrapped(envelope: Envelope, schema: JsonSchema): JsonSchema {
  return objectWith({ [schema.type === 'array' ? envelope.list : envelope.record]: schema });
}
