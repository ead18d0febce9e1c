/**
 * JSON Schemas built from the same declarations that drive validation:
 * route schemas for every action (documentation only: bodies are written
 * by JSON.stringify), and the OpenAPI 3.1 document gathered from them.
 */
import { BODY_MEDIA_TYPES } from '../stages/parsers.js';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifySchema } from 'fastify';
import type { AuthKind } from '../stages/authentication/index.js';
import type { Collection } from '../declare/collection.js';
import type { JsonSchema } from '../../core/fields.js';
import type { Action, Permission } from '../declare/permission-classes.js';
import { PAGING_PARAMETERS } from '../actions/limit-offset.js';
import { FILE_FIELD_PARAMETER } from '../base/file-links.js';
import { RESERVED_PARAMETERS } from '../stages/list-params.js';
import { relationSchema } from '../declare/relations.js';
import type { Serializer, WriteMode } from '../declare/serializer.js';
import type { Versioning } from '../stages/versioning.js';
import { pageVersions, versionedDocuments, type DocumentOf } from './versions.js';

const ERROR_SCHEMA_ID = 'ErrorEnvelope';
const errorRef = { $ref: `${ERROR_SCHEMA_ID}#` };

const errorEnvelopeSchema: JsonSchema = {
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
  503: 'Service unavailable: the database or a store unreachable, or the server shutting down',
};

/** Response headers, declared once and attached to the statuses that carry them. */
export const RATE_LIMIT_HEADERS: Record<string, JsonSchema> = {
  'RateLimit-Limit': { type: 'integer', description: 'Requests allowed in the window (when throttling applies).' },
  'RateLimit-Remaining': { type: 'integer', description: 'Requests left in the window.' },
  'RateLimit-Reset': { type: 'integer', description: 'Seconds until the window resets.' },
};
const RETRY_AFTER: Record<string, JsonSchema> = { 'Retry-After': { type: 'integer', description: 'Seconds to wait before trying again.' } };
const WWW_AUTHENTICATE: Record<string, JsonSchema> = {
  'WWW-Authenticate': { type: 'string', description: 'The scheme to authenticate with: Bearer.' },
};
const ETAG: Record<string, JsonSchema> = { ETag: { type: 'string', description: 'Send back as If-None-Match (304) or If-Match (412).' } };
const LOCATION: Record<string, JsonSchema> = { Location: { type: 'string', format: 'uri', description: 'The created record\'s URL.' } };

const STATUS_HEADERS: Record<number, Record<string, JsonSchema>> = { 401: WWW_AUTHENTICATE, 429: RETRY_AFTER, 503: RETRY_AFTER };

/** `responses` with `headers` added to every status in it. */
export function withHeaders(responses: Record<string, JsonSchema>, headers: Record<string, JsonSchema>): Record<string, JsonSchema> {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [status, { ...response, headers: { ...(response.headers as object), ...headers } }]),
  );
}

/** What every route may answer whatever it does: a URL over the limit, and a server error. */
const ALWAYS = [414, 500];

function errorResponsesOf(statuses: readonly number[], body: JsonSchema): Record<string, JsonSchema> {
  return Object.fromEntries(
    [...new Set([...statuses, ...ALWAYS])].map((status) => [
      String(status),
      { description: ERROR_DESCRIPTIONS[status], ...body, ...(STATUS_HEADERS[status] && { headers: STATUS_HEADERS[status] }) },
    ]),
  );
}

/** The error envelope for each status a route can answer with. */
export const errorResponses = (statuses: readonly number[]): Record<string, JsonSchema> => errorResponsesOf(statuses, errorRef);

/** Plain-text error bodies (for simple routes), one per status. */
export const textErrorResponses = (statuses: readonly number[]): Record<string, JsonSchema> =>
  errorResponsesOf(statuses, { content: { 'text/plain': { schema: { type: 'string' } } } });

/**
 * A schema named in the document's components: every use becomes a `$ref` to
 * it (see hoistNamedSchemas), so generated clients get a type of that name.
 */
const COMPONENT = 'x-restfold-component';
const named = (name: string, schema: JsonSchema): JsonSchema => ({ [COMPONENT]: name, ...schema });

/**
 * The JSON a record renders as. Every field is required: a response carries
 * them all unless the request narrowed it with `?fields=` or `?omit=` (see
 * readSchema). A nested record may be null where its foreign key may, or where
 * its table is one a request may not see whole (`scoped`: the app's scoped tables, see scopes.ts).
 */
export function recordSchema(serializer: Serializer, scoped: ReadonlySet<string> = new Set()): JsonSchema {
  return recordOf(serializer, scoped, false);
}

