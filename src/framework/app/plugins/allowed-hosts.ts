/**
 * The Host (and scheme) check, before any other work: a request for a foreign
 * or malformed host stores nothing, and no such host ever reaches a link.
 */
import { hostCheck } from '../../base/hosts.js';
import { appWide } from '../../base/app-wide.js';
import { renderEarlyError } from './error-replies.js';
import { HEALTH_PATHS } from './health.js';

export const allowedHosts = appWide<{ readonly allowedHosts: readonly string[] }>('allowed-hosts', async (app, options) => {
  const badHost = hostCheck(options.allowedHosts, HEALTH_PATHS);
  app.addHook('onRequest', (request, reply, done) => {
    const error = badHost(request);
    if (error) renderEarlyError(reply, error);
    else done();
  });
});
