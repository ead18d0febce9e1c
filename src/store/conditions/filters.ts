/**
 * Conditions → SQL: the query language's filters `{ field, lookup, value }` and store-level
 * expressions, over a table as a query names it (its own name, or a join's alias). Lists filter
 * with them, scoped reads add a collection's scope with them, and every related table a statement
 * reaches is kept to the request's scopes of it (store/conditions/table-scopes.ts).
 */
import { expressionBuilder, sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { Day, type Field } from '../../core/fields.js';
import type { Across, Filter, RecordScope, Reference, ScopeCondition } from '../../core/list-query.js';
import { storeExpressionOf } from './store-condition.js';
import { escapeLike, storeDatabase, type Database, type Tables } from '../connection/database.js';
import { lift } from '../statements/placeholder.js';
import { scopesOf } from './table-scopes.js';

type Where = ExpressionBuilder<Tables, string>;

/**
 * Each condition, over `table` (the name its row has in the query): fields by the collection's
 * `fields`, those filtering related rows (`across`) as an EXISTS over the related rows the request
 * may see, a reference as its key naming a row the request may see.
 */
export function compileConditions(
  database: Database,
  fields: Readonly<Record<string, Field>>,
  table: string,
  conditions: readonly ScopeCondition[],
  eb: Where,
  across: Readonly<Record<string, Across>> = {},
): Expression<SqlBool>[] {
  return conditions.map((condition) => {
    if ('reference' in condition) return compileReference(database, condition, table, eb);
    const expression = storeExpressionOf(condition);
    if (expression) return expression(eb, table);
    const filter = condition as Filter;
    const field = fields[filter.field];
    if (!field) throw new Error(`${table} has no field "${filter.field}" to filter on.`);
    const related = across[filter.field];
    if (!related) return compileFilter(database, field, `${table}.${filter.field}`, filter, eb);
    // EXISTS rather than a join: a record matched by several related rows is still one record.
    const alias = `across_${filter.field}`;
    const { named } = related;
    const namedAlias = `named_${filter.field}`;
    const matches = named
      ? sql<SqlBool>`${sql.ref(`${alias}.${related.column}`)} in (select ${sql.ref(`${namedAlias}.id`)} from ${sql.table(named.table)} as ${sql.ref(namedAlias)} where ${visibleAnd(database, compileFilter(database, field, `${namedAlias}.${named.field}`, filter, eb), named.table, namedAlias)})`
      : compileFilter(database, field, `${alias}.${related.column}`, filter, eb);
    return sql<SqlBool>`exists (select 1 from ${sql.table(related.table)} as ${sql.ref(alias)} where ${sql.ref(`${alias}.${related.link}`)} = ${sql.ref(`${table}.${related.own}`)} and ${visibleAnd(database, matches, related.table, alias)})`;
  });
}

/** `condition`, and the row named `alias` (of `table`) visible to the request: a related row it may not see matches nothing. */
function visibleAnd(database: Database, condition: Expression<SqlBool>, table: string, alias: string): Expression<SqlBool> {
  const within = scopesOf(database, table);
  return within ? expressionBuilder<Tables, string>().and([condition, withinScopes(database, within, alias)]) : condition;
}

/** The row named `alias` (of `table`) visible to the request, or undefined where it sees every row of the table. */
export function visibleRow(database: Database, table: string, alias: string): Expression<SqlBool> | undefined {
  const within = scopesOf(database, table);
  return within && withinScopes(database, within, alias);
}

/** A related row (named `table` in the query) within one of the scopes at least: each of that scope's conditions holds. */
function withinScopes(database: Database, scopes: readonly RecordScope[], table: string): Expression<SqlBool> {
  const eb = expressionBuilder<Tables, string>();
  return eb.or(scopes.map((scope) => eb.and(compileConditions(database, scope.fields, table, scope.conditions, eb, scope.across))));
}

/** The key names no row (where it may be null) or one within the reference's scopes: `key IN (SELECT id …)`, the subquery uncorrelated. */
function compileReference(database: Database, { reference }: Reference, table: string, eb: Where): Expression<SqlBool> {
  const { column, table: referenced, within, nullable } = reference;
  const key = sql.ref(`${table}.${column}`);
  const alias = `${table}__${column}`;
  const named = sql<SqlBool>`${key} in (select ${sql.ref(`${alias}.id`)} from ${sql.table(referenced)} as ${sql.ref(alias)} where ${withinScopes(database, within, alias)})`;
  return nullable ? eb.or([eb(key, 'is', null), named]) : named;
}

/**
 * Up to this many bare dates under `in` are ranges (their whole UTC days), which an index on the
 * column can serve; more are one membership test of each row's day in the list, since testing
 * every range costs each row of a scan a comparison per member (a thousand days over 10 000 users
 * held SQLite's event loop for a second), and as a flat OR they would pass SQLite's expression
 * depth limit.
 */
const DAYS_AS_RANGES = 16;

/** The LIKE pattern of a value found anywhere in a text. */
export const containing = (text: string): string => `%${escapeLike(text)}%`;

function compileFilter(database: Database, field: Field, column: string, filter: Filter, eb: Where): Expression<SqlBool> {
  const ref = sql.ref(column);
  // Through lift: a value may be a placeholder of a list's shape, bound as the query runs (store/statements/list-shape.ts).
  const bind = (value: unknown): unknown => lift(value, (known) => field.toDriver(known));
  const compare = (operator: '=' | '>' | '>=' | '<' | '<=', value: unknown): Expression<SqlBool> => {
    if (value instanceof Day) {
      // A bare date: exact means the whole day; the other comparisons use its start.
      if (operator === '=') return eb.and([eb(ref, '>=', bind(value.start)), eb(ref, '<', bind(value.end))]);
      return eb(ref, operator, bind(value.start));
    }
    return eb(ref, operator, bind(value));
  };
  const like = (pattern: (text: string) => string, insensitive: boolean): Expression<SqlBool> =>
    storeDatabase(database).like(ref, lift(filter.value, pattern), insensitive);

  switch (filter.lookup) {
    case 'exact':
      return compare('=', filter.value);
    case 'iexact':
      return like(escapeLike, true);
    case 'contains':
      return like(containing, false);
    case 'icontains':
      return like(containing, true);
    case 'startswith':
      return like((text) => `${escapeLike(text)}%`, false);
    case 'endswith':
      return like((text) => `%${escapeLike(text)}`, false);
    case 'gt':
      return compare('>', filter.value);
    case 'gte':
      return compare('>=', filter.value);
    case 'lt':
      return compare('<', filter.value);
    case 'lte':
      return compare('<=', filter.value);
    case 'in': {
      const values = filter.value as unknown[];
      // One of no values: no row (an empty IN list is a syntax error on PostgreSQL).
      if (values.length === 0) return sql<SqlBool>`1 = 0`;
      const days = values.filter((value) => value instanceof Day);
      if (days.length === 0) return eb(ref, 'in', values.map(bind));
      const conditions =
        days.length <= DAYS_AS_RANGES
          ? days.map((day) => compare('=', day))
          : [eb(storeDatabase(database).utcDay(ref), 'in', days.map((day) => day.start.toISOString().slice(0, 10)))];
      const others = values.filter((value) => !(value instanceof Day));
      if (others.length > 0) conditions.push(eb(ref, 'in', others.map(bind)));
      return eb.or(conditions);
    }
    case 'isnull':
      return filter.value ? eb(ref, 'is', null) : eb(ref, 'is not', null);
    case 'has_key':
      return storeDatabase(database).jsonHasKey(ref, filter.value as string);
    case 'has_element':
      return storeDatabase(database).jsonHasElement(ref, filter.value as string);
    case 'range': {
      const [low, high] = filter.value as [unknown, unknown];
      const upper = high instanceof Day ? eb(ref, '<', bind(high.end)) : eb(ref, '<=', bind(high));
      return eb.and([compare('>=', low), upper]);
    }
  }
}
