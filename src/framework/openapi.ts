/**
 * JSON Schemas built from the same declarations that drive validation:
 * route schemas for every action (documentation only: bodies are written
 * by JSON.stringify), and the OpenAPI 3.1 document gathered from them.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema } from 'fastify';
import type { AuthKind } from './authentication/index.js';
import type { Collection } from './collection.js';
import type { JsonSchema } from '../core/fields.js';
import type { Action } from './permissions.js';
import { RESERVED_PARAMETERS } from './query.js';
import type { Serializer, WriteMode } from './serializer.js';

export const ERROR_SCHEMA_ID = 'ErrorEnvelope';
const errorRef = { $ref: `${ERROR_SCHEMA_ID}#` };

export const errorEnvelopeSchema: JsonSchema = {
  $id: ERROR_SCHEMA_ID,
  title: ERROR_SCHEMA_ID,
  type: 'object',
  required: ['error', 'code'],
  properties: {
    error: { type: 'string', description: 'A short summary of the failure.' },
    code: { type: 'string', description: 'A machine-readable code, e.g. validation_failed.' },
    details: {
      type: 'object',
      description: 'Field (or parameter) → messages; present for validation and parse failures.',
      additionalProperties: { type: 'array', items: { type: 'string' } },
    },
    request_id: { type: 'string', description: 'Present on 500s: the id to find the cause in the log.' },
  },
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Validation or parse failure',
  401: 'Not authenticated, or a bad credential',
  403: 'Permission denied',
  404: 'Not found',
  406: 'Not acceptable',
  412: 'Precondition failed: the record changed since the If-Match ETag',
  413: 'Payload too large',
  414: 'URI too long',
  415: 'Unsupported media type',
  429: 'Throttled',
  500: 'Server error',
  503: 'Database unavailable',
};

/** The error envelope for each status a route can answer with. */
export function errorResponses(statuses: readonly number[]): Record<string, JsonSchema> {
  return Object.fromEntries(
    [...statuses, 414, 500].map((status) => [String(status), { description: ERROR_DESCRIPTIONS[status], ...errorRef }]),
  );
}

/** Plain-text error bodies (for simple routes), one per status. */
export function textErrorResponses(statuses: readonly number[]): Record<string, JsonSchema> {
  return Object.fromEntries(
    [...statuses, 500].map((status) => [
      String(status),
      { description: ERROR_DESCRIPTIONS[status], content: { 'text/plain': { schema: { type: 'string' } } } },
    ]),
  );
}

/** The JSON a record renders as. */
export function recordSchema(serializer: Serializer): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const name of serializer.fields) {
    const nested = serializer.nested[name];
    const field = serializer.model.fields[name];
    const computed = serializer.computed[name];
    if (serializer.hidden.has(name)) properties[name] = { type: 'null', description: 'Hidden: always null.' };
    else if (computed) properties[name] = { ...computed.schema, readOnly: true };
    else if (nested) properties[name] = { anyOf: [recordSchema(nested.serializer), { type: 'null' }] };
    else properties[name] = { ...field!.schema, ...(serializer.readOnly.has(name) ? { readOnly: true } : {}) };
  }
  // No `required`: `fields` and `omit` may leave any of them out.
  return { type: 'object', properties };
}

/** A create (POST), update (PUT) or partial update (PATCH) body. */
export function inputSchema(serializer: Serializer, mode: WriteMode): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const name of serializer.writable) {
    const field = serializer.model.fields[name]!;
    properties[name] = serializer.hidden.has(name) ? { ...field.schema, writeOnly: true } : field.schema;
    const needed = field.required === 'always' ? mode !== 'partial_update' : field.required === 'create' && mode === 'create';
    if (needed) required.push(name);
  }
  for (const name of serializer.readOnly) {
    if (serializer.fields.includes(name)) properties[name] = { description: 'Read-only: ignored when sent.' };
  }
  if (mode !== 'create') Object.assign(properties, serializer.model.rules?.updates?.inputs);
  return { type: 'object', properties, required, additionalProperties: false };
}

function listQuerySchema(collection: Collection): JsonSchema {
  const { filters, ordering, fields, maxPageSize, pageSize } = collection.queryRules;
  const properties: Record<string, JsonSchema> = {
    page: { type: 'integer', minimum: 1, default: 1, description: 'Page number; past the last page is 404.' },
    page_size: { type: 'integer', minimum: 1, default: pageSize, description: `Clamped to ${maxPageSize}.` },
    search: {
      type: 'string',
      description: `Whitespace-separated terms, each found case-insensitively in one of: ${collection.serializer.search.join(', ') || '(none)'}.`,
    },
    ordering: {
      type: 'string',
      description: `Comma-separated, "-" for descending. Allowed: ${ordering.join(', ') || '(none)'}. Ties by id.`,
    },
    format: { type: 'string', enum: ['json'], description: 'Force JSON (e.g. in a browser).' },
    ...fieldSelectionParameters(collection),
  };
  if (collection.pagination === 'cursor') {
    delete properties.page;
    properties.cursor = { type: 'string', description: 'Opaque, from a previous page\'s next or previous link.' };
  }
  for (const [name, lookups] of filters) {
    const schema = fields[name]!.schema;
    for (const lookup of lookups) {
      const parameter = lookup === 'exact' ? name : `${name}__${lookup}`;
      if ((RESERVED_PARAMETERS as readonly string[]).includes(parameter)) continue;
      properties[parameter] =
        lookup === 'isnull'
          ? { type: 'boolean' }
          : lookup === 'in' || lookup === 'range'
            ? { type: 'string', description: lookup === 'in' ? 'Comma-separated values.' : 'Two comma-separated bounds, inclusive.' }
            : { type: schema.type === 'integer' ? 'integer' : schema.type, description: `${name} ${lookup}` };
    }
  }
  return { type: 'object', properties };
}