/**
 * A record as a list or a retrieve answers it: the whole record (`<Name>`), or, narrowed by
 * `?fields=` or `?omit=`, any of its fields (`<Name>Subset`, nothing required). A response schema
 * cannot depend on the query, so a validating proxy needs both; the whole one comes first.
 */
const readSchema = (serializers: readonly Serializer[], scoped: ReadonlySet<string>): JsonSchema => ({
  anyOf: serializers.flatMap((serializer) => [recordOf(serializer, scoped, false), recordOf(serializer, scoped, true)]),
});

/** The schema of each serializer a request may get (a collection's `chooseSerializer`): the one, or `anyOf` them. */
const eitherOf = (schemas: readonly JsonSchema[]): JsonSchema => (schemas.length === 1 ? schemas[0]! : { anyOf: schemas });

/** A record's schema (`subset`: as `?fields=` may narrow it, its nested records too, with no field required). */
function recordOf(serializer: Serializer, scoped: ReadonlySet<string>, subset: boolean): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const shown = serializer.fields.filter((name) => !serializer.writeOnly.has(name));
  for (const field of shown) properties[serializer.shown(field)] = fieldSchema(serializer, field, scoped, subset);
  if (subset) return named(`${serializer.name}Subset`, { type: 'object', properties });
  return named(serializer.name, { type: 'object', properties, required: shown.map((name) => serializer.shown(name)) });
}

/** One shown field's value in a record (`subset`: see recordOf; only nested records narrow, a relation's records never do). */
function fieldSchema(serializer: Serializer, name: string, scoped: ReadonlySet<string>, subset: boolean): JsonSchema {
  {
    const nested = serializer.nested[name];
    const field = serializer.model.fields[name];
    const computed = serializer.computed[name];
    if (serializer.hidden.has(name)) return { type: 'null', description: 'Hidden: always null.' };
    if (computed) return { ...computed.schema, readOnly: true };
    if (serializer.relations[name]?.serializer) return { type: 'array', items: recordSchema(serializer.relations[name].serializer, scoped), readOnly: true };
    if (serializer.relations[name]) return { ...relationSchema(serializer, name), ...(serializer.readOnly.has(name) && { readOnly: true }) };
    if (nested) {
      const record = recordOf(nested.serializer, scoped, subset);
      const nullable = serializer.model.fields[nested.source]!.nullable || scoped.has(nested.serializer.model.table);
      return nullable ? { anyOf: [record, { type: 'null' }] } : record;
    }
    return { ...field!.schema, ...(serializer.readOnly.has(name) ? { readOnly: true } : {}) };
  }
}

const INPUT_NAMES: Record<WriteMode, string> = { create: 'Create', update: 'Update', partial_update: 'PartialUpdate' };

/** A create (POST), update (PUT) or partial update (PATCH) body. */
export function inputSchema(serializer: Serializer, mode: WriteMode): JsonSchema {
  return named(`${serializer.name}${INPUT_NAMES[mode]}`, inputObject(serializer, mode));
}

/**
 * A custom action's declared body (CustomAction.body): what its serializer's create takes, named
 * after the action (`NotesPublishBody`); with `unknownFields: 'ignore'`, other fields too.
 */
export const actionBodySchema = (serializer: Serializer, name: string, ignoreUnknown: boolean): JsonSchema =>
  named(name, { ...inputObject(serializer, 'create'), additionalProperties: ignoreUnknown });

function inputObject(serializer: Serializer, mode: WriteMode): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const name of serializer.writable) {
    const field = serializer.model.fields[name]!;
    // A hidden field sent as null counts as not sent, so a GET result can be sent back as it is.
    const sent = field.file ? fileInputSchema(field.nullable) : field.schema;
    const schema = serializer.hidden.has(name) ? { ...sent, type: [String(sent.type), 'null'], writeOnly: true } : sent;
    properties[serializer.shown(name)] = writableBy(serializer, name, schema);
    const needed = field.required === 'always' ? mode !== 'partial_update' : field.required === 'create' && mode === 'create';
    if (needed) required.push(serializer.shown(name));
  }
  for (const name of serializer.readOnly) {
    if (serializer.fields.includes(name)) properties[serializer.shown(name)] = { description: 'Read-only: ignored when sent.' };
  }
  // A many-to-many replaces the record's links and is never required (left out, they stay as they are); a slug sets its key.
  for (const name of serializer.relationInputs) {
    properties[serializer.shown(name)] = writableBy(serializer, name, relationSchema(serializer, name));
    const key = serializer.relations[name]!.slug?.source;
    if (key && mode !== 'partial_update' && serializer.model.fields[key]!.required === 'always') required.push(serializer.shown(name));
  }
  if (mode !== 'create') Object.assign(properties, serializer.model.rules?.updates?.inputs);
  return { type: 'object', properties, required, additionalProperties: false };
}

