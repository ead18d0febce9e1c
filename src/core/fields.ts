/**
 * Field kinds. One declaration says how a value is read from a JSON body and
 * from a query string, how it is rendered, which filter lookups fit it, what
 * its JSON Schema is and how it is stored (its column); the store, the
 * serializer, the query language and the migrations all read the same declaration.
 */
import { randomUUID } from 'node:crypto';
import { RE2JS } from 're2js';
import { isPending } from './maybe-promise.js';
import type { Column, ColumnType, OnDelete } from './schema.js';

/** How a kind's values compare, which decides its lookups (number: decimals and floats; json: documents). */
export type ValueType = 'integer' | 'number' | 'string' | 'boolean' | 'timestamp' | 'json';

/** Every filter lookup, as `?field__<lookup>=` names it (docs/query-language.md). */
export const lookups = [
  'exact',
  'iexact',
  'contains',
  'icontains',
  'startswith',
  'endswith',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'isnull',
  'range',
  'has_key',
  'has_element',
] as const;
/** One filter lookup (`exact`, `icontains`, `gte`, …). */
export type Lookup = (typeof lookups)[number];

const orderedLookups: readonly Lookup[] = ['exact', 'gt', 'gte', 'lt', 'lte', 'in', 'isnull', 'range'];
const textLookups = lookups.filter((lookup) => lookup !== 'has_key' && lookup !== 'has_element');
const lookupsByType: Record<ValueType, readonly Lookup[]> = {
  integer: orderedLookups,
  number: orderedLookups,
  timestamp: orderedLookups,
  string: textLookups,
  boolean: ['exact', 'in', 'isnull'],
  json: ['isnull', 'has_key', 'has_element'],
};

/** A value failed a field's rules; the messages go into `details.<field>`. */
export class FieldError extends Error {
  readonly messages: string[];
  constructor(...messages: string[]) {
    super(messages.join(' '));
    this.messages = messages;
  }
}

/** A bare date used against a timestamp: the whole UTC day [start, end). */
export class Day {
  constructor(
    readonly start: Date,
    readonly end: Date,
  ) {}
}

/** What a default may depend on: the user making the request. */
export interface DefaultContext {
  readonly userId: number | null;
}

export type JsonSchema = Record<string, unknown>;

/** What a validator finds wrong with a value: a message, or several; nothing when it is fine. */
export type ValidatorAnswer = string | readonly string[] | undefined | void;

/**
 * A rule of the application's over a field's value, once parsed (DRF's `validators=[…]`): what is
 * wrong with it, or nothing; it may throw FieldError instead, or answer later (a Promise). Never
 * called with null, nor with a blank string the field accepts.
 */
export type Validator<T = unknown> = (value: T) => ValidatorAnswer | Promise<ValidatorAnswer>;

/** The limits a field declares on its values, beyond its kind's own, as documents and forms show them. */
export interface FieldLimits {
  /** The least and greatest values allowed, as declared (a Date as its ISO text). */
  readonly minValue?: string;
  readonly maxValue?: string;
  /** The fewest characters (Unicode code points) of a non-blank string. */
  readonly minLength?: number;
  /** Found somewhere in the text (anchor it with ^ and $ to match the whole). */
  readonly pattern?: RegExp;
}

/**
 * A range a numeric field's values lie in, its ends inclusive, as decimal text (a bound left out is
 * none), and the message for a value outside it: its kind's (a column's integers, a decimal's
 * digits) or declared (minValue, maxValue). What a value computed by the database (an atomic
 * update's expression) is checked against, as a body's value is by `parse` and `validate`.
 */
export interface ValueRange {
  readonly min?: string;
  readonly max?: string;
  readonly message: string;
}

/**
 * A field: how one value is parsed, validated, rendered, filtered, documented and stored. Made by `fields.*`;
 * one of your own starts from one of those (docs/guides/serializers-and-fields.md).
 */
