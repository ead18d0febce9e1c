/** A list query: which records (filters, search), in which order, which page of them (by number or keyset). */
import type { Condition, Filter } from './conditions.js';
import type { Field } from './fields.js';
import type { Selection } from './rows.js';

export type { Condition, Filter, StoreCondition } from './conditions.js';

/**
 * A condition on a row's foreign key `column`: the row it names lies within one of `within` (or,
 * where the key is `nullable`, it names none). How a row of a nested collection, or of a table no
 * collection serves, is visible through the rows it belongs to. The framework's, never an app's.
 */
export interface Reference {
  readonly reference: { readonly column: string; readonly table: string; readonly within: readonly RecordScope[]; readonly nullable: boolean };
}

/** A condition of a scope as the store applies it: an app's, or a reference the framework adds. */
export type ScopeCondition = Condition | Reference;

export interface Ordering {
  readonly field: string;
  readonly descending: boolean;
}

export interface ListQuery {
  readonly page: number;
  readonly pageSize: number;
  /** The first record's position, when the page starts anywhere (limit/offset pagination) rather than at a page boundary. */
  readonly offset?: number;
  /** Every term must be found in at least one search field. */
  readonly search: readonly string[];
  readonly ordering: readonly Ordering[];
  readonly filters: readonly Filter[];
  /** Which records the request may reach at all (a collection's scope), beside its own filters. */
  readonly scope?: readonly ScopeCondition[];
}

/** How many matching records come before the page's first. */
export const firstRow = (query: ListQuery): number => query.offset ?? (query.page - 1) * query.pageSize;
/**
 * A filter over related rows (`tags=3`, `author__username=alice`): a record matches when a row of
 * `table` whose `link` column equals the record's `own` column meets the filter on `column`.
 */
export interface Across {
  readonly table: string;
  readonly link: string;
  readonly own: string;
  readonly column: string;
  /** Set where `column` names a row of another table by its id (a join table's key), and the filter is on that row's `field` instead. */
  readonly named?: { readonly table: string; readonly field: string };
}

/** What a list reads: the selection, the fields its filters and ordering name, the fields searched. */
export interface ListSource {
  readonly selection: Selection;
  readonly fields: Readonly<Record<string, Field>>;
  readonly searchFields: readonly string[];
  /** Filters whose field is a related table's column, by filter name (see Across). */
  readonly across?: Readonly<Record<string, Across>>;
}

/** A collection's scope as one request sees it: the conditions, over the model's fields (and the filters across relations its conditions may name). */
export interface RecordScope {
  readonly fields: Readonly<Record<string, Field>>;
  readonly conditions: readonly ScopeCondition[];
  readonly across?: Readonly<Record<string, Across>>;
}

/**
 * Which rows of each table one request sees (row-level security's USING), carried by the
 * request's database: every statement the store builds over a scoped table, as a join, a
 * subquery, a filter across a relation or a check of a written key, keeps to the table's scopes.
 */
export interface TableScopes {
  /** The tables some request may not see whole (fixed for the app); every other one is seen whole. */
  readonly scopedTables: ReadonlySet<string>;
  /** A scoped table's scopes for this request, one of which each row it sees meets (undefined: every row). */
  scopesOf(table: string): readonly RecordScope[] | undefined;
}

/** Where a cursor page starts: the boundary row's driver values (ordering fields, then id), and which way to read. */
export interface Keyset {
  readonly boundary: readonly unknown[];
  readonly backwards: boolean;
}

/** How a page's count is read: exactly, as the planner's estimate, or not at all (`Prefer: count=…`). */
export type CountMode = 'exact' | 'estimated' | 'none';
