/**
 * Errors as replies, rendered in one place per surface: under the API prefix
 * the JSON envelope (the browsable page for a browser), elsewhere plain text;
 * including the URLs Fastify's router refuses before any hook runs.
 */
import type { FastifyReply, FastifyServerOptions } from 'fastify';
import { challenged, handledError, isApiPath } from '../../base/style.js';
import type { BrowsableContext } from '../../render/browsable/index.js';
import { ApiError, parseError } from '../../base/errors.js';
import { API_REPRESENTATIONS, preferredMediaType } from '../../stages/negotiation.js';
import { renderErrorsWith, renderHtmlError, renderJsonError, renderTextError } from '../../render/renderers.js';
import { appWide } from '../../base/app-wide.js';

export const MAX_URL_LENGTH = 16 * 1024;

export const uriTooLong = (): ApiError => new ApiError(414, 'uri_too_long', `The request URL is longer than ${MAX_URL_LENGTH} bytes.`);

/** An API error as the app's exception handler shapes it, else the JSON envelope. */
const renderApiError = (reply: FastifyReply, error: ApiError): FastifyReply => handledError(reply, error) ?? renderJsonError(reply, error);

/** An error found before routing: JSON under the API, text elsewhere (no page: nothing is known yet). */
export function renderEarlyError(reply: FastifyReply, error: ApiError): FastifyReply {
  const shown = challenged(reply.request, error);
  return isApiPath(reply.request) ? renderApiError(reply, shown) : renderTextError(reply, shown);
}

/** URLs the router refuses before any hook runs: our error shape, never an echo of the URL. */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (error, request, reply) => {
  reply.header('X-Request-ID', request.id);
  return renderEarlyError(reply, error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? uriTooLong() : parseError('The URL is not valid percent-encoded UTF-8.'));
};

export interface ErrorsOptions {
  /** Whether an error means the database cannot be reached (503, not 500). */
  readonly isDatabaseUnavailable: (error: unknown) => boolean;
  readonly page: BrowsableContext;
}

export const errors = appWide<ErrorsOptions>('errors', async (app, { isDatabaseUnavailable, page }) => {
  // A browser asking anything under the API prefix gets its error inside the browsable page.
  renderErrorsWith(app, isDatabaseUnavailable, (reply, error) => {
    if (!isApiPath(reply.request)) return renderJsonError(reply, error);
    if (preferredMediaType(reply.request, API_REPRESENTATIONS) !== 'text/html') return renderApiError(reply, error);
    // The router the request reached links to its own root (reply.server: the instance of its route, or of its not-found handler).
    return renderHtmlError(reply, error, { ...page, root: reply.server.restfoldRoot ?? page.root });
  });
});