/** A file field in a body: a multipart body's file part (JSON can only clear a nullable one, with null). */
const fileInputSchema = (nullable: boolean): JsonSchema => ({
  type: nullable ? ['string', 'null'] : 'string',
  format: 'binary',
  description: 'The file, as a part of a multipart/form-data body; null (in JSON too) clears it.',
});

/** The media types a record's body comes in: with files, multipart too. */
const bodyMediaTypes = (serializers: readonly Serializer[]): string[] =>
  serializers.some((each) => each.writable.some((name) => each.model.fields[name]?.file)) ? [...BODY_MEDIA_TYPES, 'multipart/form-data'] : [...BODY_MEDIA_TYPES];

/** A body field's `schema`, saying who may write it where only some may (a serializer's `writableBy`): in words, and for machines. */
function writableBy(serializer: Serializer, name: string, schema: JsonSchema): JsonSchema {
  const permission = serializer.writableBy.get(name);
  if (!permission) return schema;
  const said = `Writing it needs ${permission.description}: a body sending it without is refused (403).`;
  return { ...schema, description: schema.description ? `${String(schema.description)} ${said}` : said, 'x-restfold-writable-by': permission.description };
}

/** `?format=`: JSON, or one of the collection's own renderers' (`renderers`). */
function formatParameter(collection: Collection): JsonSchema {
  const own = collection.renderers.map(({ format }) => format);
  return { type: 'string', enum: ['json', ...own], description: own.length === 0 ? 'Force JSON (e.g. in a browser).' : `Force JSON, or ${own.join(', ')}.` };
}

/**
 * A 200 as JSON and in each of the collection's own renderers' media types, as their text (a
 * validating proxy checks the media type an answer comes in against the response's).
 */
function rendered(collection: Collection, response: JsonSchema & { description: string; headers?: Record<string, JsonSchema> }): JsonSchema {
  if (collection.renderers.length === 0) return response;
  const { description, headers, ...schema } = response;
  const own = collection.renderers.map(({ mediaType }) => [mediaType, { schema: { type: 'string' } }]);
  return { description, ...(headers && { headers }), content: { 'application/json': { schema }, ...Object.fromEntries(own) } };
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
    format: formatParameter(collection),
    ...fieldSelectionParameters(collection.serializersFor('list')[0]!),
  };
  if (collection.pagination === 'cursor') {
    delete properties.page;
    properties.cursor = { type: 'string', description: 'Opaque, from a previous page\'s next or previous link.' };
  }
  if (collection.pagination === 'none') {
    delete properties.page;
    delete properties.page_size;
  }
  if (collection.pagination === 'limit_offset') {
    delete properties.page;
    delete properties.page_size;
    properties.limit = { type: 'integer', minimum: 1, default: pageSize, description: `How many records; clamped to ${maxPageSize}.` };
    properties.offset = { type: 'integer', minimum: 0, default: 0, description: 'How many records to skip; past the end, the results are empty.' };
  }
  for (const [name, lookups] of filters) {
    const schema = fields[name]!.schema;
    const path = collection.namedFilters[name];
    if (path !== undefined) {
      // One value, matched as the app's path says (a JSON array's element is a string).
      const scalar = ['integer', 'number', 'boolean'].includes(String(schema.type));
      properties[name] = { type: scalar ? schema.type : 'string', description: `Records matching ${path}.` };
      continue;
    }
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

function fieldSelectionParameters(serializer: Serializer): Record<string, JsonSchema> {
  const names = serializer.fields.map((name) => serializer.shown(name)).join(', ');
  const subset = `Records then carry only the chosen fields (${serializer.name}Subset); otherwise every field of ${serializer.name}.`;
  return {
    fields: { type: 'string', description: `Comma-separated fields to show (nested with dots, e.g. author.username). Of: ${names}. ${subset}` },
    omit: { type: 'string', description: `Comma-separated fields to leave out. Of: ${names}. ${subset}` },
  };
}

/** Request headers, as Fastify route schemas declare them (each becomes a header parameter). */
const requestHeaders = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: 'object', properties });
const IF_NONE_MATCH = { 'If-None-Match': { type: 'string', description: 'An ETag from an earlier response: 304 while it still matches.' } };
const IF_MATCH = { 'If-Match': { type: 'string', description: 'The record\'s ETag: 412 unless the record is still that version.' } };
const preferCount = (modes: readonly string[]): Record<string, JsonSchema> =>
  modes.length > 1 ? { Prefer: { type: 'string', enum: modes.map((mode) => `count=${mode}`), description: 'How the list counts its records.' } } : {};

const notModifiedResponse = { description: 'Not modified (If-None-Match matched the ETag)', type: 'null', headers: ETAG };

