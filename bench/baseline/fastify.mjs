#!/usr/bin/env node
/**
 * The floor a Fastify-based framework starts from: the baseline's answers (answers.mjs) served by
 * Fastify over the same driver, with the headers Restfold's contract adds to every answer of these
 * scenarios (X-Request-ID, Vary, a strong ETag of the body) and nothing else: no authentication
 * stage, permissions, serializers or pipeline. Between it and Restfold lies what Restfold's own
 * layers cost; between it and server.mjs, what Fastify and those headers do.
 *   DATABASE_URL=... PORT=... node bench/baseline/fastify.mjs
 */
import { hash, randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { answer, fail, MAX_BODY_BYTES } from './answers.mjs';

const app = Fastify({ bodyLimit: MAX_BODY_BYTES, genReqId: () => randomUUID() });

app.route({
  method: ['GET', 'POST', 'PATCH', 'DELETE'],
  url: '/*',
  handler: async (request, reply) => {
    const isObject = request.body !== null && typeof request.body === 'object';
    const readBody = () => (isObject ? { body: request.body } : { status: 400, code: 'parse_error', error: 'Send a JSON object, or an array of them.' });
    const { status, body, headers } = await answer({ method: request.method, url: request.url, headers: request.headers, readBody });
    if (body === undefined) return reply.code(status).headers({ ...headers, 'x-request-id': request.id }).send();
    const text = JSON.stringify(body);
    return reply
      .code(status)
      .headers({ ...headers, 'x-request-id': request.id, vary: 'Accept, Authorization', etag: `"${hash('sha256', text, 'base64url').slice(0, 27)}"` })
      .type('application/json; charset=utf-8')
      .send(text);
  },
});
app.setErrorHandler((error, _request, reply) => {
  const { status, body } = error.statusCode ? fail(error.statusCode, 'bad_request', error.message) : fail(500, 'server_error', 'Server error.');
  reply.code(status).send(body);
});

await app.listen({ port: Number(process.env.PORT ?? 8001), host: '127.0.0.1' });
console.log('floor listening');

// Exit normally on a signal, so `node --cpu-prof` writes its profile.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
