#!/usr/bin/env node
/**
 * The floor Restfold's own Fastify set-up starts from: the baseline's answers (answers.mjs) over the
 * same driver, served by a Fastify instance built as Restfold builds its app (dist/): the same
 * options (logger at LOG_LEVEL with its redaction, the lazy child logger, request ids, the server
 * factory and its limits, frameworkErrors), the same app-wide plugins in the same order (HTTP
 * protocol, draining, cookies, request identity, allowed hosts, error replies, security headers, CORS),
 * and the API routes' raw bodies (keepRawBodies), parsed in the handler as the parsing stage does.
 * No authentication stage, permissions, serializers or pipeline: between it and fastify.mjs lies
 * what Restfold's Fastify set-up costs; between it and Restfold, what the pipeline does.
 *   DATABASE_URL=... PORT=... node bench/baseline/fastify-restfold.mjs   (after npm run build)
 */
import { hash } from 'node:crypto';
import cookie from '@fastify/cookie';
import Fastify from 'fastify';
import { loadConfig } from '../../dist/framework/app/config.js';
import { browsableContext } from '../../dist/framework/app/plugins/collections.js';
import { corsPolicy } from '../../dist/framework/app/plugins/cors.js';
import { draining } from '../../dist/framework/app/plugins/draining.js';
import { errors, frameworkErrors } from '../../dist/framework/app/plugins/error-replies.js';
import { httpProtocol, httpServerOptions } from '../../dist/framework/app/plugins/http-server.js';
import { allowedHosts } from '../../dist/framework/app/plugins/allowed-hosts.js';
import { requestIdentity, requestIdentityOptions } from '../../dist/framework/app/plugins/request-identity.js';
import { securityHeaders } from '../../dist/framework/app/plugins/security-headers.js';
import { keepRawBodies } from '../../dist/framework/routing/router.js';
import { answer, fail } from './answers.mjs';

// FLOOR_WITHOUT (comma-separated) leaves parts of the set-up out, to tell what each costs: `logger` (no
// logger, the request ids kept), `server` (Fastify's own server, not the server factory with its
// limits), `hooks` (none of the app-wide plugins but the error replies), `raw` (Fastify's JSON parser).
const without = new Set((process.env.FLOOR_WITHOUT ?? '').split(','));
const config = loadConfig();
const { serverFactory, ...serverOptions } = httpServerOptions(config);
const { logger, logController, childLoggerFactory, ...identityOptions } = requestIdentityOptions(config, undefined);
const app = Fastify({
  ...identityOptions,
  ...(!without.has('logger') && { logger, logController, childLoggerFactory }),
  ...serverOptions,
  ...(!without.has('server') && { serverFactory }),
  frameworkErrors,
});
const hooks = !without.has('hooks');
if (hooks) {
  await app.register(httpProtocol);
  await app.register(draining);
  await app.register(cookie, { secret: 'a-bench-cookie-secret-of-enough-length' });
  await app.register(requestIdentity, { appLogLevel: config.logLevel });
  await app.register(allowedHosts, { allowedHosts: config.allowedHosts });
}
await app.register(errors, { isDatabaseUnavailable: () => false, page: browsableContext(config.auth, '/api/v1', '/') });
if (hooks) {
  await app.register(securityHeaders, { pagePrefixes: [] });
  await app.register(corsPolicy, { origins: config.corsOrigins });
}

/** The body as the parsing stage reads it: JSON from the raw bytes the content-type parser kept. */
function readBody(request) {
  if (without.has('raw')) return request.body !== null && typeof request.body === 'object' ? { body: request.body } : { status: 400, code: 'parse_error', error: 'Send a JSON object, or an array of them.' };
  if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) return { status: 415, code: 'unsupported_media_type', error: 'Send the body as application/json.' };
  try {
    const body = JSON.parse(request.body.toString('utf8'));
    if (body !== null && typeof body === 'object') return { body };
  } catch {
    // Answered below, as a body that is no object.
  }
  return { status: 400, code: 'parse_error', error: 'Send a JSON object, or an array of them.' };
}

await app.register(async (api) => {
  if (!without.has('raw')) keepRawBodies(api);
  api.route({
    method: ['GET', 'POST', 'PATCH', 'DELETE'],
    url: '/*',
    handler: async (request, reply) => {
      const { status, body, headers } = await answer({ method: request.method, url: request.url, headers: request.headers, readBody: () => readBody(request) });
      if (body === undefined) return reply.code(status).headers(headers).send();
      const text = JSON.stringify(body);
      return reply
        .code(status)
        .headers({ ...headers, ...(!hooks && { 'x-request-id': request.id }), vary: 'Accept, Authorization', etag: `"${hash('sha256', text, 'base64url').slice(0, 27)}"` })
        .type('application/json; charset=utf-8')
        .send(text);
    },
  });
  api.setErrorHandler((error, _request, reply) => {
    if (!error.statusCode) console.error(error);
    const { status, body } = error.statusCode ? fail(error.statusCode, 'bad_request', error.message) : fail(500, 'server_error', 'Server error.');
    reply.code(status).send(body);
  });
});

await app.listen({ port: Number(process.env.PORT ?? 8001), host: '127.0.0.1' });
console.log('Restfold-shaped floor listening');

// Exit normally on a signal, so `node --cpu-prof` writes its profile.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
