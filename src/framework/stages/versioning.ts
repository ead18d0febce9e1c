/**
 * Versioning (DRF's `versioning.py`): which version of the API a request asks for, found once, first
 * in the pipeline (DRF determines it in `initial()`, before authentication), and carried on
 * everything the request's stages and the app's code receive. Three schemes, as DRF's classes:
 * the URL path (`URLPathVersioning`: the router's prefix holds `{version}`), a parameter of the
 * Accept header's media type (`AcceptHeaderVersioning`) and a query parameter
 * (`QueryParameterVersioning`). A version not allowed is DRF's answer: 404 in a path or the query
 * string, 406 in the Accept header.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError, notFound } from '../base/errors.js';
import { queryParameters } from '../base/query-string.js';

/** How a client names the API's version: in the URL path, the `Accept` header's parameter, or a query parameter. */
export type VersionScheme = 'path' | 'accept' | 'query';

/** How an app's clients name a version, and which exist (`defineApp({ versions })`). */
export interface VersionsDeclaration {
  /** `path`: in the routers' prefix (`/api/v{version}`); `accept`: `Accept: application/json; version=2`; `query`: `?version=2`. */
  readonly scheme: VersionScheme;
  /** The versions that exist (DRF's ALLOWED_VERSIONS), as clients spell them: `['1', '2']`. */
  readonly allowed: readonly string[];
  /** The version of a request that names none (DRF's DEFAULT_VERSION); left out, such a request is refused as an unknown version is. */
  readonly default?: string;
  /** The Accept header's media-type parameter or the query parameter that names it (DRF's VERSION_PARAM). Default `version`. */
  readonly param?: string;
}

/** A declaration checked, its parameter's name filled in. */
export interface Versioning extends VersionsDeclaration {
  readonly param: string;
}

/** What `{version}` becomes in a router's prefix, so a version is one path segment's worth of safe characters. */
const VERSION = /^[A-Za-z0-9._~-]{1,32}$/;
const PARAM = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const SCHEMES: readonly VersionScheme[] = ['path', 'accept', 'query'];

/** The declaration, checked at start-up: a wrong one stops it with what is wrong. */
export function versioningOf(declared: VersionsDeclaration): Versioning {
  if (!SCHEMES.includes(declared.scheme)) throw new Error(`versions: scheme "${String(declared.scheme)}" is none of ${SCHEMES.join(', ')}.`);
  if (declared.allowed.length === 0) throw new Error('versions: name at least one allowed version.');
  for (const version of declared.allowed) {
    if (!VERSION.test(version)) throw new Error(`versions: "${version}" is not a version (letters, digits and . _ ~ -, at most 32).`);
  }
  if (new Set(declared.allowed).size !== declared.allowed.length) throw new Error('versions: a version is allowed twice.');
  if (declared.default !== undefined && !declared.allowed.includes(declared.default)) throw new Error(`versions: the default "${declared.default}" is not among the allowed versions.`);
  const param = declared.param ?? 'version';
  if (!PARAM.test(param)) throw new Error(`versions: param "${param}" is not a parameter name.`);
  return { ...declared, param };
}

/** The version named by the Accept header: the `param` of its first media range that has one. */
function acceptedVersion(accept: string | undefined, param: string): string | undefined {
  if (!accept) return undefined;
  for (const range of accept.split(',')) {
    for (const parameter of range.split(';').slice(1)) {
      const equals = parameter.indexOf('=');
      if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== param.toLowerCase()) continue;
      return parameter.slice(equals + 1).trim().replace(/^"(.*)"$/, '$1');
    }
  }
  return undefined;
}

/**
 * The request's version: undefined for an app that declares none; under the path scheme the one
 * the route was mounted for (`mounted`); otherwise the one the request names, or the default.
 * Throws DRF's answer for a version not allowed.
 */
export function determineVersion(versioning: Versioning | undefined, request: FastifyRequest, mounted: string | undefined): string | undefined {
  if (!versioning) return undefined;
  if (versioning.scheme === 'path') return mounted;
  const named = versioning.scheme === 'query' ? queryParameters(request.url).get(versioning.param) : acceptedVersion(request.headers.accept, versioning.param);
  const version = named ?? versioning.default;
  if (version !== undefined && versioning.allowed.includes(version)) return version;
  if (versioning.scheme === 'query') throw notFound('Invalid version in query parameter.');
  throw new ApiError(406, 'not_acceptable', 'Invalid version in "Accept" header.');
}

/**
 * The query string's parameters but the one naming the version (the query scheme's), which the
 * versioning stage has read: no filter takes it for a field's name.
 */
export function withoutVersion(parameters: ReadonlyMap<string, string>, versioning: Versioning | undefined): ReadonlyMap<string, string> {
  if (versioning?.scheme !== 'query' || !parameters.has(versioning.param)) return parameters;
  const rest = new Map(parameters);
  rest.delete(versioning.param);
  return rest;
}

/** The answer to a path naming a version not allowed (the path scheme's). */
export const unknownPathVersion = (): ApiError => notFound('Invalid version in URL path.');
