/**
 * The constraints a model declares (schema.ts's CheckConstraint and UniqueConstraint): their
 * conditions read term by term, checked against the table's columns once at declaration, renamed
 * with a column, and a broken one turned into the refusal it declares.
 */
import { clashDetails, RecordRefused } from './refused.js';
import { splitKey } from './conditions.js';
import type { Column, ConstraintFacts, ConstraintValue, FieldReference, RowCondition, UniqueConstraint } from './schema.js';

/** The lookups a condition may use: those both databases evaluate alike in a CHECK or an index's WHERE. */
const LOOKUPS = ['exact', 'lt', 'lte', 'gt', 'gte', 'in', 'isnull'] as const;
export type ConditionLookup = (typeof LOOKUPS)[number];

export type ConditionTerm =
  | { readonly kind: 'not'; readonly condition: RowCondition }
  | { readonly kind: 'or'; readonly conditions: readonly RowCondition[] }
  | { readonly kind: 'compare'; readonly field: string; readonly lookup: ConditionLookup; readonly value: RowCondition[string] };

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

export const isFieldReference = (value: unknown): value is FieldReference =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 1 && typeof (value as FieldReference).field === 'string';

const isConstant = (value: unknown): value is ConstraintValue =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

const isCondition = (value: unknown): value is RowCondition => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A condition's terms, in the order written. */
export function conditionTerms(condition: RowCondition): ConditionTerm[] {
  return Object.entries(condition).map(([key, value]): ConditionTerm => {
    if (key === 'not') return { kind: 'not', condition: value as RowCondition };
    if (key === 'or') return { kind: 'or', conditions: value as readonly RowCondition[] };
    const { field, lookup } = splitKey(key);
    // As everywhere in the condition language, a list under a bare field is `in`. A lookup outside
    // LOOKUPS is refused at declaration (conditionProblem), so only those reach the migrations.
    return { kind: 'compare', field, lookup: (key === field && Array.isArray(value) ? 'in' : lookup) as ConditionLookup, value };
  });
}

/** Why a condition cannot be compiled over `columns`, or nothing. */
function conditionProblem(condition: unknown, columns: Readonly<Record<string, Column>>): string | undefined {
  if (!isCondition(condition) || Object.keys(condition).length === 0) return 'a condition is an object of at least one term';
  for (const term of conditionTerms(condition)) {
    if (term.kind === 'not') {
      const problem = conditionProblem(term.condition, columns);
      if (problem) return `not: ${problem}`;
      continue;
    }
    if (term.kind === 'or') {
      if (!Array.isArray(term.conditions) || term.conditions.length === 0) return '`or` takes a list of conditions';
      const problem = term.conditions.map((inner) => conditionProblem(inner, columns)).find(Boolean);
      if (problem) return `or: ${problem}`;
      continue;
    }
    const { field, lookup, value } = term;
    const column = columns[field];
    const where = `${field}${lookup === 'exact' ? '' : `__${lookup}`}`;
    if (!column) return `"${where}" names no field`;
    if (!LOOKUPS.includes(lookup)) return `"${where}": a constraint compares with the lookups ${LOOKUPS.join(', ')}`;
    if (column.type === 'json') return `"${where}": a JSON field cannot be constrained`;
    const fits = (constant: unknown) => isConstant(constant) && (typeof constant === 'boolean') === (column.type === 'boolean');
    if (isFieldReference(value)) {
      if (lookup === 'in' || lookup === 'isnull') return `"${where}" compares with a constant, not a field`;
      const other = columns[value.field];
      if (!other) return `"${where}": { field: "${value.field}" } names no field`;
      if ((other.type === 'boolean') !== (column.type === 'boolean') || other.type === 'json') return `"${where}": ${field} and ${value.field} do not compare`;
      continue;
    }
    const valid =
      lookup === 'isnull' ? typeof value === 'boolean' : lookup === 'in' ? Array.isArray(value) && value.length > 0 && value.every(fits) : (lookup === 'exact' && value === null) || fits(value);
    if (!valid) return `"${where}" cannot compare with ${JSON.stringify(value)}`;
  }
  return undefined;
}

