/** Conditions of the query language, which lists, scopes and aggregates' related rows are filtered by. */
import type { Lookup } from './fields.js';

export interface Filter {
  readonly field: string;
  readonly lookup: Lookup;
  /** Parsed by the field: one operand, a list for `in`, two bounds for `range`, a boolean for `isnull`. */
  readonly value: unknown;
}

/**
 * A condition the filter vocabulary cannot say, built by the store (`storeCondition` in
 * store/conditions/store-condition.ts) from its own expression builder: opaque to the core and the framework.
 */
export interface StoreCondition {
  readonly storeCondition: unknown;
}

/** One condition a record must meet: a filter of the query language, or a store-level expression. */
export type Condition = Filter | StoreCondition;
