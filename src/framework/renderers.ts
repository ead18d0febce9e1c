/**
 * Rendering: an action's result, or an error, as the negotiated media type.
 * Surface A errors are the JSON envelope `{error, code, details?}`; simple
 * routes (Surface B) render the same errors as plain text.
 */
import type { FastifyReply } from 'fastify';
import type { ActionResult } from './actions.js';
import { renderPage, type BrowsableContext } from './browsable/index.js';
import type { ApiError } from './errors.js';
import type { MediaType } from './negotiation.js';

export function renderResult(reply: FastifyReply, mediaType: MediaType, result: ActionResult, page: BrowsableContext): FastifyReply {
  reply.status(result.status);
  if (result.headers) reply.headers(result.headers);
  if (mediaType === 'text/html') {
    return reply.type('text/html; charset=utf-8').send(renderPage(reply.request, reply, result.status, result.body, page));
  }
  if (result.body === undefined) return reply.send();
  return reply.type('application/json; charset=utf-8').send(result.body);
}

export interface ErrorEnvelope {
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

export function renderTextError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.status(error.status).headers(error.headers).type('text/plain; charset=utf-8').send(error.message);
}
