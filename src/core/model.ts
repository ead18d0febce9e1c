/** A model: a table and its fields. Every model has an integer primary key `id`. */
import type { Field } from './fields.js';

/**
 * `Rules` are what the layers above keep with a model (the framework's permissions and update
 * rules); the store reads only its table and fields.
 */
export interface Model<Rules = unknown> {
  readonly table: string;
  readonly fields: Readonly<Record<string, Field>>;
  readonly rules?: Rules;
}

/** What the core reads of a model's rules: columns read with every record, named like fields. */
export interface ReadColumns {
  readonly reads?: readonly string[];
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

export function model<Rules extends ReadColumns>(table: string, fields: Record<string, Field>, rules?: Rules): Model<Rules> {
  // Names become SQL identifiers; only plain lower-case names are allowed, checked once here.
  for (const name of [table, ...Object.keys(fields), ...(rules?.reads ?? [])]) {
    if (!IDENTIFIER.test(name)) throw new Error(`"${name}" is not a valid table or field name (use [a-z0-9_]).`);
  }
  if (!fields.id) throw new Error(`Model "${table}" needs an "id" field (fields.id()).`);
  return { table, fields, rules };
}
