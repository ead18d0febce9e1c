/**
 * The collection API under its prefix: request bodies kept raw for the parsing
 * stage, the authentication endpoints, every collection, and the OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import type { AuthKind } from '../authentication/index.js';
import type { BrowsableContext } from '../browsable/index.js';
import type { Collection } from '../collection.js';
import { ANONYMOUS, errorResponses, operationId } from '../openapi.js';
import { keepRawBodies, mountCollections, resource } from '../router.js';
import type { ApiRuntime } from '../views.js';
import { appWide } from './app-wide.js';

export const API_PREFIX = '/api/v1';

/** What the browsable page links to: the API root, and the session's login and logout when sessions are on. */
export function browsableContext(authKinds: readonly AuthKind[]): BrowsableContext {
  const sessions = authKinds.includes('session');
  return {
    root: `${API_PREFIX}/`,
    loginUrl: sessions ? `${API_PREFIX}/auth/login/` : undefined,
    logoutUrl: sessions ? `${API_PREFIX}/auth/logout/` : undefined,
  };
}

export interface CollectionsOptions {
  readonly runtime: ApiRuntime;
  readonly collections: readonly Collection[];
  /** Mounts the enabled authentication kinds' endpoints (under `/auth/`). */
  readonly mountAuthRoutes: (scope: FastifyInstance) => void;
}

export const collections = appWide<CollectionsOptions>('collections', async (app, options) => {
  await app.register(
    async (api) => {
      keepRawBodies(api);
      options.mountAuthRoutes(api);
      mountCollections(api, options.runtime, options.collections);
      resource(api, '/schema/', {
        GET: {
          schema: {
            tags: ['api'],
            summary: 'This OpenAPI 3.1 document',
            operationId: operationId('schema', 'retrieve'),
            ...ANONYMOUS,
            response: {
              200: {
                description: 'An OpenAPI 3.1 document',
                type: 'object',
                properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' }, components: { type: 'object' } },
                required: ['openapi', 'info', 'paths'],
              },
              ...errorResponses([]),
            },
          },
          handler: async () => app.swagger(),
        },
      });
    },
    { prefix: API_PREFIX },
  );
});
