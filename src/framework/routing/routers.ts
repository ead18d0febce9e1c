/**
 * The app's routers: where each mounts which collections, checked at start-up, and the defaults
 * (pagination, envelope) the app gives the collections that name none of their own.
 */
import type { Collection, Envelope, Pagination } from '../declare/collection.js';
import { DEFAULT_PREFIX, type TrailingSlash } from '../base/style.js';

export interface RouterDefinition {
  /** Where the collections are mounted, e.g. `/api` (no trailing slash). */
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
}

const PREFIX = /^(\/[A-Za-z0-9._~-]+)*$/;

/** The routers (one at /api/v1 by default), each prefix checked and its collections found by name; a wrong name stops start-up. */
export function mountedRouters(routers: readonly RouterDefinition[] | undefined, collections: readonly Collection[]): MountedRouter[] {
  const byName = new Map(collections.map((collection) => [collection.name, collection]));
  const prefixes = new Set<string>();
  return (routers ?? [DEFAULT_ROUTER]).map((router: RouterDefinition) => {
    if (!PREFIX.test(router.prefix)) throw new Error(`routers: prefix "${router.prefix}" must be a path like /api, without a trailing slash.`);
    if (prefixes.has(router.prefix)) throw new Error(`routers: two routers have the prefix ${router.prefix}.`);
    prefixes.add(router.prefix);
    const mounted = (router.collections ?? [...byName.keys()]).map((name) => {
      const found = byName.get(name);
      if (!found) throw new Error(`routers: no collection named "${name}".`);
      return found;
    });
    return { prefix: router.prefix, trailingSlash: router.trailingSlash ?? DEFAULT_ROUTER.trailingSlash, collections: mounted, root: router.root ?? DEFAULT_ROUTER.root };
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
