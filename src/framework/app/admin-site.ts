/**
 * The collections the admin shows: each router's top-level lists (nested collections and
 * singletons have no change list of their own yet), grouped by the router that mounts them —
 * Restfold has no Django apps — and reached through that router's paths.
 */
import { endOf } from '../base/style.js';
import type { AdminCollection } from '../admin/index.js';
import type { MountedRouter } from '../routing/routers.js';

/** The admin's own pages, which a collection's name would collide with. */
const ADMIN_PATHS: ReadonlySet<string> = new Set(['login', 'logout']);

export function adminCollections(routers: readonly MountedRouter[]): AdminCollection[] {
  const seen = new Set<string>();
  return routers.flatMap((router) => {
    const end = endOf(router.trailingSlash);
    return router.collections
      .filter((collection) => !collection.parent && !collection.singleton && collection.builtInActions.has('list') && !ADMIN_PATHS.has(collection.name))
      .filter((collection) => !seen.has(collection.name) && seen.add(collection.name))
      .map((collection) => ({
        collection,
        group: router.prefix,
        list: `${router.prefix}/${collection.name}${end}`,
        detail: (id: string) => `${router.prefix}/${collection.name}/${encodeURIComponent(id)}${end}`,
      }));
  });
}
