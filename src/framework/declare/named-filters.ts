/**
 * Filters named by the app (django-filter's `CharFilter(field_name='author__username')`): a query
 * parameter of the app's choosing whose value is matched against a field at the end of a path
 * through the model's own fields, its foreign keys, the tables whose foreign key names it (reverse
 * relations, by table name) and the serializer's nested records and relations (slugs too):
 * `filters: { author: 'author_id__username', favorited: 'favorites__user_id__username', tag: 'tags__name' }`.
 * A path may end in a lookup (`tag_list__has_element`); the parameter then always applies it. Paths
 * are resolved once, at start-up, against the app's models: the store matches them with an EXISTS
 * over the related rows (store/conditions/filters.ts), every value bound.
 */
import type { Field, Lookup } from '../../core/fields.js';
import { lookups as LOOKUPS } from '../../core/fields.js';
import type { Across } from '../../core/list-query.js';
import type { Table } from '../../core/model.js';
import type { Collection, NamedFilter } from './collection.js';
import { internalColumns } from './model.js';


/** One step of a path: through a foreign key of the current table, or into a table whose foreign key `link` names it. */
type Hop = { readonly kind: 'forward'; readonly key: string; readonly table: Table } | { readonly kind: 'reverse'; readonly link: string; readonly table: Table };

const NAME = /^[a-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*$/;

/** The path's hops, its last field and the lookup it ends in (`exact` when it names none). */
function walk(collection: Collection, path: string, tables: ReadonlyMap<string, Table>): { hops: Hop[]; column: string; field: Field; lookup: string } {
  const { serializer } = collection;
  const segments = path.split('__');
  const hops: Hop[] = [];
  const tableOf = (name: string): Table => {
    const found = tables.get(name);
    if (!found) throw new Error(`the table "${name}" is no model of the app`);
    return found;
  };
  let current: Table = serializer.model;
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!;
    const next = segments[index + 1];
    const field = current.fields[segment];
    const referenced = field?.references && next !== undefined ? tables.get(field.references) : undefined;
    if (referenced?.fields[next!]) {
      hops.push({ kind: 'forward', key: segment, table: referenced });
      current = referenced;
      continue;
    }
    if (field) {
      if (segments.length > index + 2) throw new Error(`"${segments.slice(index + 1).join('__')}" follows the field "${segment}"`);
      if (next !== undefined && !(LOOKUPS as readonly string[]).includes(next)) throw new Error(`"${next}" is no lookup, nor a field of what "${segment}" names`);
      return { hops, column: segment, field, lookup: next ?? 'exact' };
    }
    // The serializer's own names, at the start: a nested record, a reverse or many-to-many relation.
    const nested = hops.length === 0 ? serializer.nested[segment] : undefined;
    const relation = hops.length === 0 ? serializer.relations[segment] : undefined;
    const forward = nested ? { key: nested.source, table: nested.serializer.model } : relation?.slug ? { key: relation.slug.source, table: relation.slug.target } : undefined;
    if (forward) {
      current = forward.table;
      hops.push({ kind: 'forward', ...forward });
    } else if (relation?.through) {
      hops.push({ kind: 'reverse', link: relation.through.from, table: tableOf(relation.through.table) });
      current = tableOf(relation.through.target);
      hops.push({ kind: 'forward', key: relation.through.to, table: current });
    } else if (relation?.kind === 'reverse') {
      current = tableOf(relation.across.table);
      hops.push({ kind: 'reverse', link: relation.across.link, table: current });
    } else {
      // A table whose foreign key names this one (Django's reverse relation, by the table's name).
      const related = tables.get(segment);
      const links = related ? Object.keys(related.fields).filter((name) => related.fields[name]!.references === current.table) : [];
      if (!related) throw new Error(`"${segment}" is no field of ${current.table}, nor a table of the app`);
      if (links.length !== 1) throw new Error(`${segment} has ${links.length} foreign keys to ${current.table}, not one`);
      hops.push({ kind: 'reverse', link: links[0]!, table: related });
      current = related;
    }
  }
  throw new Error('it ends in no field');
}

/** The hops as the store's Across: at most one reverse relation, then at most one foreign key; or one foreign key. */
function acrossOf(hops: readonly Hop[], column: string): Across | undefined | null {
  const [first, second] = hops;
  if (!first) return undefined;
  if (hops.length > 2 || (second && (first.kind !== 'reverse' || second.kind !== 'forward'))) return null;
  if (first.kind === 'forward') return { table: first.table.table, link: 'id', own: first.key, column };
  if (!second) return { table: first.table.table, link: first.link, own: 'id', column };
  return { table: first.table.table, link: first.link, own: 'id', column: second.key, named: { table: second.table.table, field: column } };
}

/**
 * The collection with its named filters in its query rules and list source: each parameter taking
 * one value (`exact` as far as clients see), matched by its path's lookup. Throws, at start-up, for
 * a path the app's models cannot serve.
 */
export function withNamedFilters(collection: Collection, tables: ReadonlyMap<string, Table>, reserved: readonly string[]): Collection {
  const declared = Object.entries(collection.namedFilters);
  if (declared.length === 0) return collection;
  const fields: Record<string, Field> = { ...collection.queryRules.fields };
  const filters = new Map(collection.queryRules.filters);
  const named = new Map<string, NamedFilter>();
  const across: Record<string, Across> = { ...collection.listSource.across };
  for (const [name, path] of declared) {
    const where = `${collection.name}: filter "${name}"`;
    if (!NAME.test(name) || name.includes('__') || reserved.includes(name) || filters.has(name)) throw new Error(`${where} needs a name of its own (letters, digits, single underscores).`);
    let walked: ReturnType<typeof walk>;
    try {
      walked = walk(collection, path, tables);
    } catch (error) {
      throw new Error(`${where}: cannot follow "${path}": ${(error as Error).message}.`);
    }
    const { hops, column, field, lookup } = walked;
    if (field.writeOnly) throw new Error(`${where}: "${path}" ends in a write-only field.`);
    if (internalColumns(hops.at(-1)?.table ?? collection.serializer.model).includes(column)) throw new Error(`${where}: "${path}" ends in a field only the framework reads.`);
    if (!field.lookups.includes(lookup as Lookup)) throw new Error(`${where}: "${path}" ends in a lookup that does not fit its field.`);
    const related = acrossOf(hops, column);
    if (related === null) throw new Error(`${where}: "${path}" goes through more than one reverse relation and one foreign key after it.`);
    fields[name] = field;
    filters.set(name, ['exact']);
    if (related) across[name] = related;
    named.set(name, { field: related ? name : column, lookup: lookup as Lookup });
  }
  return {
    ...collection,
    queryRules: { ...collection.queryRules, fields, filters, named },
    listSource: { ...collection.listSource, fields, across },
  };
}
