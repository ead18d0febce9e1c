/**
 * The app's routers: where each mounts which collections, checked at start-up, and the defaults
 * (pagination, envelope) the app gives the collections that name none of their own.
 */
import type { Collection, Envelope, Pagination } from '../declare/collection.js';
import { DEFAULT_PREFIX, type TrailingSlash } from '../base/style.js';
import type { Versioning } from '../stages/versioning.js';

/** A router: where the collections are mounted (`prefix`) and how their paths end (docs/api-style.md). */
export interface RouterDefinition {
  /**
   * Where the collections are mounted, e.g. `/api` (no trailing slash). Under the versions' path
   * scheme it holds `{version}` (`/api/v{version}`), and the router is mounted once per version.
   */
  readonly prefix: string;
  /** Default `required`. */
  readonly trailingSlash?: TrailingSlash;
  /** The names of the app's collections this router mounts; all of them when left out. */
  readonly collections?: readonly string[];
  /**
   * Whether the router serves an API root at its prefix, listing its collections (default true;
   * false is DRF's SimpleRouter): a router mounted under another's collection (`/api/articles`, for
   * a `feed`) leaves that path to the collection.
   */
  readonly root?: boolean;
}

const DEFAULT_ROUTER: Required<Omit<RouterDefinition, 'collections'>> = { prefix: DEFAULT_PREFIX, trailingSlash: 'required', root: true };

/** A router with its collections found and its defaults filled in. */
export interface MountedRouter {
  readonly prefix: string;
  readonly trailingSlash: TrailingSlash;
  readonly collections: readonly Collection[];
  readonly root: boolean;
  /** Under the versions' path scheme: the version its prefix names. */
  readonly version?: string;
  /** Under the versions' path scheme: its prefix as declared, `{version}` in it; two mounts of one router share it. */
  readonly pattern?: string;
}

const PREFIX = /^(\/[A-Za-z0-9._~-]+)*$/;
const VERSION_PLACEHOLDER = '{version}';
/** The one router of an app whose clients name the version in the path. */
const VERSIONED_ROUTER: RouterDefinition = { prefix: '/api/v{version}' };

/**
 * Each router once, or under the versions' path scheme once per version, `{version}` in its prefix
 * spelled out (DRF's URLPathVersioning: `/api/v1/…`, `/api/v2/…`).
 */
function perVersion(routers: readonly RouterDefinition[], versioning: Versioning | undefined): (RouterDefinition & { version?: string; pattern?: string })[] {
  return routers.flatMap((router) => {
    const holes = router.prefix.split(VERSION_PLACEHOLDER).length - 1;
    if (versioning?.scheme !== 'path') {
      if (holes > 0) throw new Error(`routers: prefix "${router.prefix}" holds {version}, which only the versions' path scheme fills in.`);
      return [router];
    }
    if (holes !== 1) throw new Error(`routers: under the versions' path scheme, prefix "${router.prefix}" must hold {version} once (as /api/v{version} does).`);
    return versioning.allowed.map((version) => ({ ...router, prefix: router.prefix.replace(VERSION_PLACEHOLDER, version), version, pattern: router.prefix }));
  });
}

/**
 * The routers (one at /api/v1 by default; at /api/v{version} under the versions' path scheme), each
 * prefix checked and its collections found by name; a wrong name stops start-up.
 */
export function mountedRouters(routers: readonly RouterDefinition[] | undefined, collections: readonly Collection[], versioning?: Versioning): MountedRouter[] {
  const byName = new Map(collections.map((collection) => [collection.name, collection]));
  const prefixes = new Set<string>();
  const declared = routers ?? [versioning?.scheme === 'path' ? VERSIONED_ROUTER : DEFAULT_ROUTER];
  return perVersion(declared, versioning).map((router) => {
    if (!PREFIX.test(router.prefix)) throw new Error(`routers: prefix "${router.prefix}" must be a path like /api, without a trailing slash.`);
    if (prefixes.has(router.prefix)) throw new Error(`routers: two routers have the prefix ${router.prefix}.`);
    prefixes.add(router.prefix);
    const mounted = (router.collections ?? [...byName.keys()]).map((name) => {
      const found = byName.get(name);
      if (!found) throw new Error(`routers: no collection named "${name}".`);
      return found;
    });
    const { version, pattern } = router;
    return { prefix: router.prefix, trailingSlash: router.trailingSlash ?? DEFAULT_ROUTER.trailingSlash, collections: mounted, root: router.root ?? DEFAULT_ROUTER.root, ...(version !== undefined && { version, pattern }) };
  });
}

/** Each collection with the app's pagination and envelope where it names none of its own. */
export const withAppDefaults = (
  collections: readonly Collection[],
  defaults: { pagination?: Pagination; envelope?: (collection: string) => Envelope | undefined },
): Collection[] =>
  collections.map((collection) => ({
    ...collection,
    pagination: collection.pagination ?? defaults.pagination,
    envelope: collection.envelope ?? defaults.envelope?.(collection.name),
  }));