export interface Field {
  /**
   * For documents and forms: integer, string, text, email, boolean, timestamp, foreign_key, password,
   * and field-kinds.ts's choice, date, time, duration, decimal, float, bigint, uuid (also a primary key), json, url, slug.
   */
  readonly kind: string;
  readonly valueType: ValueType;
  readonly nullable: boolean;
  /** Whether a create (and a PUT, unless `create`) must carry the field. */
  readonly required: 'always' | 'create' | 'never';
  readonly unique: boolean;
  /** Never rendered with its value (passwords). */
  readonly writeOnly: boolean;
  /** A choice's allowed values, in their declared order (a form's `<select>`). */
  readonly choices?: readonly string[];
  /** The table a foreign key points at (its `id`). */
  readonly references?: string;
  /** A foreign key to users that a write may set only to the requesting user, unless they hold `unless`. */
  readonly requestingUserOnly?: { readonly unless: string };
  readonly default?: (context: DefaultContext) => unknown;
  readonly lookups: readonly Lookup[];
  readonly schema: JsonSchema;
  /** Declared limits on its values (minValue, maxValue, minLength, pattern); absent where none is. */
  readonly limits?: FieldLimits;
  /** A numeric field's ranges, its kind's then declared ones (see ValueRange); absent where it has none. */
  readonly ranges?: readonly ValueRange[];
  /** A JSON body value → the value to store; throws FieldError. */
  parse(value: unknown): unknown;
  /**
   * A body's parsed value against the field's declared rules (limits, then validators, in order):
   * throws FieldError with every message they give, or answers later where a validator does.
   * Absent where none is declared. Bodies only: lookups and filters never run it.
   */
  readonly validate?: (value: unknown) => void | Promise<void>;
  /** Query-string text → a filter operand; throws FieldError. */
  parseText(text: string): unknown;
  /** A value as the database driver returned it → JSON. */
  render(stored: unknown): unknown;
  /** A parsed value → a driver parameter, identical on SQLite and PostgreSQL. */
  toDriver(value: unknown): unknown;
  /** How the value is stored: what migrations create and `check` compares with the database. */
  readonly column: Column;
  /** A file kind's rules (file-fields.ts): set on `fields.file()` and `fields.image()` only. */
  readonly file?: FileRules;
}

/** A file field's rules, as an upload is checked against them (file-fields.ts). */
export interface FileRules {
  /** The field's own bound, below the app's FILES_MAX_BYTES; the app's when absent (file-fields.ts, withinCap). */
  readonly maxBytes?: number;
  /** Media types (`application/pdf`) or families (`image/*`) the sniffed type must match; any when absent. */
  readonly accept?: readonly string[];
  /** Set on an image: it must decode, within these bounds (pixels). */
  readonly image?: { readonly maxWidth?: number; readonly maxHeight?: number };
  /** The old object stays in storage when the record is updated or deleted. */
  readonly keep: boolean;
}

type DefaultValue = string | number | boolean | Date | ((context: DefaultContext) => unknown);

export interface CommonOptions<T = unknown> {
  nullable?: boolean;
  unique?: boolean;
  default?: DefaultValue;
  required?: boolean;
  /** The application's own rules over a body's value, run after the field's own (see Validator). */
  validators?: readonly Validator<T>[];
}

/** A declared rule a kind checks a parsed value against: its message where the value breaks it. */
export type Check = (value: unknown) => string | undefined;

/** Bounds on a kind's values (DRF's `min_value` and `max_value`), both inclusive. */
export interface RangeOptions<T> {
  minValue?: T;
  maxValue?: T;
}

/** A kind's own storage: the type (and length, foreign key); nullability, uniqueness and default come from the options. */
export type Storage = Pick<Column, 'type' | 'maxLength' | 'digits' | 'places' | 'references'>;

export type Kind = Omit<Field, 'nullable' | 'required' | 'unique' | 'default' | 'lookups' | 'writeOnly' | 'column' | 'validate'> &
  Partial<Pick<Field, 'writeOnly' | 'lookups'>> & { readonly storage: Storage; readonly checks?: readonly Check[] };

/** A default the database can store: a constant that is not a Date (whose text differs by dialect). */
const storedDefault = (value: DefaultValue | undefined): Column['default'] =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined;

/** A schema that also allows null: its type, enum and alternatives widened (a schema without a type, any JSON, allows it already). */
function nullableSchema(schema: JsonSchema): JsonSchema {
  if (schema.type === undefined) return schema;
  const widened: JsonSchema = { ...schema, type: [...(Array.isArray(schema.type) ? schema.type : [schema.type]), 'null'] };
  if (Array.isArray(schema.enum)) widened.enum = [...(schema.enum as unknown[]), null];
  if (Array.isArray(schema.anyOf)) widened.anyOf = [...(schema.anyOf as unknown[]), { type: 'null' }];
  return widened;
}

/** A validator's answer as messages: a string or a list of them; anything else (undefined) says nothing is wrong. */
function answerMessages(answer: ValidatorAnswer): readonly string[] {
  if (typeof answer === 'string') return [answer];
  return Array.isArray(answer) ? answer.map(String) : [];
}

/** What a validator threw, as messages: a FieldError's; anything else is thrown on. */
function thrownMessages(error: unknown): readonly string[] {
  if (!(error instanceof FieldError)) throw error;
  return error.messages;
}

