/**
 * A write's values → the driver's parameters. Every create of a collection sets the same columns,
 * every PATCH of one field the same one: each such set of columns (a shape, in the values' order) is
 * compiled once per model into straight-line code, each column's value read by name and given to
 * its field's `toDriver`, the parameters made as one array literal; no list of entries, no lookup
 * of a field per value, no object grown key by key per write. The generated source holds only
 * declared field names (core/generated-code.ts); a name it cannot hold, or a process that makes no
 * code from text, keeps the shape interpreted, with the same parameters
 * (test/unit/compiled-writes.test.ts holds the two to each other).
 */
import { compilable, generated, literal } from '../../core/generated-code.js';
import type { Field } from '../../core/fields.js';
import type { Model } from '../../core/model.js';
import type { Row } from '../../core/rows.js';

/** The values' own names and each value as its field gives it to the driver (null as null), in order. */
export function toDriverValues(model: Model, values: Row): Row {
  const driverValues: Row = {};
  for (const [name, value] of Object.entries(values)) {
    const field: Field | undefined = model.fields[name];
    if (!field) throw new Error(`${model.table} has no field "${name}"`);
    driverValues[name] = value === null ? null : field.toDriver(value);
  }
  return driverValues;
}

/** The columns a write sets and how its parameters come from its values: `toDriverValues`' keys and values, compiled. */
export interface DriverShape {
  readonly columns: readonly string[];
  /** The columns joined by commas: what a statement of them is cached under. */
  readonly key: string;
  /** The values' parameters, in `columns`' order (a new array, which the caller may extend). */
  readonly parameters: (values: Row) => unknown[];
}

type Parameters = DriverShape['parameters'];

/** Each column's value, given to its field's toDriver, a column at a time (what the compiled form does in one literal). */
function interpretParameters(fields: readonly Field[], columns: readonly string[]): Parameters {
  return (values) =>
    columns.map((column, index) => {
      const value = values[column];
      return value === null ? null : fields[index]!.toDriver(value);
    });
}

/** The parameters compiled: one array literal; undefined where a name cannot be compiled. */
function compileParameters(fields: readonly Field[], columns: readonly string[]): Parameters | undefined {
  if (!columns.every(compilable)) return undefined;
  // A field's toDriver is called on the field, as a method (a kind of the app's may read `this`).
  const source = `${fields.map((_, index) => `const f${index} = fields[${index}];`).join('\n')}
return function parameters(values) {
  let value;
  return [${columns.map((column, index) => `(value = values[${literal(column)}]) === null ? null : f${index}.toDriver(value)`).join(', ')}];
};`;
  return generated(['fields'], source, [fields]) as Parameters | undefined;
}

/** Whether `values` has exactly `columns`, in that order. */
function hasColumns(values: Row, columns: readonly string[]): boolean {
  let index = 0;
  for (const name in values) if (columns[index++] !== name) return false;
  return index === columns.length;
}

/** A model's shapes, most recently made first; bounded, as an app's own writes may set any mix of columns. */
const shapes = new WeakMap<Model, DriverShape[]>();
const SHAPES_KEPT = 32;

/** The shape of `values` (their own names, in order): made once per model and set of columns; throws for a name that is no field of the model. */
export function driverShape(model: Model, values: Row): DriverShape {
  let known = shapes.get(model);
  if (!known) shapes.set(model, (known = []));
  for (const shape of known) if (hasColumns(values, shape.columns)) return shape;
  const columns = Object.keys(values);
  const fields = columns.map((name) => {
    const field: Field | undefined = model.fields[name];
    if (!field) throw new Error(`${model.table} has no field "${name}"`);
    return field;
  });
  const shape = { columns, key: columns.join(','), parameters: compileParameters(fields, columns) ?? interpretParameters(fields, columns) };
  if (known.length >= SHAPES_KEPT) known.length = 0;
  known.unshift(shape);
  return shape;
}
