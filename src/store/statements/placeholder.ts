/**
 * Stand-ins for a query's values while it is built once and compiled, to run again with new values
 * (store/statements/compiled.ts). A value a build turns into a parameter (a LIKE pattern of a search term,
 * a field's driver form) is turned when the query runs: the build says how with `lift`.
 */

/** Stands in for the query's `index`th value, as `transform` turns it (none: as it is). */
export class Placeholder {
  constructor(
    readonly index: number,
    private readonly transform?: (value: unknown) => unknown,
  ) {}

  /** Whether it stands for its value as it is. */
  get plain(): boolean {
    return this.transform === undefined;
  }

  /** Stands for the same value, then passed through `turn`. */
  map(turn: (value: unknown) => unknown): Placeholder {
    const { transform } = this;
    return new Placeholder(this.index, transform ? (value) => turn(transform(value)) : turn);
  }

  /** The parameter it stands for, among the values a query runs with. */
  valueIn(values: readonly unknown[]): unknown {
    const value = values[this.index];
    return this.transform ? this.transform(value) : value;
  }
}

/** `value` through `turn`: at once, or when the query runs where `value` stands in for one. */
export const lift = <T>(value: unknown, turn: (value: T) => unknown): unknown =>
  value instanceof Placeholder ? value.map(turn as (value: unknown) => unknown) : turn(value as T);
