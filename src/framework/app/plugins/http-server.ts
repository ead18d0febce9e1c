/**
 * The HTTP server beneath the app: its limits and timeouts (Fastify options,
 * fixed at construction), the methods it routes and how bodies are read and written.
 */
import { METHODS, createServer, type IncomingMessage } from 'node:http';
import type { FastifyServerOptions } from 'fastify';
import { enforceBodyRate } from '../../base/body-rate.js';
import type { Config } from '../config.js';
import { fastifyTrustProxy } from '../../base/proxy.js';
import { appWide } from '../../base/app-wide.js';
import { MAX_URL_LENGTH } from './error-replies.js';

/** A socket silent this long mid-request (a client that stopped reading, say) is closed. */
const SOCKET_IDLE_TIMEOUT_MS = 60_000;

export function httpServerOptions(config: Config): FastifyServerOptions {
  return {
    bodyLimit: config.maxBodyBytes,
    trustProxy: fastifyTrustProxy(config.trustProxy),
    routerOptions: { maxParamLength: MAX_URL_LENGTH },
    // The 16 KiB request-line limit is ours (414); Node's own header limit (431) sits well above it.
    // With a serverFactory Fastify applies none of its timeouts, so they are all set here.
    serverFactory: (handler) => {
      const server = createServer(
        {
          maxHeaderSize: 128 * 1024,
          requestTimeout: config.requestTimeoutMs,
          headersTimeout: config.headersTimeoutMs,
          keepAliveTimeout: config.keepAliveTimeoutMs,
          // How often Node looks for connections past those timeouts (its default, 30 s, would blunt them).
          connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
        },
        handler,
      );
      server.setTimeout(SOCKET_IDLE_TIMEOUT_MS);
      // Past the cap Node closes new connections at once: each open one may be holding a body.
      server.maxConnections = config.maxClientConnections;
      enforceBodyRate(server, { minBytesPerSecond: config.bodyMinBytesPerSecond, windowMs: config.bodyTimeoutMs });
      return server;
    },
    // A request on a connection still open once the server closes is served (with Connection: close),
    // not refused with Fastify's own 503 body: the pool closes only after every connection has.
    return503OnClosing: false,
  };
}

/** How much of a refused body is read and thrown away, in body limits (docs/deploying.md). */
const DRAINED_LIMITS = 16;

/**
 * The rest of a body refused (413) before it all came, read and thrown away, `most` bytes at most
 * (then the connection is closed): closed at once, the socket would answer the bytes still coming
 * with a reset, and a client still sending (Node's fetch among them) reports EPIPE or ECONNRESET,
 * never the 413 it was sent. The whole request must still arrive within REQUEST_TIMEOUT_MS, at
 * the body's minimum rate; nothing of it is kept.
 */
function drainRefused(request: IncomingMessage, most: number): void {
  const { socket } = request;
  let drained = 0;
  const stop = (): void => {
    socket.off('data', count);
  };
  const count = (chunk: Buffer): void => {
    drained += chunk.length;
    if (request.complete) stop();
    else if (drained > most) socket.destroy();
  };
  socket.on('data', count);
  socket.once('close', stop);
}

export const httpProtocol = appWide('http-protocol', async (app) => {
  // Fastify closes the connection on a body over the limit while it is still arriving; it is drained instead, then kept or closed.
  // The callback form, as every hook on every request: no promise per request.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode === 413 && !request.raw.complete) {
      reply.removeHeader('connection');
      drainRefused(request.raw, DRAINED_LIMITS * (app.initialConfig.bodyLimit ?? 0));
    }
    done(null, payload);
  });
  // Route schemas document the routes (OpenAPI); they neither check what comes in, which each stage
  // validates in its own order, nor filter what goes out, which is written by JSON.stringify
  // (collections send JSON they have already written, to hash it for the ETag; see docs/performance.md).
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Every method Node parses reaches the router, so a known path answers 405 with Allow (not 404).
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
});
