/**
 * New values as expressions of the stored row, for atomic updates (Django's `F('stock') - q`):
 * the database computes them from the row as it is when the statement runs, so concurrent
 * updates add up instead of overwriting each other. Only the row's own numeric fields and bound
 * values: no text of a request ever becomes SQL.
 */

/** What an expression's operand may be: a bound number (a decimal as its text), or another expression. */
export type Operand = number | bigint | string | FieldExpression;

export interface Term {
  readonly operator: '+' | '-' | '*';
  readonly operand: Operand;
}

/** A numeric field of the row being updated, with terms applied left to right. */
export class FieldExpression {
  constructor(
    readonly field: string,
    readonly terms: readonly Term[] = [],
  ) {}

  plus(operand: Operand): FieldExpression {
    return new FieldExpression(this.field, [...this.terms, { operator: '+', operand }]);
  }

  minus(operand: Operand): FieldExpression {
    return new FieldExpression(this.field, [...this.terms, { operator: '-', operand }]);
  }

  times(operand: Operand): FieldExpression {
    return new FieldExpression(this.field, [...this.terms, { operator: '*', operand }]);
  }
}

/** The stored value of the row's field `field`, as the update statement sees it. */
export const F = (field: string): FieldExpression => new FieldExpression(field);

/** The field it is set on, plus `by` (negative to take away): `{ stock: increment(-2) }`. */
export class Increment {
  constructor(readonly by: number | bigint | string) {}
}

/** `F(field).plus(by)` for the field an atomic update sets: `{ stock: increment(-1) }`. */
export const increment = (by: number | bigint | string): Increment => new Increment(by);

/** Whether an update's value is computed from the stored row (a class of its own, so no JSON value is taken for one). */
export const isComputed = (value: unknown): value is FieldExpression | Increment => value instanceof FieldExpression || value instanceof Increment;

/** The expression an update value stands for, over the field `field` it is set on. */
export const asExpression = (field: string, value: FieldExpression | Increment): FieldExpression =>
  value instanceof FieldExpression ? value : F(field).plus(value.by);