function failIfAny(found: readonly (readonly string[])[]): void {
  const messages = found.flat();
  if (messages.length > 0) throw new FieldError(...messages);
}

/**
 * The kind's checks, then the validators, as one rule that reports what all of them find (as DRF
 * runs every validator); at once unless a validator answers later.
 */
function validation(checks: readonly Check[], validators: readonly Validator[]): Field['validate'] {
  if (checks.length === 0 && validators.length === 0) return undefined;
  if (validators.some((validator) => typeof validator !== 'function')) throw new Error('A validator is a function of the value.');
  return (value) => {
    // As DRF's: no rule sees a null, nor the blank string a field accepts.
    if (value === null || value === '') return undefined;
    const found: (readonly string[])[] = [];
    for (const check of checks) {
      const message = check(value);
      if (message !== undefined) found.push([message]);
    }
    let pending: Promise<void>[] | undefined;
    // A validator's own failure (anything but a FieldError), thrown once those answering later have settled.
    let broken: { error: unknown } | undefined;
    for (const validator of validators) {
      let answer: ReturnType<Validator>;
      try {
        answer = validator(value);
      } catch (error) {
        if (!(error instanceof FieldError)) {
          broken = { error };
          break;
        }
        found.push(error.messages);
        continue;
      }
      if (!isPending(answer)) {
        found.push(answerMessages(answer));
        continue;
      }
      // Its place kept, so that messages come in the validators' order whenever each answers.
      const index = found.push([]) - 1;
      (pending ??= []).push(
        Promise.resolve(answer).then(
          (later) => {
            found[index] = answerMessages(later);
          },
          (error: unknown) => {
            found[index] = thrownMessages(error);
          },
        ),
      );
    }
    const settled = (): void => {
      if (broken) throw broken.error;
      failIfAny(found);
    };
    if (!pending) return settled();
    return Promise.all(pending).then(settled);
  };
}

