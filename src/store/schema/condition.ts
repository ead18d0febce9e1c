/**
 * A declared row condition (core/constraints.ts) as SQL for a CHECK or a partial index's WHERE.
 * DDL takes no bound parameters: each constant is written as a literal, and every one comes from
 * the declaration (checked at declaration), never from a request.
 */
import { sql, type RawBuilder } from 'kysely';
import { conditionTerms, isFieldReference, type ConditionTerm } from '../../core/constraints.js';
import type { ConstraintValue, RowCondition } from '../../core/schema.js';
import type { SqlTypes } from '../dialects/capabilities.js';

const OPERATORS = { exact: '=', lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

function termSql(types: SqlTypes, term: ConditionTerm): RawBuilder<unknown> {
  if (term.kind === 'not') return sql`not ${conditionSql(types, term.condition)}`;
  if (term.kind === 'or') return sql`(${sql.join(term.conditions.map((inner) => conditionSql(types, inner)), sql` or `)})`;
  const column = sql.ref(term.field);
  const constant = (value: ConstraintValue) => sql.lit(typeof value === 'boolean' ? types.booleanValue(value) : value);
  const { lookup, value } = term;
  if (lookup === 'isnull') return value ? sql`${column} is null` : sql`${column} is not null`;
  if (lookup === 'in') return sql`${column} in (${sql.join((value as ConstraintValue[]).map(constant))})`;
  if (value === null) return sql`${column} is null`;
  const operand = isFieldReference(value) ? sql.ref(value.field) : constant(value as ConstraintValue);
  return sql`${column} ${sql.raw(OPERATORS[lookup])} ${operand}`;
}

/** The condition's terms, all of which must hold, in parentheses. */
export function conditionSql(types: SqlTypes, condition: RowCondition): RawBuilder<unknown> {
  return sql`(${sql.join(conditionTerms(condition).map((term) => termSql(types, term)), sql` and `)})`;
}
