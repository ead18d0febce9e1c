/**
 * Relations beyond a record's own foreign keys (DRF's `PrimaryKeyRelatedField(many=True)`, Django's
 * reverse accessors and `ManyToManyField`): a reverse relation lists the ids of the records of
 * another table that name this one; a many-to-many lists, and is written as, the ids of the
 * records a join table links it to (or their slugs). Ids are read in the page's own statement (an
 * aggregate per record, see store/read/records.ts); nested records and slugs in one statement per
 * relation for the whole page (a batch); so a list stays a fixed number of queries. Both filter by
 * a related id (`tags=3`, `tags__in=3,4`), or slug, through EXISTS. Filters across a nested
 * foreign key (`author__username=alice`) are declared here too.
 */
import { fields, type Field, type JsonSchema, type Lookup } from '../../core/fields.js';
import type { Across } from '../../core/list-query.js';
import { table, type Table } from '../../core/model.js';
import type { JoinTable, Relation, Serializer, SlugField } from './serializer.js';
import { MAX_RELATED_IDS, relatedId, relatedIdsSchema } from './related-ids.js';

/** How a reverse or many-to-many relation renders: as ids (default), or each related record by `serializer`, read-only. */
export interface RelationOptions {
  readonly serializer?: Serializer;
}


/**
 * A many-to-many's rendering: RelationOptions', or `slug`: the linked records' unique field, shown
 * and written in place of their ids. `maxItems`: the most a write may give (MAX_RELATED_IDS at most,
 * and by default), counted as sent.
 */
export interface ManyToManyOptions extends RelationOptions {
  readonly slug?: SlugField;
  readonly maxItems?: number;
}

/** The field, which must be unique (as a field, or by a unique index of its own). */
function uniqueField({ target, field }: SlugField): Field {
  const declared = target.fields[field];
  const unique = declared?.unique || target.facts.indexes?.some((index) => index.unique && index.columns.length === 1 && index.columns[0] === field);
  if (!declared || !unique) throw new Error(`${target.table}.${field} names no record: it must be a unique field.`);
  return declared;
}

/** The related records' serializer, which must be of `table`'s model. */
function nestedOf(kind: string, table: string, serializer: Serializer | undefined): Serializer | undefined {
  if (serializer && serializer.model.table !== table) throw new Error(`A ${kind} relation to ${table} is rendered by a serializer of ${serializer.model.table}.`);
  if (serializer?.perUser) throw new Error(`A ${kind} relation to ${table} is rendered by a serializer with fields computed per user, which a nested list cannot show.`);
  return serializer;
}


/** A relation's value in a record and a body: a list of ids, or the slug field's value (null too, when the key is nullable). */
export function relationSchema(serializer: Serializer, name: string): JsonSchema {
  const { slug, slugs, maxItems = MAX_RELATED_IDS } = serializer.relations[name]!;
  if (slugs) return { ...relatedIdsSchema, items: slugs.target.fields[slugs.field]!.schema, maxItems };
  if (!slug) return { ...relatedIdsSchema, maxItems };
  const schema = slug.target.fields[slug.field]!.schema;
  return serializer.model.fields[slug.source]!.nullable ? { anyOf: [schema, { type: 'null' }] } : schema;
}

/** The lookups a relation is filtered with: a related id, or any of several. */
const RELATION_LOOKUPS: readonly Lookup[] = ['exact', 'in'];

const singular = (name: string): string => name.replace(/s$/, '');
const declaredJoins = new Map<string, JoinTable>();

/**
 * The join table of `source`'s records and `target`'s: `<source>_<target>` (or `name`) with columns
 * `<source singular>_id` and `<target singular>_id`, each a foreign key that cascades, together its
 * primary key (so a link is stored once); the second is indexed too (filters by a related id). One
 * name is one table: declaring it again gives the same one. It is part of the app's schema, so
 * `makemigrations` creates it.
 */
export function joinTable(source: string, target: string, { name = `${source}_${target}` }: { name?: string } = {}): JoinTable {
  const known = declaredJoins.get(name);
  if (known) {
    if (known.source !== source || known.target !== target) throw new Error(`Join table "${name}" links ${known.source} to ${known.target} already.`);
    return known;
  }
  // A table linked to itself (users following users) needs two names for its two keys.
  const [from, to] = source === target ? [`from_${singular(source)}_id`, `to_${singular(target)}_id`] : [`${singular(source)}_id`, `${singular(target)}_id`];
  const declaration = table(name, { [from]: fields.foreignKey(source), [to]: fields.foreignKey(target) }, { primaryKey: [from, to] });
  const join = { table: name, from, to, source, target, declaration };
  declaredJoins.set(name, join);
  return join;
}

