/**
 * Helmet's headers on the HTML the framework serves (the browsable pages under
 * the API prefix, the admin's, and the Swagger UI): a strict same-origin CSP (each loads
 * only its own scripts and style sheets), no framing, no sniffing. The
 * middleware is built once and runs only for HTML responses.
 */
import type { FastifyError, FastifyRequest } from 'fastify';
import { isApiPath } from '../../base/style.js';
import helmet from 'helmet';
import { DOCS_PREFIX } from '../../docs/openapi.js';
import { appWide } from '../../base/app-wide.js';

export interface SecurityHeadersOptions {
  /** Other prefixes of the framework's pages (the admin's). */
  readonly pagePrefixes?: readonly string[];
}

export const securityHeaders = appWide<SecurityHeadersOptions>('security-headers', async (app, options) => {
  const prefixes = [DOCS_PREFIX, ...(options.pagePrefixes ?? [])];
  const isFrameworkPage = (request: FastifyRequest): boolean => isApiPath(request) || prefixes.some((prefix) => request.url.startsWith(prefix));
  const secure = helmet({
    contentSecurityPolicy: {
      directives: { defaultSrc: ["'self'"], scriptSrc: ["'self'"], styleSrc: ["'self'"], imgSrc: ["'self'", 'data:'], formAction: ["'self'"] },
    },
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    // The content type first: most responses are JSON, and it is the cheaper question.
    const isPage = String(reply.getHeader('content-type')).startsWith('text/html') && isFrameworkPage(request);
    if (!isPage) return done(null, payload);
    // Helmet sets its headers on the raw response; Node sends them with Fastify's.
    secure(request.raw, reply.raw, (error?: unknown) => (error ? done(error as FastifyError) : done(null, payload)));
  });
});
