/**
 * The collection API under each router's prefix: request bodies kept raw for the parsing
 * stage, the authentication endpoints, the router's collections, and the OpenAPI document.
 */
import type { FastifyInstance, FastifySchema } from 'fastify';
import { endOf } from '../../base/style.js';
import { notFound } from '../../base/errors.js';
import { determineVersion, unknownPathVersion, type Versioning } from '../../stages/versioning.js';
import type { DocumentOf, VersionedRouteConfig } from '../../docs/versions.js';
import type { MountedRouter } from '../../routing/routers.js';
import type { AuthKind } from '../../stages/authentication/index.js';
import type { BrowsableContext } from '../../render/browsable/index.js';
import { ANONYMOUS, errorResponses, operationId } from '../../docs/openapi.js';
import { keepRawBodies, mountCollections, resource } from '../../routing/router.js';
import type { ApiRuntime } from '../../views.js';
import type { Collection } from '../../declare/collection.js';
import type { ScopePlan } from '../../stages/scope/plan.js';
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
  /** The OpenAPI document of a version (registerOpenApi's). */
  readonly document: DocumentOf;
  /** The framework's own collections the first router mounts under `/auth/` (groups, users), each set with its scope plan: their names are not the app's. */
  readonly authCollections: readonly { readonly collections: readonly Collection[]; readonly scopePlan: ScopePlan }[];
}

export const collections = appWide<CollectionsOptions>('collections', async (app, options) => {
  const [first] = options.routers;
  const { versioning } = options.runtime;
  for (const [index, router] of options.routers.entries()) {
    // The first router serves the authentication endpoints and the schema: under the path scheme, each of its versions' mounts.
    const serves = index === 0 || (router.pattern !== undefined && router.pattern === first?.pattern);
    await app.register(
      async (api) => {
        const root = `${router.prefix}${endOf(router.trailingSlash)}`;
        api.decorate('restfoldTrailingSlash', router.trailingSlash);
        // Its error pages link to its own root (errors.ts).
        if (router.root) api.decorate('restfoldRoot', root);
        if (router.version !== undefined) onlyInVersion(api, router.version);
        keepRawBodies(api, options.runtime.files?.limits.maxBodyBytes);
        if (serves) options.mountAuthRoutes(api);
        const runtime = { ...options.runtime, page: { ...options.runtime.page, root }, version: router.version };
        mountCollections(api, runtime, router.collections, router.root);
        if (serves) {
          for (const { collections: own, scopePlan } of options.authCollections) {
            await api.register(
              async (auth) => {
                documentedUnderAuth(auth);
                mountCollections(auth, { ...runtime, scopePlan }, own, false);
              },
              { prefix: '/auth' },
            );
          }
        }
        if (serves) mountSchema(api, options.document, versioning, router.version);
      },
      { prefix: router.prefix },
    );
  }
  if (versioning) for (const pattern of new Set(options.routers.map((router) => router.pattern))) if (pattern) refuseUnknownVersions(app, pattern, versioning);
});

/**
 * The framework's collections under `/auth/` are tagged `auth` in the document, each operation named
 * by its path (`authUsersGroupsList`), so that none shares an id with an app's collection (`usersList`)
 * nor with another of them (a user's `groups` and the groups).
 */
function documentedUnderAuth(auth: FastifyInstance): void {
  auth.addHook('onRoute', (route) => {
    const schema = route.schema as { operationId?: string } | undefined;
    if (!schema?.operationId) return;
    const segments = route.url.slice(route.url.indexOf('/auth/') + '/auth/'.length).split('/').filter((segment) => segment !== '' && !segment.startsWith(':'));
    const named = (own: FastifySchema): FastifySchema => {
      const { operationId: id } = own as { operationId: string };
      return { ...own, tags: ['auth'], operationId: `${operationId('auth', ...segments)}${id.slice(operationId(segments.at(-1)!).length)}` } as FastifySchema;
    };
    route.schema = named(schema);
    // The query and Accept schemes' documents show each version's own schema of the route: named the same way.
    const config = route.config as VersionedRouteConfig | undefined;
    if (config?.restfoldSchemas) {
      route.config = { ...config, restfoldSchemas: Object.fromEntries(Object.entries(config.restfoldSchemas).map(([version, own]) => [version, named(own)])) };
    }
  });
}

/** The routes of a mount for one version (the path scheme's) are in that version's OpenAPI document only. */
function onlyInVersion(api: FastifyInstance, version: string): void {
  api.addHook('onRoute', (route) => {
    route.config = { ...route.config, restfoldVersion: version };
  });
}

/**
 * A path under a versioned router's prefix whose version is not allowed: DRF's 404 (`/api/v9/…`).
 * A known version's path that no route answers is the router's own 404.
 */
function refuseUnknownVersions(app: FastifyInstance, pattern: string, versioning: Versioning): void {
  const url = pattern.replace('{version}', ':version');
  for (const path of [url, `${url}/*`]) {
    app.route({
      method: app.supportedMethods,
      url: path,
      schema: { hide: true },
      handler: async (request) => {
        throw versioning.allowed.includes((request.params as { version: string }).version) ? notFound() : unknownPathVersion();
      },
    });
  }
}

function mountSchema(api: FastifyInstance, document: DocumentOf, versioning: Versioning | undefined, mounted: string | undefined): void {
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
      // The version's document: the mount's under the path scheme, else the one the request names.
      handler: async (request) => document(determineVersion(versioning, request, mounted)),
    },
  });
}