/** What the document calls each route of a collection: the actions, bulk create (its own path), and bulk delete (DELETE on the list path). */
export type DocumentedAction = Action | 'bulk_create' | 'bulk_destroy' | 'events';

const SUMMARIES: Record<DocumentedAction, string> = {
  list: 'List',
  retrieve: 'Retrieve',
  create: 'Create',
  bulk_create: 'Create several',
  update: 'Replace',
  partial_update: 'Update part of',
  destroy: 'Delete',
  bulk_destroy: 'Delete several',
  events: 'Stream the changes of',
};

const LAST_EVENT_ID = { 'Last-Event-ID': { type: 'string', description: 'The id of the last event received: the stream resumes after it, or answers `reset` when it cannot.' } };

/** One kind of a live stream's event: its name, its data (the JSON it carries, decoded), and its `id` where it has one. */
const streamEvent = (name: string, data: JsonSchema, withId: boolean): JsonSchema => ({
  type: 'object',
  required: ['event', 'data', ...(withId ? ['id'] : [])],
  properties: {
    event: { type: 'string', const: name },
    ...(withId && { id: { type: 'string', description: 'Send back as Last-Event-ID to resume after it.' } }),
    data,
  },
});

/**
 * What a live collection's stream answers (see actions/events.ts): the stream as text, and each of its
 * events (`<Name>Event`, one of its kinds) as OpenAPI 3.2's `itemSchema` says an item of a sequential media
 * type; a 3.1 document says it as `x-itemSchema`, with `data` as the JSON it carries rather than its text, so
 * a generated type reads as a client handles the event (docs/openapi.md, Live streams). The text's
 * `contentSchema` (the events it decodes to, an annotation a validator does not apply) names it too, where
 * tools that know no extension see it.
 */
function eventStream(serializers: readonly Serializer[], scoped: ReadonlySet<string>): JsonSchema {
  const serializer = serializers[0]!;
  const record = readSchema(serializers, scoped);
  const events = named(`${serializer.name}Event`, {
    oneOf: [
      streamEvent('created', record, true),
      streamEvent('updated', record, true),
      streamEvent('deleted', { type: 'object', required: ['id'], properties: { id: serializer.model.fields.id!.schema } }, true),
      streamEvent('reset', { type: 'object', properties: {}, additionalProperties: false, description: 'Fetch the list again.' }, false),
      streamEvent('revoked', { ...errorRef, description: 'The error the stream\'s request would get now; the server closes the stream.' }, false),
    ],
  });
  return {
    description:
      'Server-Sent Events, one per changed record the list would show: `event: created` or `updated` with the record as the list renders it ' +
      `(${serializer.name}, or its subset for fields/omit), \`deleted\` with \`{"id": …}\`, \`reset\` when the client must fetch the list again, ` +
      `\`revoked\` when its credential or permissions no longer hold; \`id:\` for Last-Event-ID; comments as heartbeats; \`retry:\` before the server closes it. Each event: ${serializer.name}Event.`,
    content: {
      'text/event-stream': {
        schema: { type: 'string', contentMediaType: 'text/event-stream', contentSchema: { type: 'array', items: events } },
        'x-itemSchema': events,
      },
    },
  };
}

const DOWNLOAD_HEADERS: Record<string, JsonSchema> = {
  ...ETAG,
  'Content-Length': { type: 'integer', description: 'The bytes sent: the file\'s, or the range\'s.' },
  'Accept-Ranges': { type: 'string', const: 'bytes' },
  'Content-Disposition': { type: 'string', description: '`inline` for a raster image, `attachment` for anything else, with the original file name (RFC 6266).' },
  'X-Content-Type-Options': { type: 'string', const: 'nosniff' },
};
const fileBytes = (description: string, headers: Record<string, JsonSchema> = {}): JsonSchema => ({
  description,
  headers: { ...DOWNLOAD_HEADERS, ...headers },
  content: { '*/*': { schema: { type: 'string', format: 'binary', description: 'The bytes, with the Content-Type sniffed when they were uploaded.' } } },
});
const signedLinkParameter = (description: string, type: JsonSchema = { type: 'string' }): JsonSchema => ({ ...type, description: `${description} Part of a signed link: use the \`url\` a record renders as it is.` });

/**
 * A record's file download (routing/downloads.ts): GET, and HEAD with the same headers and no
 * bytes. By a signed link (the `url` a record renders) it needs no credential until it expires;
 * without the link's query it is the record's GET, its credentials, permissions and scope applying.
 */
