/**
 * The collections the admin shows: those the app's `admin` declaration names, with its options, or
 * else each router's top-level lists (nested collections and singletons have no change list of
 * their own: a nested one is an inline of its parent's form) — grouped by the router that mounts
 * them (Restfold has no Django apps) and reached through that router's paths.
 */
import { endOf } from '../base/style.js';
import type { AdminCollection } from '../admin/index.js';
import { checkedModelAdmin, type AdminOptions, type ModelAdmin } from '../admin/declare.js';
import type { Collection } from '../declare/collection.js';
import type { MountedRouter } from '../routing/routers.js';

/** The admin's own pages, which a collection's name would collide with (`auth`: the framework's users and groups). */
const ADMIN_PATHS: ReadonlySet<string> = new Set(['login', 'logout', 'auth']);

const listable = (collection: Collection): boolean => !collection.parent && !collection.singleton && collection.builtInActions.has('list') && !ADMIN_PATHS.has(collection.name);

export function adminCollections(routers: readonly MountedRouter[], declared: AdminOptions | undefined): AdminCollection[] {
  const chosen = declared?.collections?.map(checkedModelAdmin);
  for (const { collection } of chosen ?? []) {
    if (!listable(collection)) throw new Error(`admin: ${collection.name} has no change list (nested, a singleton, without list, or named as an admin page).`);
    if (!routers.some((router) => router.collections.some(({ name }) => name === collection.name))) throw new Error(`admin: ${collection.name} is not one of the app's collections.`);
  }
  // By name: the routers serve the collections as the app's defaults and style made them.
  const options = new Map<string, ModelAdmin['options']>(chosen?.map((entry) => [entry.collection.name, entry.options]));
  const seen = new Set<string>();
  const entries = routers.flatMap((router) => {
    const end = endOf(router.trailingSlash);
    const record = (collection: Collection, id: string) => `${router.prefix}/${collection.name}/${encodeURIComponent(id)}`;
    return router.collections
      .filter((collection) => (chosen ? options.has(collection.name) : listable(collection)))
      .filter((collection) => !seen.has(collection.name) && seen.add(collection.name))
      .map((collection): AdminCollection => ({
        collection,
        options: options.get(collection.name) ?? {},
        inlines: (options.get(collection.name)?.inlines ?? []).flatMap(({ name }) => router.collections.filter((served) => served.name === name)),
        group: router.prefix,
        list: `${router.prefix}/${collection.name}${end}`,
        detail: (id) => `${record(collection, id)}${end}`,
        action: (id, name) => {
          const action = collection.customActions[name]!;
          return `${record(collection, id)}/${action.path ?? name}${end}`;
        },
        nestedList: (parentId, child) => `${record(collection, parentId)}/${child.name}${end}`,
        nestedDetail: (parentId, child, id) => `${record(collection, parentId)}/${child.name}/${encodeURIComponent(id)}${end}`,
      }));
  });
  // The declaration's order, as Django's registry keeps it.
  return chosen ? chosen.map(({ collection }) => entries.find((entry) => entry.collection.name === collection.name)!) : entries;
}