/** The order of plain values: numbers and bigints, Dates, and texts that sort as their values do (dates, times). */
const ordered = (a: unknown, b: unknown): number => ((a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0);

/**
 * `kind` bounded by `options.minValue` and `options.maxValue`, each read as a body's value is (a
 * Date as its ISO text) and compared with `compare`: DRF's messages, the bounds in its schema (a
 * number's `minimum`, `x-minimum` where the value is text: JSON Schema bounds numbers only) and in
 * its limits. A bound that is no value of the kind is refused here.
 */
export function withRange<T>(kind: Kind, options: RangeOptions<T>, compare: (a: unknown, b: unknown) => number = ordered): Kind {
  const { minValue, maxValue } = options;
  if (minValue === undefined && maxValue === undefined) return kind;
  const bound = (declared: T | undefined, name: string): { value: unknown; text: string } | undefined => {
    if (declared === undefined) return undefined;
    const text = declared instanceof Date ? declared.toISOString() : String(declared);
    const sent = declared instanceof Date || typeof declared === 'bigint' ? text : declared;
    try {
      const value = kind.parse(sent);
      if (isPending(value)) throw new Error(`A ${kind.kind} field takes no ${name}.`);
      return { value, text };
    } catch (error) {
      if (error instanceof FieldError) throw new Error(`${name} ${text} is no ${kind.kind}: ${error.messages.join(' ')}`);
      throw error;
    }
  };
  const low = bound(minValue, 'minValue');
  const high = bound(maxValue, 'maxValue');
  if (low && high && compare(low.value, high.value) > 0) throw new Error(`minValue ${low.text} is above maxValue ${high.text}.`);
  const numeric = kind.valueType === 'integer' || kind.valueType === 'number';
  const schema: JsonSchema = { ...kind.schema };
  const checks: Check[] = [...(kind.checks ?? [])];
  const lowMessage = low && `Ensure this value is greater than or equal to ${low.text}.`;
  const highMessage = high && `Ensure this value is less than or equal to ${high.text}.`;
  if (low) {
    const message = lowMessage!;
    checks.push((value) => (compare(value, low.value) < 0 ? message : undefined));
    // The tighter of the declared bound and the kind's own (a decimal's column).
    if (numeric) schema.minimum = Math.max(Number(low.text), (schema.minimum as number | undefined) ?? -Infinity);
    else schema['x-minimum'] = low.text;
  }
  if (high) {
    const message = highMessage!;
    checks.push((value) => (compare(value, high.value) > 0 ? message : undefined));
    if (numeric) schema.maximum = Math.min(Number(high.text), (schema.maximum as number | undefined) ?? Infinity);
    else schema['x-maximum'] = high.text;
  }
  const limits = { ...kind.limits, ...(low && { minValue: low.text }), ...(high && { maxValue: high.text }) };
  if (!numeric) return { ...kind, schema, checks, limits };
  const ranges: ValueRange[] = [
    ...(kind.ranges ?? []),
    ...(low ? [{ min: low.text, message: lowMessage! }] : []),
    ...(high ? [{ max: high.text, message: highMessage! }] : []),
  ];
  return { ...kind, schema, checks, limits, ranges };
}

export function makeField(kind: Kind, options: CommonOptions<never>): Field {
  const nullable = options.nullable ?? false;
  const fallback = options.default;
  const defaultValue =
    fallback === undefined
      ? undefined
      : typeof fallback === 'function'
        ? (fallback as (context: DefaultContext) => unknown)
        : () => fallback;
  const required = (options.required ?? (defaultValue === undefined && !nullable)) ? 'always' : 'never';
  const unique = options.unique ?? false;
  const { storage, checks, ...rest } = kind;
  const stored = storedDefault(fallback);
  const validate = validation(checks ?? [], (options.validators ?? []) as readonly Validator[]);
  return {
    writeOnly: false,
    lookups: lookupsByType[kind.valueType],
    ...rest,
    ...(validate && { validate }),
    nullable,
    required,
    unique,
    default: defaultValue,
    schema: nullable ? nullableSchema(kind.schema) : kind.schema,
    column: { ...storage, nullable, ...(unique && { unique }), ...(stored !== undefined && { default: stored }) },
  };
}

const MAX_BIGINT = 2n ** 63n - 1n;
const MIN_BIGINT = -(2n ** 63n);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Up to 15 digits: a safe integer, read without a BigInt; "-0" and leading zeros go the long way. */
const SAFE_INTEGER_TEXT = /^(?:0|-?[1-9]\d{0,14})$/;
const INTEGER64_TEXT = /^-?\d{1,20}$/;

/** Text of a signed 64-bit integer → number (bigint beyond 2^53); anything else throws. */
export function parseInteger64(text: string): number | bigint {
  // Each id of a relation's list comes here: the patterns are made once, not per call as a literal in the body is.
  if (SAFE_INTEGER_TEXT.test(text)) return Number(text);
  if (!INTEGER64_TEXT.test(text)) throw new FieldError('A valid integer is required.');
  const big = BigInt(text);
  if (big > MAX_BIGINT || big < MIN_BIGINT) throw new FieldError('Ensure this value fits in 64 bits.');
  return big >= MIN_SAFE && big <= MAX_SAFE ? Number(big) : big;
}

/**
 * An integer as DRF's IntegerField reads a string: digits with a sign, a zero fraction and
 * whitespace around them allowed (`" +2 "`, `"2.0"`); no exponent (`"1e3"`), no other fraction.
 */
const INTEGRAL_TEXT = /^\s*([+-]?)(\d+)(?:\.0*)?\s*$/;
/** Longer text is no integer any field holds: refused before it is matched (DRF refuses over 1000 characters). */
const MAX_INTEGRAL_TEXT = 100;

/** The integers a column holds, and the message for those it does not; its bounds as numbers too, to compare JSON numbers with at a number's cost. */
interface IntegerRange {
  readonly min: bigint;
  readonly max: bigint;
  readonly low: number;
  readonly high: number;
  readonly message: string;
}

const integerRange = (min: bigint, max: bigint, message: string): IntegerRange => ({ min, max, low: Number(min), high: Number(max), message });

/**
 * A body's integer: a JSON number that is a safe integer, or a string of an integer (INTEGRAL_TEXT),
 * within `range`. Never a boolean, a fraction or anything else. A bigint beyond 2^53.
 */
function parseBodyInteger(value: unknown, range: IntegerRange): number | bigint {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new FieldError('A valid integer is required.');
    if (value > range.high || value < range.low) throw new FieldError(range.message);
    return value;
  }
  const match = typeof value === 'string' && value.length <= MAX_INTEGRAL_TEXT ? INTEGRAL_TEXT.exec(value) : null;
  if (!match) throw new FieldError('A valid integer is required.');
  const integer = BigInt(`${match[1]}${match[2]}`);
  if (integer > range.max || integer < range.min) throw new FieldError(range.message);
  return integer >= MIN_SAFE && integer <= MAX_SAFE ? Number(integer) : integer;
}

/** An integer range as the values a computed value is checked against. */
const rangeOf = ({ min, max, message }: IntegerRange): ValueRange => ({ min: String(min), max: String(max), message });