export function downloadSchema(collection: Collection, kinds: readonly AuthKind[]): FastifySchema {
  const serializers = collection.serializersFor('retrieve');
  const fileFields = [...new Set(serializers.flatMap((serializer) => serializer.fields.filter((name) => serializer.model.fields[name]?.file).map((name) => serializer.shown(name))))];
  const recordParams = collection.singleton ? { properties: {}, required: [] } : (collection.recordKey.params as { properties: Record<string, JsonSchema>; required?: string[] });
  return {
    tags: [collection.name],
    summary: `Download a file of ${collection.name}`,
    operationId: operationId(collection.name, 'download'),
    description:
      'The bytes of the file a record\'s field holds. With a signed link\'s query (the `url` in the file object a record renders) no credential is needed until `expires`, ' +
      'and the link serves that version of the file only (after a replace or delete: 404); without it, the request is the record\'s GET (credentials, permissions, scope) ' +
      'and serves the file the record holds now. HEAD answers the same headers without the bytes. One byte range (`Range: bytes=a-b`, `a-`, `-n`) answers 206; several, ' +
      'or another unit, the whole file. With S3 storage and FILES_S3_REDIRECT=true: 302 to a presigned URL instead.',
    params: {
      type: 'object',
      properties: { ...recordParams.properties, [FILE_FIELD_PARAMETER]: { type: 'string', enum: fileFields, description: 'The file field, as the record renders it.' } },
      required: [...(recordParams.required ?? []), FILE_FIELD_PARAMETER],
    },
    querystring: {
      type: 'object',
      properties: {
        key: signedLinkParameter('The stored object.'),
        name: signedLinkParameter('The file\'s name.'),
        type: signedLinkParameter('The file\'s Content-Type.'),
        expires: signedLinkParameter('When the link stops working (Unix seconds).', { type: 'integer' }),
        signature: signedLinkParameter('The signature over the record, the field and the parameters above.'),
      },
    },
    headers: requestHeaders({ Range: { type: 'string', description: 'One byte range: `bytes=a-b`, `bytes=a-` or `bytes=-n`.' }, ...IF_NONE_MATCH }),
    // Either a credential, or none with a signed link.
    security: [...kinds.map((kind) => ({ [kind]: [] })), {}],
    response: withHeaders(
      {
        200: fileBytes('The file'),
        206: fileBytes('The range asked for', { 'Content-Range': { type: 'string', description: '`bytes a-b/size`.' } }),
        302: { description: 'With FILES_S3_REDIRECT=true: the presigned URL the store serves the file at, for at most five minutes', type: 'null', headers: { Location: { type: 'string', format: 'uri' } } },
        304: notModifiedResponse,
        416: { description: 'The range starts past the file\'s end', type: 'null', headers: { 'Content-Range': { type: 'string', description: '`bytes */size`.' } } },
        ...errorResponses([401, 403, 404, 429, 503]),
      },
      RATE_LIMIT_HEADERS,
    ),
  };
}

/** The list's parameters that select records (filters, search), without those that order or page them, or choose fields. */
function matchingQuerySchema(collection: Collection): JsonSchema {
  const { properties, ...schema } = listQuerySchema(collection);
  const selecting = Object.entries(properties as Record<string, JsonSchema>).filter(
    ([name]) => !PAGING_PARAMETERS.includes(name) && !['ordering', 'fields', 'omit'].includes(name),
  );
  return { ...schema, properties: Object.fromEntries(selecting) };
}

/** `users`, `partial_update` → `usersPartialUpdate`: stable, and readable as a generated function's name. */
export const operationId = (...words: string[]): string =>
  words
    .flatMap((word) => word.split(/[^A-Za-z0-9]+/))
    .filter(Boolean)
    .map((word, index) => (index === 0 ? word : word[0]!.toUpperCase() + word.slice(1)))
    .join('');

