/**
 * Conditions written by code in the query language's vocabulary: `{ sku: 'A1', stock__gte: 3 }`,
 * each key a field and optionally `__` and one of its lookups, each value already of the field's
 * type (a list for `in`, two bounds for `range`, a boolean for `isnull`). Django's `filter(...)`.
 */
import { lookups, type Field, type Lookup } from './fields.js';
import type { Filter } from './list-query.js';
import type { Row } from './rows.js';

/**
 * A condition's key split into its field and lookup: `stock__gte` → stock, gte; a key whose last
 * `__` is followed by none of `known` names a field (compared exactly), `__` and all.
 */
export function splitLookup<L extends string>(key: string, known: readonly L[]): { readonly field: string; readonly lookup: L | undefined } {
  const split = key.lastIndexOf('__');
  const suffix = split > 0 ? key.slice(split + 2) : '';
  return (known as readonly string[]).includes(suffix) ? { field: key.slice(0, split), lookup: suffix as L } : { field: key, lookup: undefined };
}

/** `where`'s conditions as filters; an unknown field, or a lookup named that its field does not take, is a programming error (thrown). */
export function filtersOf(table: string, fields: Readonly<Record<string, Field>>, where: Row): Filter[] {
  return Object.entries(where).map(([key, value]) => {
    const { field, lookup: named } = splitLookup<Lookup>(key, lookups);
    const lookup = named ?? 'exact';
    const declared = fields[field];
    if (!declared) throw new Error(`${table} has no field "${field}"`);
    if (lookup === 'exact' && value === null) return { field, lookup: 'isnull', value: true };
    if (named && !declared.lookups.includes(lookup)) throw new Error(`${table}.${field} does not take the lookup "${lookup}"`);
    return { field, lookup, value };
  });
}

/** Whether every condition is an exact value (the shapes a record store compiles once). */
export const exactOnly = (where: Row): boolean => Object.keys(where).every((key) => !key.includes('__'));
