/** A model: a table and its fields. Every model has an integer primary key `id`. */
import type { Field } from './fields.js';

export interface Model {
  readonly table: string;
  readonly fields: Readonly<Record<string, Field>>;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

export function model(table: string, fields: Record<string, Field>): Model {
  // Names become SQL identifiers; only plain lower-case names are allowed, checked once here.
  for (const name of [table, ...Object.keys(fields)]) {
    if (!IDENTIFIER.test(name)) throw new Error(`"${name}" is not a valid table or field name (use [a-z0-9_]).`);
  }
  if (!fields.id) throw new Error(`Model "${table}" needs an "id" field (fields.id()).`);
  return { table, fields };
}
