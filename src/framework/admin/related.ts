/** What a form's related fields pick from: the admin's own collection of the records they name, searched by its lookup page. */
import type { AuthUser } from '../base/auth-user.js';
import type { Serializer } from '../declare/serializer.js';
import { may, type AdminSite } from './site.js';
import { adminOf } from './values.js';

/** The table a writable field or relation input names records of: a foreign key's, a many-to-many's, a slug's. */
function relatedTable(serializer: Serializer, name: string): string | undefined {
  const relation = serializer.relations[name];
  return relation?.through?.target ?? relation?.slug?.target.table ?? serializer.model.fields[name]?.references;
}

/**
 * The lookup page of each related field (by its shown name) whose records the admin shows and the
 * user may view: the picker's search (Django's raw-id lookup and autocomplete).
 */
export async function lookupsOf(site: AdminSite, user: AuthUser, serializer: Serializer): Promise<Record<string, string>> {
  const lookups: Record<string, string> = {};
  for (const name of [...serializer.writable, ...serializer.relationInputs]) {
    const table = relatedTable(serializer, name);
    const target = table === undefined ? undefined : adminOf(site, table);
    if (target && (await may(user, target.collection, 'view'))) lookups[serializer.shown(name)] = `${site.root}${target.collection.name}/lookup/`;
  }
  return lookups;
}