const INT32 = integerRange(-(2n ** 31n), 2n ** 31n - 1n, 'Ensure this value fits in 32 bits.');
/** A 64-bit `fields.integer()` is rendered as a JSON number: it holds the integers a number holds exactly (fields.bigint goes beyond). */
const SAFE = integerRange(MIN_SAFE, MAX_SAFE, `Ensure this value is between ${MIN_SAFE} and ${MAX_SAFE}.`);
const INT64 = integerRange(MIN_BIGINT, MAX_BIGINT, 'Ensure this value fits in 64 bits.');

/** A signed 64-bit integer column's range (fields.bigint's). */
export const INT64_RANGE: ValueRange = rangeOf(INT64);

const parseBodyInteger32 = (value: unknown): number => parseBodyInteger(value, INT32) as number;
const parseBodySafeInteger = (value: unknown): number => parseBodyInteger(value, SAFE) as number;
/** A signed 64-bit body value (fields.bigint): a bigint beyond 2^53. */
export const parseBodyInteger64 = (value: unknown): number | bigint => parseBodyInteger(value, INT64);

const integerKind = (kind: string, type: ColumnType, schema: JsonSchema = {}): Kind => ({
  kind,
  valueType: 'integer',
  ranges: [rangeOf(type === 'integer' ? INT32 : SAFE)],
  storage: { type },
  schema: type === 'integer' ? { type: 'integer', format: 'int32', ...schema } : { type: 'integer', format: 'int64', ...schema },
  parse: type === 'integer' ? parseBodyInteger32 : parseBodySafeInteger,
  parseText: type === 'integer' ? (text) => parseBodyInteger32(Number(parseInteger64(text))) : parseInteger64,
  render: (stored) => (typeof stored === 'string' || typeof stored === 'bigint' ? Number(stored) : stored),
  toDriver: (value) => value,
});

export function assertCleanText(text: string): void {
  if (text.includes('\u0000')) throw new FieldError('Null characters are not allowed.');
  if (!text.isWellFormed()) throw new FieldError('Text must be valid Unicode.');
}

/**
 * Whether `text` has more than `max` characters (Unicode code points). Its UTF-16 length bounds the
 * count from both sides, so only text between max and 2·max units is counted, without an array of it.
 */
function exceeds(text: string, max: number): boolean {
  if (text.length <= max) return false;
  if (text.length > 2 * max) return true;
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    // A high surrogate starts a pair: one character (the text is well-formed, checked before).
    if (text.charCodeAt(index) >= 0xd800 && text.charCodeAt(index) <= 0xdbff) index++;
    if (++count > max) return true;
  }
  return false;
}

/** `fields.string`'s options: `maxLength` (a `varchar`; `text` without it), `minLength`, `pattern`, `blank`. */
export interface StringOptions extends CommonOptions<string> {
  maxLength?: number;
  /** The fewest characters (DRF's `min_length`); a blank string the field accepts is exempt. */
  minLength?: number;
  /**
   * What the text must contain (DRF's RegexValidator, which searches): anchor it (`^…$`) to match
   * the whole text. A RegExp, or the text of one (compiled with the `u` flag); matched by RE2 in
   * linear time (a lookaround or backreference is refused), on text within `maxLength` only.
   */
  pattern?: RegExp | string;
  patternMessage?: string;
  /**
   * Whether an empty string is accepted (DRF's `allow_blank`), and kept as it is. By default only a
   * nullable field accepts it (a user clearing it): kept as `""` where that is text of the field's
   * (a string, a text), stored as null where it is no value of the field's (an e-mail, a URL, a
   * slug, a pattern's or a minimum length's). `blank: false` refuses it, nullable or not.
   */
  blank?: boolean;
}

/**
 * A declared pattern, compiled once: a RegExp without its `g` flag (whose matching would start where
 * the last match ended), or a string's with `u`. Anything else, and a sticky RegExp, is refused.
 */
function compilePattern(pattern: unknown): RegExp {
  if (pattern instanceof RegExp) {
    if (pattern.sticky) throw new Error(`pattern ${String(pattern)} is sticky: anchor it with ^ instead.`);
    return new RegExp(pattern.source, pattern.flags.replace('g', ''));
  }
  if (typeof pattern !== 'string') throw new Error('A pattern is a RegExp or the text of one.');
  try {
    return new RegExp(pattern, 'u');
  } catch (error) {
    throw new Error(`pattern ${JSON.stringify(pattern)} is no regular expression: ${(error as Error).message}`);
  }
}

/**
 * Whether a text contains a match of `pattern`, found by RE2 (re2js), in time linear in the text: a
 * backtracking RegExp can take exponential time on a pattern such as `^(a+)+$`, holding the event
 * loop for every request. What RE2 cannot run in linear time (a lookaround, a backreference) is
 * refused here, at start-up.
 */