/** The route schema of one collection action (`scoped`: the app's scoped tables, see recordSchema). */
export function actionSchema(collection: Collection, action: DocumentedAction, scoped: ReadonlySet<string>): FastifySchema {
  const serializers = collection.serializersFor(action === 'bulk_create' ? 'create' : action === 'bulk_destroy' ? 'destroy' : action === 'events' ? 'list' : action);
  const serializer = serializers[0]!;
  const record = eitherOf(serializers.map((each) => recordSchema(each, scoped)));
  const input = (mode: WriteMode): JsonSchema => eitherOf(serializers.map((each) => inputSchema(each, mode)));
  // A PUT that updates partially reads as PATCH does.
  const mode = action === 'update' ? collection.putMode : action;
  const base = { tags: [collection.name], summary: `${SUMMARIES[mode]} ${collection.name}`, operationId: operationId(collection.name, action) };
  const created = collection.createStatus === 201 ? { description: 'Created', headers: { ...LOCATION, ...ETAG } } : { description: 'Created (no Location)', headers: ETAG };
  const reads = [400, 401, 403, 404, 406, 429, 503];
  const writes = [...reads, 413, 415];
  // Every response past the throttling stage carries the RateLimit-* headers; the statuses before it may too.
  const throttled = (responses: Record<string, JsonSchema>) => withHeaders(responses, RATE_LIMIT_HEADERS);
  switch (action) {
    case 'events': {
      // The list's filters and search, and its fields/omit; no paging, ordering or format (only text/event-stream is served).
      const { properties, ...query } = matchingQuerySchema(collection);
      const selecting = Object.entries(properties as Record<string, JsonSchema>).filter(([name]) => name !== 'format');
      return {
        ...base,
        querystring: { ...query, properties: { ...Object.fromEntries(selecting), ...fieldSelectionParameters(serializer) } },
        headers: requestHeaders(LAST_EVENT_ID),
        response: throttled({ 200: eventStream(serializers, scoped), ...errorResponses(reads) }),
      };
    }
    case 'list': {
      const { maxPageSize } = collection.queryRules;
      const page =
        collection.pagination === 'none'
          ? { description: `Every record selected, at most ${maxPageSize} (more is a 400: narrow the list with its filters)`, type: 'array', items: readSchema(serializers, scoped), maxItems: maxPageSize }
          : {
              description: 'A page of records',
              type: 'object',
              required: ['count', 'next', 'previous', 'results'],
              properties: {
                count: { type: ['integer', 'null'], description: 'Null when the client preferred no count (Prefer: count=none).' },
                next: { type: ['string', 'null'], format: 'uri' },
                previous: { type: ['string', 'null'], format: 'uri' },
                results: { type: 'array', items: readSchema(serializers, scoped) },
              },
            };
      return {
        ...base,
        querystring: listQuerySchema(collection),
        headers: requestHeaders({ ...IF_NONE_MATCH, ...(collection.pagination !== 'none' && preferCount(collection.countModes)) }),
        response: throttled({ 200: rendered(collection, { ...page, headers: ETAG }), 304: notModifiedResponse, ...errorResponses(reads) }),
      };
    }
    case 'create':
      // One record in, one out, so a generated client types the create it calls as answering one record: the
      // array form the contract also takes here is documented at bulk/ alone (docs/openapi.md, Bulk create).
      return {
        ...base,
        ...(collection.bulkCreateMax !== undefined && { description: `One record. For several, created all or none, POST ${collection.name}/bulk/.` }),
        body: input('create'),
        consumes: bodyMediaTypes(serializers),
        response: throttled({ [collection.createStatus]: { ...record, ...created }, ...errorResponses(writes) }),
      };
    case 'bulk_create':
      return {
        ...base,
        description: `Up to ${collection.bulkCreateMax ?? 0} records, created all or none; errors are keyed "<index>.<field>".`,
        body: { type: 'array', items: input('create'), minItems: 1, maxItems: collection.bulkCreateMax ?? 0 },
        response: throttled({ [collection.createStatus]: { description: 'Created, in the order sent', type: 'array', items: record }, ...errorResponses(writes) }),
      };
    case 'retrieve':
      return {
        ...base,
        params: collection.recordKey.params,
        querystring: { type: 'object', properties: { ...fieldSelectionParameters(serializer), ...(collection.renderers.length > 0 && { format: formatParameter(collection) }) } },
        headers: requestHeaders(IF_NONE_MATCH),
        response: throttled({ 200: rendered(collection, { description: 'The record', ...readSchema(serializers, scoped), headers: ETAG }), 304: notModifiedResponse, ...errorResponses(reads) }),
      };
    case 'update':
    case 'partial_update':
      return {
        ...base,
        params: collection.recordKey.params,
        headers: requestHeaders(IF_MATCH),
        body: input(action === 'update' ? collection.putMode : action),
        consumes: bodyMediaTypes(serializers),
        response: throttled({ 200: { description: 'The updated record', ...record, headers: ETAG }, ...errorResponses([...writes, 412]) }),
      };
    case 'destroy':
      return {
        ...base,
        params: collection.recordKey.params,
        headers: requestHeaders(IF_MATCH),
        response: throttled({ 204: { description: 'Deleted', type: 'null' }, ...errorResponses([...reads, 412]) }),
      };
    case 'bulk_destroy':
      return {
        ...base,
        description: `Every record the filters and search select, in one statement. ${collection.bulkDelete === 'all' ? 'With none, every record.' : 'At least one filter or search term is required.'}`,
        querystring: matchingQuerySchema(collection),
        response: throttled({ 204: { description: 'Deleted', type: 'null' }, ...errorResponses([400, 401, 403, 406, 429, 503]) }),
      };
  }
}

const isBearer = (keyword: string): boolean => keyword.toLowerCase() === 'bearer';

