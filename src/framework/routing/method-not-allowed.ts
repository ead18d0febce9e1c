/**
 * The 405 of a known path, for the collection API and simple routes alike: each surface renders
 * the error its own way (JSON envelope, plain text).
 */
import type { FastifyInstance } from 'fastify';
import { methodNotAllowed } from '../base/errors.js';

/**
 * Answers 405 with `Allow` at `path` for every method not allowed there: `methods` (HEAD with GET)
 * and `others` (answered there by other routes). The route stays out of the document. Returns the
 * `Allow` value.
 */
export function refuseOtherMethods(instance: FastifyInstance, path: { readonly url: string; readonly prefixTrailingSlash: 'slash' | 'no-slash' }, methods: readonly string[], others: readonly string[] = []): string {
  const allowed = [...new Set([...methods, ...(methods.includes('GET') ? ['HEAD'] : []), ...others])];
  instance.route({
    ...path,
    schema: { hide: true },
    method: instance.supportedMethods.filter((method) => !allowed.includes(method)),
    handler: async (request) => {
      throw methodNotAllowed(request.method, allowed);
    },
  });
  return allowed.join(', ');
}
