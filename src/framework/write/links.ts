/**
 * What a write does for a record's relations (declare/relations.ts declares them): a slug set as the
 * foreign key of the record it names, and a many-to-many's links replaced by the ids (or slugs) the
 * values give. The write unit (unit.ts) runs these in the record's transaction.
 */
import { FieldError, type Field } from '../../core/fields.js';
import { RecordRefused } from '../../core/refused.js';
import type { Row } from '../../core/rows.js';
import type { Database } from '../../store/connection/database.js';
import { idWhere, idsWhere, missingIds, replaceJoinRows } from '../../store/read/join-rows.js';
import type { RecordId } from '../../store/read/records.js';
import { checkRequestingUser, type JoinTable, type Serializer, type SlugField, type SlugKey, type WriteContext } from '../declare/serializer.js';

/** A many-to-many's links to write: its join table, and the ids its value names (read, to refuse those of no record). */
export interface Links {
  readonly through: JoinTable;
  readonly ids: (database: Database) => Promise<RecordId[]>;
}

/** Whether `values` set a relation the serializer writes (a many-to-many, a slug). */
export function setsRelation(serializer: Serializer, values: Row): boolean {
  for (const name of serializer.relationInputs) if (name in values) return true;
  return false;
}

/**
 * A slug → the id of the record it names, set as the foreign key; 400 on the relation when none
 * has it, or when the key may name only the requesting user (checked as for the key itself).
 */
async function resolveSlug(database: Database, name: string, key: Field, slug: SlugKey, value: unknown, context: WriteContext): Promise<RecordId | null> {
  if (value === null) return null;
  const id = await idWhere(database, slug.target.table, slug.field, slug.target.fields[slug.field]!.toDriver(value));
  if (id === undefined) throw new RecordRefused({ [name]: [`No ${slug.target.table} with ${slug.field} "${String(value)}".`] });
  try {
    await checkRequestingUser(key, id, context);
  } catch (error) {
    if (error instanceof FieldError) throw new RecordRefused({ [name]: error.messages });
    throw error;
  }
  return id;
}

/** The record's own values (its slugs resolved to their keys), and the many-to-many links `values` set. */
export async function ownValues(database: Database, serializer: Serializer, values: Row, context: WriteContext): Promise<{ own: Row; links: Links[] }> {
  const own: Row = { ...values };
  const links: Links[] = [];
  for (const name of serializer.relationInputs) {
    if (!(name in own)) continue;
    const { through, slug, slugs } = serializer.relations[name]!;
    if (slug) own[slug.source] = await resolveSlug(database, name, serializer.model.fields[slug.source]!, slug, own[name], context);
    else links.push({ through: through!, ids: slugs ? linkedBySlugs(name, slugs, own[name] as unknown[]) : linkedByIds(name, through!, own[name] as RecordId[]) });
    delete own[name];
  }
  return { own, links };
}

/**
 * The record `id`'s links replaced by those `links` name, in `transaction`: ids that name no record
 * refuse the whole write (400 naming them).
 */
export async function writeLinks(transaction: Database, database: Database, links: readonly Links[], id: RecordId): Promise<void> {
  for (const { through, ids } of links) {
    const linked = await ids(transaction);
    try {
      await replaceJoinRows(transaction, through, id, linked);
    } catch (error) {
      if (!transaction.missingReference(error)) throw error;
      // A record named was deleted since it was found (PostgreSQL, read committed): refused as a missing one is.
      await ids(database);
      throw error;
    }
  }
}

/** The ids a many-to-many's body gives, read back to refuse those of no record (400 naming them). */
const linkedByIds =
  (name: string, through: JoinTable, ids: readonly RecordId[]) =>
  async (database: Database): Promise<RecordId[]> => {
    const missing = await missingIds(database, through.target, ids);
    if (missing.length > 0) throw new RecordRefused({ [name]: [`Invalid ${missing.length === 1 ? 'id' : 'ids'} ${missing.join(', ')}: no such ${through.target}.`] });
    return [...ids];
  };

/** The ids of the records a many-to-many's slugs name (exactly), in one read; 400 naming the slugs no record has. */
const linkedBySlugs =
  (name: string, { target, field }: SlugField, slugs: readonly unknown[]) =>
  async (database: Database): Promise<RecordId[]> => {
    const declared = target.fields[field]!;
    const found = await idsWhere(database, target.table, field, slugs.map((slug) => declared.toDriver(slug)));
    const missing = slugs.filter((slug) => !found.has(String(declared.toDriver(slug))));
    if (missing.length > 0) throw new RecordRefused({ [name]: [`No ${target.table} with ${field} ${missing.map((slug) => `"${String(slug)}"`).join(', ')}.`] });
    return slugs.map((slug) => found.get(String(declared.toDriver(slug)))!);
  };
