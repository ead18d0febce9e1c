/**
 * The escape from the filter vocabulary: a condition written with Kysely's expression builder,
 * for what `{ field, lookup, value }` cannot say (a subquery over another table, say). Values
 * in it are bound as in any Kysely expression; identifiers are the author's.
 */
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Condition, StoreCondition } from '../../core/list-query.js';
import type { Tables } from '../connection/database.js';

/** Builds the condition; `table` is the name the collection's own table has in the query. */
export type StoreExpression = (eb: ExpressionBuilder<Tables, string>, table: string) => Expression<SqlBool>;

/**
 * A condition the filter vocabulary cannot say, as a Kysely expression over the collection's table (values in
 * it are bound).
 */
export const storeCondition = (build: StoreExpression): StoreCondition => ({ storeCondition: build });

/** The store's expression of a condition, if it is one. */
export const storeExpressionOf = (condition: Condition): StoreExpression | undefined =>
  'storeCondition' in condition ? (condition.storeCondition as StoreExpression) : undefined;
