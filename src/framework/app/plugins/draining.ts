/**
 * Draining before a stop (SIGTERM, server.ts): from the moment it begins, /readyz answers 503 so
 * that load balancers take the process out of rotation, while every request is still served as
 * before, each answered with `Connection: close`, so that a client holding a kept-alive connection
 * opens its next one elsewhere rather than finding this one closed under a request.
 */
import type { FastifyInstance } from 'fastify';
import { appWide } from '../../base/app-wide.js';

/** Whether each app drains (set once, never unset: a draining process only stops). */
const drains = new WeakMap<FastifyInstance, { draining: boolean }>();

/** Begins `app`'s drain; it goes on serving until closed. */
export function beginDrain(app: FastifyInstance): void {
  const state = drains.get(app);
  if (state) state.draining = true;
}

export const isDraining = (app: FastifyInstance): boolean => drains.get(app)?.draining ?? false;

export const draining = appWide('draining', async (app) => {
  const state = { draining: false };
  drains.set(app, state);
  // Node then writes `Connection: close` and closes the connection once the reply is sent.
  app.addHook('onRequest', (_request, reply, done) => {
    if (state.draining) reply.raw.shouldKeepAlive = false;
    done();
  });
});