function fieldSelectionParameters(collection: Collection): Record<string, JsonSchema> {
  const names = collection.serializer.fields.join(', ');
  return {
    fields: { type: 'string', description: `Comma-separated fields to show (nested with dots, e.g. author.username). Of: ${names}.` },
    omit: { type: 'string', description: `Comma-separated fields to leave out. Of: ${names}.` },
  };
}

const notModifiedResponse = { description: 'Not modified (If-None-Match matched the ETag)', type: 'null' };

export const idParams: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'integer', minimum: 1, description: 'A positive 64-bit integer.' } },
  required: ['id'],
};

const SUMMARIES: Record<Action, string> = {
  list: 'List',
  retrieve: 'Retrieve',
  create: 'Create',
  update: 'Replace',
  partial_update: 'Update part of',
  destroy: 'Delete',
};

/** The route schema of one collection action. */
export function actionSchema(collection: Collection, action: Action): FastifySchema {
  const record = recordSchema(collection.serializer);
  const base = { tags: [collection.name], summary: `${SUMMARIES[action]} ${collection.name}`, operationId: `${collection.name}_${action}` };
  const reads = [400, 401, 403, 404, 406, 429, 503];
  const writes = [...reads, 413, 415];
  switch (action) {
    case 'list':
      return {
        ...base,
        querystring: listQuerySchema(collection),
        response: {
          200: {
            description: 'A page of records',
            type: 'object',
            required: ['count', 'next', 'previous', 'results'],
            properties: {
              count: { type: ['integer', 'null'], description: 'Null when the client preferred no count (Prefer: count=none).' },
              next: { type: ['string', 'null'], format: 'uri' },
              previous: { type: ['string', 'null'], format: 'uri' },
              results: { type: 'array', items: record },
            },
          },
          304: notModifiedResponse,
          ...errorResponses(reads),
        },
      };
    case 'create': {
      const one = inputSchema(collection.serializer, 'create');
      const max = collection.bulkCreateMax;
      if (max === undefined) {
        return { ...base, body: one, response: { 201: { description: 'Created; Location names it', ...record }, ...errorResponses(writes) } };
      }
      return {
        ...base,
        description: `Also takes an array of up to ${max} records, created all or none; errors are keyed "<index>.<field>".`,
        body: { anyOf: [one, { type: 'array', items: one, minItems: 1, maxItems: max }] },
        response: {
          201: { description: 'Created (an array for an array body)', anyOf: [record, { type: 'array', items: record }] },
          ...errorResponses(writes),
        },
      };
    }
    case 'retrieve':
      return {
        ...base,
        params: idParams,
        querystring: { type: 'object', properties: fieldSelectionParameters(collection) },
        response: { 200: { description: 'The record', ...record }, 304: notModifiedResponse, ...errorResponses(reads) },
      };
    case 'update':
    case 'partial_update':
      return {
        ...base,
        params: idParams,
        body: inputSchema(collection.serializer, action),
        response: { 200: { description: 'The updated record', ...record }, ...errorResponses([...writes, 412]) },
      };
    case 'destroy':
      return { ...base, params: idParams, response: { 204: { description: 'Deleted', type: 'null' }, ...errorResponses([...reads, 412]) } };
  }
}

const SECURITY_SCHEMES: Record<AuthKind, Record<string, JsonSchema>> = {
  token: { token: { type: 'http', scheme: 'bearer', description: 'An API token from POST /api/v1/auth/token/.' } },
  jwt: { jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from POST /api/v1/auth/jwt/.' } },
  session: {
    session: { type: 'apiKey', in: 'cookie', name: 'restfold_session', description: 'From POST /api/v1/auth/login/; unsafe methods need X-CSRF-Token.' },
  },
};

/** Where the interactive documentation (Swagger UI) is served. */
export const DOCS_PREFIX = '/api/docs';

/**
 * Collects every route's schema into an OpenAPI 3.1 document (`app.swagger()`),
 * with interactive documentation of `documentPath` at DOCS_PREFIX (assets from
 * the installed package, nothing from a CDN). Route schemas are documentation
 * only: each stage validates in its own order, so Fastify's own validation is
 * off, and bodies are written by JSON.stringify (see buildApp). Register before any route.
 */
export async function registerOpenApi(app: FastifyInstance, authKinds: readonly AuthKind[], documentPath: string): Promise<void> {
  app.setValidatorCompiler(() => () => true);
  app.addSchema(errorEnvelopeSchema);
  const securitySchemes = Object.assign({}, ...authKinds.map((kind) => SECURITY_SCHEMES[kind]));
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Restfold API',
        version: '1',
        description: 'Collections under /api/v1, with JSON error envelopes; other routes document their own error bodies.',
      },
      servers: [{ url: '/', description: 'This service' }],
      components: { securitySchemes },
      security: authKinds.map((kind) => ({ [kind]: [] })),
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
  });
  // BaseLayout: no top bar, whose Swagger logo carries an inline <style> the page's CSP refuses.
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX, uiConfig: { url: documentPath, layout: 'BaseLayout' } as Record<string, unknown> });
}