/**
 * A header credential's schemes, one per keyword (`[name, keyword]`), Bearer's first: the first under
 * the kind's own name, each other `<kind>As<Keyword>` (`tokenAsToken`).
 */
function headerSchemeNames(kind: string, keywords: readonly string[]): [string, string][] {
  const ordered = [...keywords].sort((a, b) => Number(isBearer(b)) - Number(isBearer(a)));
  return ordered.map((keyword, index) => [index === 0 ? kind : operationId(kind, 'as', keyword), keyword]);
}

/**
 * A header credential's schemes (see headerSchemeNames). `Bearer` is OpenAPI's `http`/`bearer`, so a
 * generated client's standard `auth` option (hey-api's `auth: () => token`) sends `Bearer <token>`;
 * another keyword (DRF's `Token`) is an API key in the Authorization header whose value is the whole
 * header, keyword included: a `bearer` scheme admits `Bearer` only, so a validating proxy would refuse
 * the others the service takes unless each has a scheme of its own.
 */
function headerSchemes(kind: string, keywords: readonly string[], about: string, bearerFormat?: string): Record<string, JsonSchema> {
  return Object.fromEntries(
    headerSchemeNames(kind, keywords).map(([name, keyword]) => {
      const drf = keyword === 'Token' ? ', as Django REST Framework clients send it' : '';
      const description = `${about} Sent as \`Authorization: ${keyword} <credential>\`${drf}.`;
      if (isBearer(keyword)) return [name, { type: 'http', scheme: 'bearer', ...(bearerFormat && { bearerFormat }), description }];
      return [name, { type: 'apiKey', in: 'header', name: 'Authorization', description: `${description} The API key is the whole header, keyword included.` }];
    }),
  );
}

/**
 * The schemes of the enabled kinds, with the paths of the first router (`prefix`, `end`).
 * `sessionId` is the session's id sent in the Authorization header, which logout takes in place of the cookie.
 */
function securitySchemes(authKinds: readonly AuthKind[], keywords: readonly string[], prefix: string, end: string) {
  const login = `POST ${prefix}/auth/login${end}`;
  const schemes: Record<AuthKind, Record<string, JsonSchema>> = {
    token: headerSchemes('token', keywords, `An API token from POST ${prefix}/auth/token${end}.`),
    jwt: headerSchemes('jwt', keywords, `An access token from POST ${prefix}/auth/jwt${end}.`, 'JWT'),
    session: {
      session: {
        type: 'apiKey',
        in: 'cookie',
        name: 'restfold_session',
        description: `From ${login}; unsafe methods need X-CSRF-Token. The session id also works as a ${keywords.join(' or ')} credential.`,
      },
      ...headerSchemes('sessionId', keywords, `The session id from ${login}, in place of its cookie.`),
    },
  };
  return Object.assign({}, ...authKinds.map((kind) => schemes[kind]));
}

type Requirement = Record<string, string[]>;

/**
 * Each requirement naming a header credential (`{token: []}`, as routes declare them) followed by
 * its other keywords' schemes (`{tokenAsToken: []}`), in the document's default and every operation's.
 */
function withKeywordSchemes(document: Record<string, unknown>, keywords: readonly string[]): Record<string, unknown> {
  const expand = (requirements: Requirement[]): Requirement[] =>
    requirements.flatMap((requirement) => {
      const [kind, ...more] = Object.keys(requirement);
      if (kind === undefined || more.length > 0 || !['token', 'jwt', 'sessionId'].includes(kind)) return [requirement];
      return headerSchemeNames(kind, keywords).map(([name]) => ({ [name]: requirement[kind]! }));
    });
  const paths = Object.fromEntries(
    Object.entries((document.paths ?? {}) as Record<string, Record<string, { security?: Requirement[] }>>).map(([path, item]) => [
      path,
      Object.fromEntries(Object.entries(item).map(([method, operation]) => [method, operation.security ? { ...operation, security: expand(operation.security) } : operation])),
    ]),
  );
  return { ...document, paths, ...(document.security !== undefined && { security: expand(document.security as Requirement[]) }) };
}

/** For a route schema: the operation needs no credential (the document's default is that it needs one). */
export const ANONYMOUS = { security: [] } as const;

/**
 * For a route schema: the credential is optional (`{}` beside the schemes) where every check of the
 * action lets a caller with no user through, as `API_REQUIRE_AUTH=false` does for reads. Each check is
 * asked once, at start-up; one that throws or answers later keeps the document's default.
 */
export function credentialsFor(kinds: readonly AuthKind[], permissions: readonly Permission[], action: Action): FastifySchema {
  const opensToAnonymous = (permission: Permission): boolean => {
    try {
      return permission.hasPermission({ user: null, action }) === true;
    } catch {
      return false;
    }
  };
  return permissions.every(opensToAnonymous) ? { security: [...kinds.map((kind) => ({ [kind]: [] })), {}] } : {};
}