function linearMatcher(pattern: RegExp): (text: string) => boolean {
  const flags =
    (pattern.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0) | (pattern.multiline ? RE2JS.MULTILINE : 0) | (pattern.dotAll ? RE2JS.DOTALL : 0);
  try {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern.source), flags);
    return (text) => compiled.test(text);
  } catch (error) {
    throw new Error(`pattern ${String(pattern)} cannot be matched in linear time (no lookarounds or backreferences): ${(error as Error).message}`);
  }
}

/**
 * Whether `text` has fewer than `min` characters (Unicode code points): counted only where its
 * UTF-16 length leaves it open, as `exceeds` does.
 */
function shorterThan(text: string, min: number): boolean {
  if (text.length < min) return true;
  if (text.length >= 2 * min) return false;
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    if (text.charCodeAt(index) >= 0xd800 && text.charCodeAt(index) <= 0xdbff) index++;
    if (++count >= min) return false;
  }
  return true;
}

/**
 * A kind of text. `check` is the kind's own format (an e-mail's, a URL's), part of parsing; a
 * declared `minLength` and `pattern` are rules (checks), reported with the validators'.
 */
export function stringKind(kind: string, options: StringOptions, storage: Storage, check?: (text: string) => void): Kind {
  const { maxLength, minLength } = options;
  if (minLength !== undefined && (!Number.isInteger(minLength) || minLength < 0 || (maxLength !== undefined && minLength > maxLength))) {
    throw new Error(`minLength ${minLength} must be a whole number of characters, at most maxLength.`);
  }
  const pattern = options.pattern === undefined ? undefined : compilePattern(options.pattern);
  const blank = options.blank ?? options.nullable ?? false;
  // "" where the field's format or rules refuse it, on a nullable field that did not ask for blanks: no value.
  const empty = options.blank === undefined && (check !== undefined || pattern !== undefined || minLength !== undefined) ? null : '';
  const schema: JsonSchema = { type: 'string' };
  if (maxLength !== undefined) schema.maxLength = maxLength;
  const rules: JsonSchema = {};
  if (minLength) rules.minLength = minLength;
  if (pattern) rules.pattern = pattern.source;
  if (!blank) Object.assign(schema, { minLength: 1 }, rules);
  // A blank string is accepted beside the values the rules allow.
  else if (Object.keys(rules).length > 0) schema.anyOf = [{ type: 'string', ...rules }, { type: 'string', maxLength: 0 }];
  const checks: Check[] = [];
  if (minLength) {
    const message = `Ensure this field has at least ${minLength} characters.`;
    checks.push((value) => (shorterThan(value as string, minLength) ? message : undefined));
  }
  if (pattern) {
    const message = options.patternMessage ?? 'This value does not match the required pattern.';
    const matches = linearMatcher(pattern);
    checks.push((value) => (matches(value as string) ? undefined : message));
  }
  const limits: FieldLimits = { ...(minLength && { minLength }), ...(pattern && { pattern }) };
  return {
    kind,
    valueType: 'string',
    storage,
    schema,
    ...(checks.length > 0 && { checks, limits }),
    parse(value) {
      if (typeof value !== 'string') throw new FieldError('Not a valid string.');
      assertCleanText(value);
      if (value === '') {
        if (blank) return empty;
        throw new FieldError('This field may not be blank.');
      }
      if (maxLength !== undefined && exceeds(value, maxLength)) {
        throw new FieldError(`Ensure this field has no more than ${maxLength} characters.`);
      }
      check?.(value);
      return value;
    },
    parseText: (text) => text,
    render: (stored) => stored,
    toDriver: (value) => value,
  };
}

export interface ForeignKeyOptions extends CommonOptions<number | string> {
  /**
   * Who a write may name (a record's author, say): only the requesting user, unless they hold the
   * named permission `unless` (superusers hold every one). Others get 400 on this field.
   */
  requestingUserOnly?: { unless: string };
  /**
   * What deleting the referenced row does to this one (default `cascade`): `set null` needs a
   * nullable key; `restrict` refuses the delete (400 `protected`) while this row refers to it.
   */
  onDelete?: OnDelete;
}

export interface UuidOptions extends Omit<CommonOptions<string>, 'default'> {
  /** A random (version 4) UUID when a create does not send one. */
  generated?: boolean;
  /** The model's primary key (declared as its `id`): read-only, generated on create. */
  primaryKey?: boolean;
}

const UUID = /^(?:urn:uuid:)?\{?([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})\}?$/i;