/** Refuses, at declaration, constraints the database could not make or a refusal could not report. */
export function assertConstraints(table: string, columns: Readonly<Record<string, Column>>, constraints: readonly ConstraintFacts[]): void {
  const names = new Set<string>();
  for (const constraint of constraints) {
    const where = `${table}: constraint "${constraint.name}"`;
    if (!IDENTIFIER.test(constraint.name)) throw new Error(`${where}: a constraint's name is an identifier ([a-z0-9_]).`);
    if (names.has(constraint.name)) throw new Error(`${where} is declared twice.`);
    names.add(constraint.name);
    const reported = [constraint.field ?? []].flat();
    const unknown = reported.filter((field) => field !== 'non_field_errors' && !columns[field]);
    if (unknown.length > 0) throw new Error(`${where} reports under ${unknown.join(', ')}, which is no field.`);
    const condition = 'check' in constraint ? constraint.check : constraint.condition;
    if ('unique' in constraint) {
      const missing = constraint.unique.filter((field) => !columns[field]);
      if (constraint.unique.length === 0 || missing.length > 0) throw new Error(`${where}: \`unique\` lists fields of the table (${missing.join(', ') || 'none given'}).`);
      if (condition === undefined) continue;
    }
    const problem = conditionProblem(condition, columns);
    if (problem) throw new Error(`${where}: ${problem}.`);
  }
}

/** `condition` with the field `from` named `to` (a column renamed by a migration). */
export function renameInCondition(condition: RowCondition, from: string, to: string): RowCondition {
  const entries = Object.entries(condition).map(([key, value]) => {
    if (key === 'not') return [key, renameInCondition(value as RowCondition, from, to)];
    if (key === 'or') return [key, (value as RowCondition[]).map((inner) => renameInCondition(inner, from, to))];
    const { field } = splitKey(key);
    const renamedKey = field === from ? `${to}${key.slice(field.length)}` : key;
    return [renamedKey, isFieldReference(value) && value.field === from ? { field: to } : value];
  });
  return Object.fromEntries(entries) as RowCondition;
}

/**
 * The refusal a broken constraint means: the declared one named `name` (as the database reports
 * it), or, where the database names only a unique clash's columns (SQLite), the unique constraint
 * over those columns. A check no declaration names (one a newer release's migration added while
 * this one serves) is refused by its name. Undefined for a unique clash no declaration reports.
 */
export function constraintRefusal(constraints: readonly ConstraintFacts[], name: string | undefined, clashing: readonly string[] | undefined): RecordRefused | undefined {
  const sameColumns = (constraint: UniqueConstraint) => constraint.unique.length === clashing!.length && constraint.unique.every((field) => clashing!.includes(field));
  const constraint =
    constraints.find((declared) => declared.name === name) ??
    (name === undefined && clashing ? constraints.find((declared): declared is UniqueConstraint => 'unique' in declared && sameColumns(declared)) : undefined);
  if (!constraint) return name !== undefined && !clashing ? new RecordRefused(detailsUnder([], violated(name))) : undefined;
  if ('unique' in constraint) {
    if (constraint.message === undefined && constraint.field === undefined) return new RecordRefused(clashDetails(constraint.unique), undefined, constraint.unique);
    const message = constraint.message ?? Object.values(clashDetails(constraint.unique))[0]![0]!;
    return new RecordRefused(detailsUnder([constraint.field ?? constraint.unique].flat(), message));
  }
  return new RecordRefused(detailsUnder([constraint.field ?? []].flat(), constraint.message ?? violated(constraint.name)));
}

const violated = (name: string): string => `Constraint "${name}" is violated.`;

const detailsUnder = (fields: readonly string[], message: string): Record<string, string[]> =>
  Object.fromEntries((fields.length > 0 ? fields : ['non_field_errors']).map((field) => [field, [message]]));