/** Where the interactive documentation (Swagger UI) is served. */
export const DOCS_PREFIX = '/api/docs';

type Components = Record<string, JsonSchema>;

/**
 * Replaces every schema marked by `named` with a `$ref` to
 * `#/components/schemas/<name>`, keeping one copy there. Two different
 * schemas under one name are a declaration mistake, refused at start-up.
 */
function hoistNamedSchemas(node: unknown, components: Components): unknown {
  if (Array.isArray(node)) return node.map((item) => hoistNamedSchemas(item, components));
  if (typeof node !== 'object' || node === null) return node;
  const entries = Object.entries(node).map(([key, value]) => [key, hoistNamedSchemas(value, components)] as const);
  const { [COMPONENT]: name, ...schema } = Object.fromEntries(entries) as JsonSchema;
  if (typeof name !== 'string') return Object.fromEntries(entries);
  // A description beside the schema belongs to its use (a response's, say), not to the named schema.
  delete schema.description;
  const known = components[name];
  if (known && JSON.stringify(known) !== JSON.stringify(schema)) {
    throw new Error(`Two different schemas are named "${name}" in the OpenAPI document: give one of the serializers its own \`name\`.`);
  }
  components[name] = schema;
  return { $ref: `#/components/schemas/${name}` };
}

/** The document as @fastify/swagger built it, with the named schemas hoisted into its components. */
function withNamedComponents(document: Record<string, unknown>): Record<string, unknown> {
  const components = (document.components ?? {}) as { schemas?: Components };
  const schemas: Components = { ...components.schemas };
  const paths = hoistNamedSchemas(document.paths, schemas);
  const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  return { ...document, paths, components: { ...components, schemas: sorted } };
}

const ASSETS = new URL('../../../static/', import.meta.url);

/**
 * Collects every route's schema into an OpenAPI 3.1 document (`app.swagger()`),
 * with interactive documentation of `documentPath` at DOCS_PREFIX (assets from
 * the installed package, nothing from a CDN). Route schemas are documentation
 * only (the app's HTTP protocol plugin turns Fastify's validation and response
 * serialization off). Register before any route. An app with versions has a
 * document per version (docs/versions.ts); the answer gives each version's.
 */
export async function registerOpenApi(
  app: FastifyInstance,
  authKinds: readonly AuthKind[],
  style: { readonly keywords: readonly string[]; readonly prefix: string; readonly end: string; readonly pattern?: string },
  versioning?: Versioning,
): Promise<DocumentOf> {
  app.addSchema(errorEnvelopeSchema);
  const documentPath = `${style.prefix}/schema${style.end}`;
  const documents = versionedDocuments(versioning);
  for (const { version, decorator, transform } of documents.registered) await app.register(swagger, {
    ...(decorator && { decorator }),
    ...(transform && { transform }),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Restfold API',
        version: version ?? '1',
        description: `Collections under ${style.prefix || '/'}, with JSON error envelopes; other routes document their own error bodies.`,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'This service' }],
      components: { securitySchemes: securitySchemes(authKinds, style.keywords, style.prefix, style.end) },
      security: authKinds.map((kind) => ({ [kind]: [] })),
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
    transformObject: (built) =>
      withKeywordSchemes(withNamedComponents(('openapiObject' in built ? built.openapiObject : built.swaggerObject) as Record<string, unknown>), style.keywords),
  });
  // Built once at start-up, so a declaration the document cannot describe (two schemas under one name) stops it there.
  app.addHook('onReady', async () => {
    for (const version of versioning?.allowed ?? [undefined]) documents.of(app, version);
  });
  // Our own page script (static/api-docs.js): Swagger UI's base layout (no top bar, so no
  // third-party logo, and no inline <style> the page's CSP refuses), reading `documentPath`
  // (or the document of the version the page's `?version=` names).
  const initializer = readFileSync(new URL('api-docs.js', ASSETS), 'utf8')
    .replace('__DOCUMENT_PATH__', documentPath)
    .replace('__VERSIONS__', JSON.stringify(pageVersions(versioning, style)));
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    theme: {
      title: 'Restfold API documentation',
      favicon: [{ filename: 'restfold.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: readFileSync(new URL('restfold.svg', ASSETS)) }],
    },
    uiHooks: {
      preHandler: (request, reply, done) => {
        if (request.url.endsWith('/static/swagger-initializer.js')) reply.type('application/javascript; charset=utf-8').send(initializer);
        else done();
      },
    },
  });
  return (version) => documents.of(app, version);
}