/** Any of DRF's spellings (hyphens or not, braces, `urn:uuid:`) → the hyphenated lower-case form, as PostgreSQL prints it (so both databases compare it alike). */
function parseUuid(value: unknown): string {
  const match = typeof value === 'string' ? UUID.exec(value) : null;
  if (!match) throw new FieldError('Must be a valid UUID.');
  return match.slice(1).join('-').toLowerCase();
}

/** Compared whole only: no pattern lookups on PostgreSQL's uuid type; ordered as its lower-case text is, on both. */
const uuidKind = (schema: JsonSchema = {}): Kind => ({
  kind: 'uuid',
  valueType: 'string',
  lookups: ['exact', 'in', 'isnull'],
  storage: { type: 'uuid' },
  schema: { type: 'string', format: 'uuid', ...schema },
  parse: parseUuid,
  parseText: parseUuid,
  render: (stored) => stored ?? null,
  toDriver: (value) => value,
});

/** `fields.integer`'s options: 64 bits (as JSON numbers, ±(2^53 − 1)) unless `bits: 32`. */
export interface IntegerOptions extends CommonOptions<number>, RangeOptions<number> {
  /** 32 for a column of 32-bit integers (`integer`); 64-bit (`bigint`) by default. */
  bits?: 32 | 64;
}

/** `fields.timestamp`'s options: the common ones and `minValue`/`maxValue`. */
export interface TimestampOptions extends CommonOptions<Date>, RangeOptions<Date | string> {}

