/**
 * The OpenAPI document of each version, for an app with versions (stages/versioning.ts): one
 * @fastify/swagger collection of the routes per version, each showing the routes its version
 * serves with their schemas for that version. The default version's is `app.swagger()`.
 */
import type { FastifyContextConfig, FastifyInstance, FastifySchema } from 'fastify';
import type { SwaggerTransform } from '@fastify/swagger';
import type { Versioning } from '../stages/versioning.js';

/** A version's document (the app's only one when it has no versions). */
export type DocumentOf = (version: string | undefined) => unknown;

declare module 'fastify' {
  /** What a route tells the versions' documents (set where it is mounted). */
  interface FastifyContextConfig {
    /** Served under one version only (a mount of the path scheme's): the other versions' documents leave it out. */
    readonly restfoldVersion?: string;
    /** Its schema in each version's document, where that depends on the version (the query and Accept schemes' routes serve them all). */
    readonly restfoldSchemas?: Readonly<Record<string, FastifySchema>>;
  }
}

export type VersionedRouteConfig = Pick<FastifyContextConfig, 'restfoldVersion' | 'restfoldSchemas'>;

interface Registered {
  readonly version?: string;
  /** The name of the function that builds it (@fastify/swagger's `decorator`). */
  readonly decorator?: string;
  readonly transform?: SwaggerTransform;
}

/** Each route as `version`'s document shows it: left out when another version serves it, else with that version's schema. */
const transformFor =
  (version: string): SwaggerTransform =>
  ({ schema, url, route }) => {
    const config = route.config as VersionedRouteConfig | undefined;
    // The other spelling of a documented path stays hidden whatever its version.
    if ((schema as { hide?: boolean } | undefined)?.hide) return { schema, url };
    if (config?.restfoldVersion !== undefined && config.restfoldVersion !== version) return { schema: { ...schema, hide: true }, url };
    return { schema: config?.restfoldSchemas?.[version] ?? schema, url };
  };

/** The document collections to register, and how to read a version's (undefined: the default version's). */
export function versionedDocuments(versioning: Versioning | undefined): { registered: readonly Registered[]; of: (app: FastifyInstance, version: string | undefined) => unknown } {
  if (!versioning) return { registered: [{}], of: (app) => app.swagger() };
  const primary = versioning.default ?? versioning.allowed[0]!;
  const decoratorOf = (version: string): string => (version === primary ? 'swagger' : `swagger@${version}`);
  return {
    registered: versioning.allowed.map((version) => ({ version, decorator: decoratorOf(version), transform: transformFor(version) })),
    of: (app, version) => (app as unknown as Record<string, () => unknown>)[decoratorOf(version ?? primary)]!(),
  };
}

/**
 * What the docs page needs to show the version its `?version=` names: that version's document, and
 * what its requests (the document's and "Try it out"'s) carry to name the version.
 */
export function pageVersions(versioning: Versioning | undefined, style: { readonly pattern?: string; readonly end: string }): Record<string, { url?: string; accept?: string; query?: string }> {
  if (!versioning) return {};
  const { scheme, param, allowed } = versioning;
  return Object.fromEntries(
    allowed.map((version) => [
      version,
      scheme === 'path' ? { url: `${style.pattern!.replace('{version}', version)}/schema${style.end}` } : scheme === 'accept' ? { accept: `application/json; ${param}=${version}` } : { query: `${param}=${version}` },
    ]),
  );
}
