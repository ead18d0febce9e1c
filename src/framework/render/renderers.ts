/**
 * Rendering: an action's result, or an error, as the negotiated media type.
 * Surface A errors are the JSON envelope `{error, code, details?}`; simple
 * routes (Surface B) render the same errors as plain text.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ActionResult } from '../actions/request.js';
import { challenged } from '../base/style.js';
import { renderPage, type BrowsableContext } from './browsable/index.js';
import { notModified, pageEtag } from '../stages/conditional.js';
import { notFound, toApiError, type ApiError } from '../base/errors.js';
import type { MediaType } from '../stages/negotiation.js';
import type { Collection, Envelope } from '../declare/collection.js';
import type { Action } from '../declare/permission-classes.js';
import type { Renderer } from '../declare/renderer.js';
import { wrapResult } from './envelopes.js';

/** The collection's renderer of a media type beside JSON and the page (its `renderers`: CSV, or the app's own). */
export const rendererFor = (mediaType: MediaType, collection: Collection): Renderer | undefined =>
  collection.renderers.find((renderer) => renderer.mediaType === mediaType);

/**
 * The result as `mediaType`, or 304 when a read's If-None-Match holds that representation's ETag.
 * A page shows `collection` and `action` in `page`'s context, joined only when a page is rendered.
 * JSON and the page show it in the collection's `envelope`; a renderer gets it bare.
 */
export function renderResult(reply: FastifyReply, mediaType: MediaType, bare: ActionResult, page: BrowsableContext, collection?: Collection, action?: Action, envelope?: Envelope): FastifyReply {
  const renderer = collection && action && rendererFor(mediaType, collection);
  if (renderer) return sendRendered(reply, renderer, bare, collection.name, action!);
  const result = action ? wrapResult(envelope, action, bare) : bare;
  const dataEtag = result.headers?.ETag;
  const etag = dataEtag && mediaType === 'text/html' ? pageEtag(dataEtag, reply.request) : dataEtag;
  reply.status(result.status);
  if (result.headers) reply.headers(result.headers);
  if (result.type !== undefined) return reply.type(result.type).send(result.body);
  if (etag && result.status === 200 && notModified(reply.request, etag)) return reply.status(304).header('ETag', etag).send();
  if (mediaType === 'text/html') {
    // The page shows the JSON's headers (its ETag is the one If-Match takes); the page's own goes out with it.
    const html = renderPage(reply.request, reply, result.status, result.body, collection ? { ...page, collection, action } : page);
    if (etag) reply.header('ETag', etag);
    return reply.type('text/html; charset=utf-8').send(html);
  }
  if (result.body === undefined) return reply.send();
  return reply.type('application/json; charset=utf-8').send(result.json ?? result.body);
}

/** The result in a renderer's media type: at once, or streamed as it renders (a list's every record). */
function sendRendered(reply: FastifyReply, renderer: Renderer, result: ActionResult, collection: string, action: Action): FastifyReply {
  // The JSON's validator names the JSON's bytes, not these: none is sent (nor is a 304 answered).
  const headers = Object.entries(result.headers ?? {}).filter(([name]) => name !== 'ETag');
  reply.status(result.status).headers(Object.fromEntries(headers));
  if (result.type !== undefined) return reply.type(result.type).send(result.body);
  if (result.body === undefined && result.records === undefined) return reply.send();
  const { status, body, records, fields } = result;
  const output = renderer.render({ status, body, records, fields, action, collection, request: reply.request });
  reply.type(renderer.mediaType.startsWith('text/') ? `${renderer.mediaType}; charset=utf-8` : renderer.mediaType);
  // Node's stream pauses the rendering while the client reads behind: a slow reader holds one chunk.
  return reply.send(typeof output === 'string' || Buffer.isBuffer(output) ? output : Readable.from(output));
}

interface ErrorEnvelope {
  error: string;
  code: string;
  details?: Record<string, string[]>;
  request_id?: string;
}

function errorEnvelope(reply: FastifyReply, error: ApiError): ErrorEnvelope {
  const body: ErrorEnvelope = { error: error.message, code: error.code };
  if (error.details) body.details = error.details;
  // A 500 says nothing of its cause; the request id finds the cause in the log.
  if (error.status >= 500) body.request_id = String(reply.request.id);
  return body;
}

export function renderJsonError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.status(error.status).headers(error.headers).type('application/json; charset=utf-8').send(errorEnvelope(reply, error));
}

/** The error envelope inside the browsable page, for a browser. */
export function renderHtmlError(reply: FastifyReply, error: ApiError, page: BrowsableContext): FastifyReply {
  reply.status(error.status).headers(error.headers);
  return reply.type('text/html; charset=utf-8').send(renderPage(reply.request, reply, error.status, errorEnvelope(reply, error), page));
}

/** The message, or one line per field (`title: This field is required.`) when the error names fields. */
export function renderTextError(reply: FastifyReply, error: ApiError): FastifyReply {
  const lines = Object.entries(error.details ?? {}).map(([field, messages]) =>
    field === 'non_field_errors' ? messages.join(' ') : `${field}: ${messages.join(' ')}`,
  );
  const text = lines.length > 0 ? lines.join('\n') : error.message;
  return reply.status(error.status).headers(error.headers).type('text/plain; charset=utf-8').send(text);
}

export type ErrorRenderer = (reply: FastifyReply, error: ApiError) => FastifyReply;

/**
 * Renders every error thrown in `instance`, and its unknown paths (404), with
 * `render`. A 5xx's cause goes to the log, never into the body.
 */
export function renderErrorsWith(
  instance: FastifyInstance,
  isDatabaseUnavailable: (error: unknown) => boolean,
  render: ErrorRenderer,
): void {
  instance.setErrorHandler(async (error, request, reply) => {
    const apiError = toApiError(error, isDatabaseUnavailable);
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    // On every surface the 401's challenge names the app's keyword, as its Authorization takes it.
    return render(reply, challenged(request, apiError));
  });
  instance.setNotFoundHandler(async () => {
    throw notFound();
  });
}