const EMAIL = /^[^\s@"<>()[\]\\,;:]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** How timestamps are stored as text (Date#toISOString), so rendered as they are. */
const ISO_STORED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?$/i;

function parseDay(text: string): Day | undefined {
  const match = ISO_DATE.exec(text);
  if (!match) return undefined;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const start = new Date(Date.UTC(year, month - 1, day));
  if (start.getUTCMonth() !== month - 1 || start.getUTCDate() !== day) throw new FieldError('Enter a valid date.');
  return new Day(start, new Date(start.getTime() + 86_400_000));
}

/** ISO 8601 date-time → Date, to the millisecond; a time without offset is UTC. */
function parseTimestamp(text: string): Date {
  if (!ISO_TIMESTAMP.test(text)) throw new FieldError('Enter a valid ISO 8601 date-time.');
  let normalized = text.replace(' ', 'T').replace(/(\.\d{3})\d+/, '$1');
  if (!/(?:Z|[+-]\d{2}:?\d{2})$/i.test(normalized)) normalized += 'Z';
  const date = new Date(normalized);
  if (Number.isNaN(date.getTime())) throw new FieldError('Enter a valid ISO 8601 date-time.');
  const day = parseDay(text.slice(0, 10));
  if (!day) throw new FieldError('Enter a valid ISO 8601 date-time.');
  return date;
}

const varchar = (maxLength: number | undefined): Storage => (maxLength === undefined ? { type: 'text' } : { type: 'varchar', maxLength });

/** What a foreign key needs of the table it names (a model, core/model.ts's Table, is one): its name and its key's kind. */
export interface ReferencedTable {
  readonly table: string;
  readonly fields: Readonly<Record<string, Field>>;
}

export const fields = {
  /** The auto-assigned primary key. */
  id: (): Field => makeField(integerKind('integer', 'id', { readOnly: true }), { default: undefined, required: false }),

  integer: ({ bits = 64, ...options }: IntegerOptions = {}): Field =>
    makeField(withRange(integerKind('integer', bits === 32 ? 'integer' : 'bigint'), options), options),

  /** Stored as `varchar(maxLength)`, or as `text` without a length. */
  string: (options: StringOptions = {}): Field => makeField(stringKind('string', options, varchar(options.maxLength)), options),

  /** Stored as `text`, whatever its `maxLength`. */
  text: (options: Omit<StringOptions, 'pattern'> = {}): Field =>
    makeField(stringKind('text', options, { type: 'text' }), options),

  email: (options: Omit<StringOptions, 'pattern'> = {}): Field => {
    const { maxLength = 254 } = options;
    const kind = stringKind('email', { ...options, maxLength }, varchar(maxLength), (text) => {
      if (!EMAIL.test(text)) throw new FieldError('Enter a valid email address.');
    });
    // A blank one is the empty string, which is no address: the schema allows it beside the format (and the rules).
    const rules = (kind.schema.anyOf as JsonSchema[] | undefined)?.[0] ?? { type: 'string' };
    const format = options.blank ? { anyOf: [{ ...rules, format: 'email' }, { type: 'string', maxLength: 0 }] } : { format: 'email' };
    return makeField({ ...kind, schema: { ...kind.schema, ...format } }, options);
  },

  boolean: (options: CommonOptions<boolean> = {}): Field =>
    makeField(
      {
        kind: 'boolean',
        valueType: 'boolean',
        storage: { type: 'boolean' },
        schema: { type: 'boolean' },
        parse(value) {
          if (typeof value !== 'boolean') throw new FieldError('Must be a valid boolean.');
          return value;
        },
        parseText(text) {
          if (text === 'true' || text === '1') return true;
          if (text === 'false' || text === '0') return false;
          throw new FieldError('Must be true, false, 1 or 0.');
        },
        render: (stored) => (stored === null || stored === undefined ? null : Boolean(stored)),
        // 1/0 binds on SQLite (no boolean type) and PostgreSQL reads '1'/'0' as booleans.
        toDriver: (value) => (value === null ? null : value ? 1 : 0),
      },
      options,
    ),

  /** Stored and rendered to the millisecond, as RFC 3339 UTC. */
  timestamp: (options: TimestampOptions = {}): Field =>
    makeField(
      withRange(
        {
          kind: 'timestamp',
          valueType: 'timestamp',
          storage: { type: 'timestamp' },
          schema: { type: 'string', format: 'date-time' },
          parse(value) {
            if (typeof value !== 'string') throw new FieldError('Enter a valid ISO 8601 date-time.');
            return parseTimestamp(value);
          },
          parseText: (text) => parseDay(text) ?? parseTimestamp(text),
          // SQLite hands back the ISO text it stored; PostgreSQL a Date, written as it is (not copied first).
          render: (stored) =>
            stored === null || stored === undefined
              ? null
              : stored instanceof Date
                ? stored.toISOString()
                : typeof stored === 'string' && ISO_STORED.test(stored)
                  ? stored
                  : new Date(stored as string).toISOString(),
          // ISO text sorts correctly in SQLite and casts implicitly to timestamptz in PostgreSQL.
          toDriver: (value) => (value instanceof Date ? value.toISOString() : value),
        },
        options,
      ),
      options,
    ),

  /** A UUID (any spelling in, lower case out); with `primaryKey`, the model's `id`, made by crypto.randomUUID on create. */
  uuid: ({ primaryKey = false, generated = false, ...options }: UuidOptions = {}): Field =>
    primaryKey
      ? makeField(uuidKind({ readOnly: true }), { default: () => randomUUID(), required: false })
      : makeField(uuidKind(), generated ? { ...options, default: () => randomUUID() } : options),

  /**
   * A value naming a row of `target` by its `id`: an integer, or a UUID when `target` is a model
   * whose key is one (a table's name alone means an integer key).
   */
  foreignKey: (target: string | ReferencedTable, options: ForeignKeyOptions = {}): Field => {
    const { requestingUserOnly, onDelete = 'cascade', ...common } = options;
    const table = typeof target === 'string' ? target : target.table;
    if (onDelete === 'set null' && !common.nullable) throw new Error(`A foreign key to ${table} with onDelete "set null" must be nullable.`);
    const kind = typeof target !== 'string' && target.fields.id?.kind === 'uuid' ? { ...uuidKind(), kind: 'foreign_key' } : integerKind('foreign_key', 'bigint');
    return makeField(
      { ...kind, storage: { ...kind.storage, references: { table, onDelete } }, references: table, ...(requestingUserOnly && { requestingUserOnly }) },
      common,
    );
  },
};

export interface PasswordOptions {
  required?: 'always' | 'create';
}

/**
 * Write-only; stored as `hash` makes it (a slow, salted hash), rendered as null. The hasher comes
 * from the caller: how hashing is run and rationed is no part of the vocabulary.
 */
export function passwordField(hash: (password: string) => Promise<string>, options: PasswordOptions = {}): Field {
  return {
    kind: 'password',
    valueType: 'string',
    nullable: false,
    required: options.required ?? 'always',
    unique: false,
    writeOnly: true,
    lookups: [],
    schema: { type: 'string', format: 'password', writeOnly: true, minLength: 1, maxLength: 4096 },
    // The hash's text, not the password's.
    column: { type: 'varchar', maxLength: 256, nullable: false },
    parse(value) {
      if (typeof value !== 'string' || value === '') throw new FieldError('Enter a password.');
      assertCleanText(value);
      if (value.length > 4096) throw new FieldError('Ensure this field has no more than 4096 characters.');
      return hash(value);
    },
    parseText() {
      throw new FieldError('This field cannot be filtered.');
    },
    render: () => null,
    toDriver: (value) => value,
  };
}
