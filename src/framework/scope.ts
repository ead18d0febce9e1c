/**
 * A collection's scope: which records a request may reach, as conditions built from the request
 * (DRF's `get_queryset`, PostgREST's row-level security). The store ANDs them into every read and
 * write of the collection, so a record outside them is not found (404), never forbidden (403).
 */
import type { Condition, RecordScope } from '../core/list-query.js';
import type { Field } from '../core/fields.js';
import type { AuthUser } from './authentication/index.js';

/** What a request's scope and hooks may look at. */
export interface RequestContext {
  readonly user: AuthUser | null;
  /** The query string's parameters. */
  readonly parameters: ReadonlyMap<string, string>;
}

/**
 * Field → the value it must equal (null: is null; an array: one of its values), or a list of
 * conditions: filters `{ field, lookup, value }` of the query language, or `storeCondition`s.
 */
export type ScopeConditions = Readonly<Record<string, unknown>> | readonly Condition[];

export type Scope = (context: RequestContext) => ScopeConditions;

const conditionsOf = (conditions: ScopeConditions): readonly Condition[] =>
  Array.isArray(conditions)
    ? (conditions as readonly Condition[])
    : Object.entries(conditions).map(([field, value]): Condition =>
        value === null
          ? { field, lookup: 'isnull', value: true }
          : Array.isArray(value)
            ? { field, lookup: 'in', value }
            : { field, lookup: 'exact', value },
      );

/** The scope as this request sees it (undefined when the collection has none). */
export function scopeFor(scope: Scope | undefined, fields: Readonly<Record<string, Field>>, context: RequestContext): RecordScope | undefined {
  return scope && { fields, conditions: conditionsOf(scope(context)) };
}
