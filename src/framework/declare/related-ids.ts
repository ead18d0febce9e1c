/**
 * Related ids and slugs as a body or a query string gives them: parsed and bounded, before
 * anything reads the records they name.
 */
import { FieldError, fields, type Field, type JsonSchema } from '../../core/fields.js';
import type { RecordId } from '../../store/read/records.js';

/** The most ids one write may set, as the query language's `in` takes at most 1000 values. */
export const MAX_RELATED_IDS = 1000;

/** One related id, in a body or a query string. */
export const relatedId: Field = fields.integer();

/** The ids' JSON schema; in a body, unique and at most MAX_RELATED_IDS. */
export const relatedIdsSchema: JsonSchema = { type: 'array', items: relatedId.schema, maxItems: MAX_RELATED_IDS };

/** A body's list of related ids (at most `max`) → the ids, each once, in the order sent; throws FieldError. */
export function parseRelatedIds(value: unknown, max = MAX_RELATED_IDS): RecordId[] {
  if (!Array.isArray(value)) throw new FieldError('Expected a list of ids.');
  if (value.length > max) throw new FieldError(`Give at most ${max} ids.`);
  const ids = value.map((id) => {
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw new FieldError(`Expected a list of ids; ${JSON.stringify(id) ?? 'undefined'} is no id.`);
    return id;
  });
  return [...new Set(ids)];
}

/** A body's list of slugs (at most `max`) → each parsed by `field`, once each, in the order sent; throws FieldError naming what is no slug. */
export async function parseRelatedSlugs(field: Field, value: unknown, max = MAX_RELATED_IDS): Promise<unknown[]> {
  if (!Array.isArray(value)) throw new FieldError('Expected a list.');
  if (value.length > max) throw new FieldError(`Give at most ${max}.`);
  const parsed = new Map<string, unknown>();
  for (const item of value) {
    try {
      if (item === null) throw new FieldError('This field may not be null.');
      const slug = await field.parse(item);
      parsed.set(String(slug), slug);
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      throw new FieldError(`${JSON.stringify(item) ?? 'undefined'}: ${error.messages.join(' ')}`);
    }
  }
  return [...parsed.values()];
}
