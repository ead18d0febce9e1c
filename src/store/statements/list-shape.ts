/**
 * A list query's shape: what its statement's SQL depends on (which filters, lookups, search terms,
 * ordering), apart from the values it binds. Lists of one shape run one compiled statement
 * (store/statements/compiled.ts) with their own values, so a page of the same filters skips building and
 * compiling its statement again.
 */
import { Day, type Lookup } from '../../core/fields.js';
import type { Filter, ListQuery, ScopeCondition } from '../../core/list-query.js';

export interface ListShape {
  /** Names the shape: two queries of one key make the same SQL of their values. */
  readonly key: string;
  /** The values the query binds, in the order `query` takes them. */
  readonly values: readonly unknown[];
  /** The query with these in place of its values: placeholders, or the values themselves. */
  query(standIns: readonly unknown[]): ListQuery;
}

/** Lookups whose value is a list of values, each bound. */
const LISTS: ReadonlySet<Lookup> = new Set(['in', 'range']);

/**
 * An `in` list as bound: its length rounded up to a power of two, its last value repeated (which
 * matches the same rows). Each length is a statement of its own, prepared on every connection that
 * runs it, and a live stream reads changed records by lists of 1 to 500 ids: 500 lengths took ~27 MiB
 * per SQLite connection (bench/SOAK.md); rounded, they are 10.
 */
function padded(values: readonly unknown[]): readonly unknown[] {
  if (values.length < 2) return values;
  const length = 2 ** Math.ceil(Math.log2(values.length));
  return length === values.length ? values : [...values, ...Array<unknown>(length - values.length).fill(values.at(-1))];
}

/** The values a filter binds: none for `isnull` (its value chooses the SQL), each of a list's (an `in` list padded), or its one. */
function boundValues(filter: Filter): readonly unknown[] {
  if (filter.lookup === 'isnull') return [];
  if (filter.lookup === 'in') return padded(filter.value as readonly unknown[]);
  return LISTS.has(filter.lookup) ? (filter.value as readonly unknown[]) : [filter.value];
}

/** The filter's part of a key: its field, its lookup, and what of its value chooses the SQL. */
function filterKey(filter: Filter): string {
  if (filter.lookup === 'isnull') return `${filter.field}~isnull=${Boolean(filter.value)}`;
  if (LISTS.has(filter.lookup)) return `${filter.field}~${filter.lookup}*${boundValues(filter).length}`;
  return `${filter.field}~${filter.lookup}`;
}

/**
 * The query's shape; undefined where a value chooses its SQL in a way no key here tells (a bare
 * date is a range of a day), or a condition is the store's own (an expression, a reference
 * carrying another table's scopes): those are built for each query, as before.
 */
export function listShapeOf(query: ListQuery): ListShape | undefined {
  const conditions: readonly ScopeCondition[] = query.scope ? [...query.filters, ...query.scope] : query.filters;
  const values: unknown[] = [];
  const keys: string[] = [];
  for (const condition of conditions) {
    if (!('lookup' in condition)) return undefined;
    const bound = boundValues(condition);
    if (bound.some((value) => value instanceof Day)) return undefined;
    values.push(...bound);
    keys.push(filterKey(condition));
  }
  values.push(...query.search);
  const ordering = query.ordering.map(({ field, descending }) => (descending ? `-${field}` : field));
  const key = `${keys.join(',')};${query.filters.length};${query.search.length};${ordering.join(',')}`;
  return {
    key,
    values,
    query(standIns) {
      let next = 0;
      const standIn = (filter: Filter): Filter => {
        const count = boundValues(filter).length;
        const taken = standIns.slice(next, (next += count));
        if (filter.lookup === 'isnull') return filter;
        return { ...filter, value: LISTS.has(filter.lookup) ? taken : taken[0] };
      };
      const filters = query.filters.map(standIn);
      const scope = query.scope?.map((condition) => standIn(condition as Filter));
      const search = standIns.slice(next, next + query.search.length) as string[];
      return { ...query, filters, search, ...(scope && { scope }) };
    },
  };
}
