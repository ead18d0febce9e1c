/**
 * A serializer's per-request work compiled once, when it is declared, into straight-line code
 * specialised to its fields, as ajv and fast-json-stringify compile a schema: a stored row into the
 * record it renders, and a body's writable fields into the values to store. No loop over field
 * descriptors, no Map or Set asked per field, the record built as one object literal (one hidden
 * class, made once).
 *
 * The generated source holds only declared field names, each written by JSON.stringify as a string
 * literal, and constant messages; every value and function it uses is passed in. No request text
 * ever becomes code. A name the source could not hold as a plain key (`__proto__`, which an object
 * literal or an assignment would take for the prototype) leaves the serializer interpreted.
 * Their answers are the interpreted serializer's, byte for byte (test/unit/compiled-serializer.test.ts
 * runs both over every field kind and error).
 */
import { FieldError, type Field } from '../../core/fields.js';
import { compilable, generated, literal } from '../../core/generated-code.js';
import { isPending } from '../../core/maybe-promise.js';
import type { Row } from '../../core/rows.js';
import type { ErrorDetails } from '../base/errors.js';
import type { RenderContext } from './computed.js';

/** How one shown field's value comes from a row: its model field's rendering of a column, or a function of the whole row. */
export type RenderStep =
  | { readonly name: string; readonly column: string; readonly field: Field; readonly render?: undefined; readonly readsContext?: undefined }
  | {
      readonly name: string;
      readonly column?: undefined;
      readonly field?: undefined;
      readonly render: (row: Row, context: RenderContext) => unknown;
      /** Whether `render` reads its context (the request, its user), so that two requests may render one row apart. */
      readonly readsContext: boolean;
    };

export type RecordRenderer = (row: Row, context: RenderContext) => Row;

/**
 * One writable model field as a body sets it; `Context` is what a parse is given beside the value
 * (the serializer's WriteContext), passed through untouched.
 */
export interface ParseStep<Context> {
  /** The model's name, under which `values` and `details` hold it. */
  readonly name: string;
  /** The name the body sends it under (the shown one). */
  readonly key: string;
  readonly field: Field;
  /** A hidden field sent as null counts as not sent. */
  readonly hidden: boolean;
  /**
   * The value parsed and held to every rule (validators, the requesting user): at once or later.
   * Left out where the field has no rule beyond its parse, which the compiled code then calls itself.
   */
  readonly parseValue?: (value: unknown, context: Context) => unknown;
}

/** What a write does: a create, a PUT or a PATCH (the serializer's WriteMode), which decides the fields a body must carry. */
type Mode = 'create' | 'update' | 'partial_update';

/**
 * What the compiled parse calls when a field's value answers later (a password's hash): the rest
 * is parsed after it, from `index` on (the interpreted parse's continuation).
 */
export type ParsedLater<Context> = (index: number, pending: Promise<unknown>, body: Row, mode: Mode, context: Context, values: Row, details: ErrorDetails) => Promise<ErrorDetails>;

/**
 * The body's writable fields into `values`; their errors by field, made only where there is one
 * (undefined where none is); a promise only where a value answers later.
 */
export type FieldsParser<Context> = (body: Row, mode: Mode, context: Context, values: Row) => ErrorDetails | undefined | Promise<ErrorDetails>;

const REQUIRED = 'This field is required.';
const NOT_NULL = 'This field may not be null.';

/** The interpreted renderer: each step in turn, into an object grown key by key. */
export function interpretRender(steps: readonly RenderStep[]): RecordRenderer {
  return (row, context) => {
    const record: Row = {};
    for (const step of steps) record[step.name] = step.column === undefined ? step.render(row, context) : step.field.render(row[step.column]);
    return record;
  };
}

/** The renderer compiled: one object literal of the shown fields, in order; undefined where a name cannot be compiled. */
export function compileRender(steps: readonly RenderStep[]): RecordRenderer | undefined {
  if (!steps.every((step) => compilable(step.name))) return undefined;
  // A field's render is called on the field, as a method (a kind of the app's may read `this`).
  const entries = steps.map((step, index) => `${literal(step.name)}: ${step.column === undefined ? `r${index}(row, context)` : `r${index}.render(row[${literal(step.column)}])`}`);
  const source = `${steps.map((step, index) => `const r${index} = steps[${index}].${step.column === undefined ? 'render' : 'field'};`).join('\n')}
return function render(row, context) {
  return { ${entries.join(', ')} };
};`;
  return generated(['steps'], source, [steps]) as RecordRenderer | undefined;
}

/** A field's messages from what its parse threw (a FieldError); anything else is thrown on. */
export function fieldErrors(error: unknown): string[] {
  if (!(error instanceof FieldError)) throw error;
  return error.messages;
}

/** The condition, in `mode`, under which a body must carry the field; undefined where none must. */
function requiredWhen(field: Field): string | undefined {
  if (field.required === 'always') return 'mode !== "partial_update"';
  return field.required === 'create' ? 'mode === "create"' : undefined;
}

/** One field's straight-line parse: sent or not, null or not, parsed, stored or its errors noted. */
function parseSource<Context>(step: ParseStep<Context>, index: number): string {
  const key = literal(step.key);
  const name = literal(step.name);
  const sent = `hasOwn(body, ${key})${step.hidden ? ` && body[${key}] !== null` : ''}`;
  const required = requiredWhen(step.field);
  const missing = required ? ` else if (${required}) (details ??= newDetails())[${name}] = [${literal(REQUIRED)}];` : '';
  // A field with rules beyond its parse goes through the serializer's own parseValue; a plain one is parsed here.
  const parse = step.parseValue
    ? `parsed = p${index}(value, context);`
    : `if (value === null) { ${step.field.nullable ? 'parsed = null;' : `throw new FieldError(${literal(NOT_NULL)});`} } else parsed = p${index}.parse(value);`;
  return `if (${sent}) {
    value = body[${key}];
    try {
      ${parse}
      if (isPending(parsed)) return later(${index}, parsed, body, mode, context, values, details ??= newDetails());
      values[${name}] = parsed;
    } catch (error) {
      (details ??= newDetails())[${name}] = fieldErrors(error);
    }
  }${missing}`;
}

/**
 * The writable fields' parse compiled: each field in order, straight-line, reading the body by the
 * names it is sent under; undefined where a name cannot be compiled.
 */
export function compileFieldsParser<Context>(steps: readonly ParseStep<Context>[], newDetails: () => ErrorDetails, later: ParsedLater<Context>): FieldsParser<Context> | undefined {
  if (!steps.every((step) => compilable(step.name) && compilable(step.key))) return undefined;
  const source = `${steps.map((step, index) => `const p${index} = steps[${index}].${step.parseValue ? 'parseValue' : 'field'};`).join('\n')}
const hasOwn = Object.hasOwn;
return function parseFields(body, mode, context, values) {
  let value, parsed, details;
  ${steps.map(parseSource).join('\n  ')}
  return details;
};`;
  return generated(['steps', 'newDetails', 'later', 'isPending', 'fieldErrors', 'FieldError'], source, [steps, newDetails, later, isPending, fieldErrors, FieldError]) as
    | FieldsParser<Context>
    | undefined;
}
