/**
 * Envelopes: how a collection's lists, records and request bodies are wrapped, when an API must
 * match one that exists (Conduit's `{"articles": [...], "articlesCount": n}` and `{"article": {...}}`,
 * in and out). Applied around the actions, never inside them: the actions and their ETags see the
 * bare records (an envelope is a fixed function of its record, so the tag still names one body).
 */
import type { FastifySchema } from 'fastify';
import type { JsonSchema } from '../../core/fields.js';
import { stringifyJson } from '../../core/json.js';
import type { ActionResult } from '../actions/index.js';
import type { Envelope } from '../declare/collection.js';
import { validationFailed } from '../base/errors.js';
import type { DocumentedAction } from '../docs/openapi.js';
import type { Action } from '../declare/permissions.js';


/** What the page of a list says, by its key in the default style. */
const PAGE_KEYS = ['count', 'next', 'previous'] as const;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The body inside its envelope: a record under `record`, or several (a bulk create) under `list`.
 * A body without it is a 400 naming the key, as a missing field is.
 */
export function unwrapBody(envelope: Envelope | undefined, body: unknown): unknown {
  if (!envelope || body === undefined) return body;
  if (isObject(body) && Array.isArray(body[envelope.list])) return body[envelope.list];
  if (isObject(body) && Object.hasOwn(body, envelope.record)) return body[envelope.record];
  throw validationFailed({ [envelope.record]: ['This field is required.'] });
}

/**
 * A list's page `{count, next, previous, results}` → the envelope's keys; an unpaginated list (an
 * array) is one page of all its records, with no links.
 */
function wrapPage(envelope: Envelope, list: unknown): Record<string, unknown> {
  const page = Array.isArray(list) ? { count: list.length, next: null, previous: null, results: list } : (list as Record<string, unknown>);
  const body: Record<string, unknown> = { [envelope.list]: page.results };
  for (const key of PAGE_KEYS) if (envelope[key] !== undefined) body[envelope[key]] = page[key];
  return body;
}

/** The action's result in the envelope: a list's page re-keyed, a record (or a bulk create's records) wrapped. */
export function wrapResult(envelope: Envelope | undefined, action: Action, result: ActionResult): ActionResult {
  if (!envelope || result.body === undefined) return result;
  const body =
    action === 'list'
      ? wrapPage(envelope, result.body)
      : { [Array.isArray(result.body) ? envelope.list : envelope.record]: result.body };
  return { ...result, body, json: stringifyJson(body) };
}

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
  if (success) {
    responses[success] = wrappedResponse(responses[success]!, (inner) => {
      if (action !== 'list') return wrapped(envelope, inner);
      const properties = inner.type === 'array' ? wholeList(inner) : (inner.properties as Record<string, JsonSchema>);
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
 * else under `record`; each of a `oneOf` of the two (a create that also takes an array) on its own.
 */
function wrapped(envelope: Envelope, schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.oneOf)) return { oneOf: (schema.oneOf as JsonSchema[]).map((one) => wrapped(envelope, one)) };
  return objectWith({ [schema.type === 'array' ? envelope.list : envelope.record]: schema });
}
