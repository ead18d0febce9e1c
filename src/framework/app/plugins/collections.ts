/**
 * The collection API under each router's prefix: request bodies kept raw for the parsing
 * stage, the authentication endpoints, the router's collections, and the OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import { endOf } from '../../base/style.js';
import type { MountedRouter } from '../../routing/routers.js';
import type { AuthKind } from '../../stages/authentication/index.js';
import type { BrowsableContext } from '../../render/browsable/index.js';
import { ANONYMOUS, errorResponses, operationId } from '../../docs/openapi.js';
import { keepRawBodies, mountCollections, resource } from '../../routing/router.js';
import type { ApiRuntime } from '../../views.js';
import { appWide } from '../../base/app-wide.js';


/**
 * What the browsable page links to: the API root, and the session's login and logout when sessions
 * are on (under the first router, `prefix`, which serves the authentication endpoints).
 */
export function browsableContext(authKinds: readonly AuthKind[], prefix: string, end: string): BrowsableContext {
  const sessions = authKinds.includes('session');
  return {
    root: `${prefix}${end}`,
    loginUrl: sessions ? `${prefix}/auth/login${end}` : undefined,
    logoutUrl: sessions ? `${prefix}/auth/logout${end}` : undefined,
  };
}

export interface CollectionsOptions {
  readonly runtime: ApiRuntime;
  /** Each router with the collections it mounts; the first also serves the authentication endpoints and the schema. */
  readonly routers: readonly MountedRouter[];
  /** Mounts the enabled authentication kinds' endpoints (under `/auth/`). */
  readonly mountAuthRoutes: (instance: FastifyInstance) => void;
}

export const collections = appWide<CollectionsOptions>('collections', async (app, options) => {
  for (const [index, router] of options.routers.entries()) {
    await app.register(
      async (api) => {
        const root = `${router.prefix}${endOf(router.trailingSlash)}`;
        api.decorate('restfoldTrailingSlash', router.trailingSlash);
        // Its error pages link to its own root (errors.ts).
        if (router.root) api.decorate('restfoldRoot', root);
        keepRawBodies(api);
        if (index === 0) options.mountAuthRoutes(api);
        mountCollections(api, { ...options.runtime, page: { ...options.runtime.page, root } }, router.collections, router.root);
        if (index === 0) mountSchema(api, app);
      },
      { prefix: router.prefix },
    );
  }
});

function mountSchema(api: FastifyInstance, app: FastifyInstance): void {
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
}