/**
 * A serializer's relations: reverse foreign keys, many-to-many through a join table, by id, slug or nested
 * (docs/guides/serializers-and-fields.md, Relations).
 */
export const relations = {
  /**
   * The ids of the rows of `table` whose foreign key `via` names the record, ascending; read-only.
   * With `serializer` (of `table`'s model), those rows rendered by it instead.
   */
  reverse: (relatedTable: string, via: string, { serializer }: RelationOptions = {}): Relation => {
    const across = { table: relatedTable, link: via, own: 'id', column: 'id' };
    const nested = nestedOf('reverse', relatedTable, serializer);
    if (!nested) return { kind: 'reverse', aggregate: { kind: 'ids', table: relatedTable, via }, across };
    return { kind: 'reverse', across, serializer: nested, batch: { table: relatedTable, selection: nested.selection, via } };
  },
  /**
   * The ids of the records `through` links the record to, ascending; written as a list of ids,
   * replacing the links. With `serializer` (of the target's model), those records rendered by it
   * instead, read-only (a second relation over the same join table may write the ids).
   */
  manyToMany: (through: JoinTable, { serializer, slug, maxItems = MAX_RELATED_IDS }: ManyToManyOptions = {}): Relation => {
    const across = { table: through.table, link: through.from, own: 'id', column: through.to };
    const links = { table: through.table, from: through.from, to: through.to };
    if (!Number.isInteger(maxItems) || maxItems < 1 || maxItems > MAX_RELATED_IDS) throw new Error(`A many-to-many to ${through.target} takes maxItems from 1 to ${MAX_RELATED_IDS}.`);
    if (slug) {
      if (serializer) throw new Error(`A many-to-many to ${through.target} is rendered by a serializer or by a slug, not both.`);
      if (slug.target.table !== through.target) throw new Error(`A many-to-many to ${through.target} is rendered by a slug of ${slug.target.table}.`);
      const field = uniqueField(slug);
      const selection = { table: through.target, columns: ['id', slug.field], joins: [], ...(field.kind === 'bigint' && { int64: [slug.field] }) };
      return { kind: 'many_to_many', across: { ...across, named: { table: through.target, field: slug.field } }, through, maxItems, slugs: slug, batch: { table: through.target, selection, through: links } };
    }
    const nested = nestedOf('many-to-many', through.target, serializer);
    if (!nested) return { kind: 'many_to_many', aggregate: { kind: 'ids', table: through.table, via: through.from, column: through.to }, across, through, maxItems };
    return { kind: 'many_to_many', across, through, maxItems, serializer: nested, batch: { table: through.target, selection: nested.selection, through: links } };
  },
  /**
   * The foreign key `source` shown as the `field` of the record it names, and written by it (DRF's
   * `SlugRelatedField`): `owner: relations.slug('owner_id', User, 'username')` renders `"owner": "alice"`
   * and takes `{"owner": "alice"}`. The field must be unique (as a field, or by a unique index of its own).
   */
  slug: (source: string, target: Table, field: string): Relation => {
    uniqueField({ target, field });
    return { kind: 'slug', across: { table: target.table, link: 'id', own: source, column: field }, slug: { source, target, field } };
  },
};



/**
 * A filter the collection declares over related rows: a relation by name (`tags`), or a field of a
 * nested record's model after its name (`author__username`, through the nested foreign key).
 */
export function relatedFilter(serializer: Serializer, name: string): { field: Field; across: Across; lookups: readonly Lookup[] } | undefined {
  const relation = serializer.relations[name];
  const slugField = relation?.slug && relation.slug.target.fields[relation.slug.field]!;
  if (slugField) return { field: slugField, across: relation!.across, lookups: slugField.lookups };
  if (relation?.slugs) return { field: relation.slugs.target.fields[relation.slugs.field]!, across: relation.across, lookups: RELATION_LOOKUPS };
  if (relation) return { field: relatedId, across: relation.across, lookups: RELATION_LOOKUPS };
  const split = name.indexOf('__');
  const nested = split > 0 ? serializer.nested[name.slice(0, split)] : undefined;
  const column = name.slice(split + 2);
  const field = nested?.serializer.model.fields[column];
  if (!nested || !field || field.writeOnly) return undefined;
  return { field, across: { table: nested.serializer.model.table, link: 'id', own: nested.source, column }, lookups: field.lookups };
}
