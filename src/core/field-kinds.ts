/**
 * The field kinds beyond the first nine (fields.ts): choices, dates, times, durations, decimals,
 * floats, big integers, UUIDs, JSON documents, URLs and slugs. Each is one declaration, as there:
 * how it parses a body and a query string, renders, which lookups fit it, its JSON Schema and its
 * column. docs/guides/serializers-and-fields.md ("Field kinds") lists them with their options and lookups.
 */
import {
  FieldError,
  INT64_RANGE,
  fields as plainFields,
  makeField,
  parseBodyInteger64,
  parseInteger64,
  stringKind,
  withRange,
  type CommonOptions,
  type Field,
  type JsonSchema,
  type Kind,
  type Lookup,
  type RangeOptions,
  type StringOptions,
} from './fields.js';
import { JSON_MAX_DEPTH, nestsDeeperThan } from './json.js';

/** Lookups of values that are equal or not, never ordered or matched in part (choices, UUIDs). */
const equalityLookups: readonly Lookup[] = ['exact', 'in', 'isnull'];

/** The text of a value read from a query string or a body, or a FieldError with `message`. */
function textOf(value: unknown, message: string): string {
  if (typeof value !== 'string') throw new FieldError(message);
  return value;
}

const nullable =
  <T>(render: (stored: NonNullable<unknown>) => T) =>
  (stored: unknown): T | null =>
    stored === null || stored === undefined ? null : render(stored);

/** A kind whose body value and query text are read alike (text in both), stored as parsed. */
function textKind(kind: string, valueType: Field['valueType'], storage: Kind['storage'], schema: JsonSchema, message: string, parseText: (text: string) => unknown): Kind {
  return {
    kind,
    valueType,
    storage,
    schema,
    parse: (value) => parseText(textOf(value, message)),
    parseText,
    render: nullable(String),
    toDriver: (value) => value,
  };
}

// --- choice ------------------------------------------------------------------------------------

/** `fields.choice`'s options. */
export interface ChoiceOptions extends CommonOptions<string> {
  /** The column's length; by default the longest choice's. */
  maxLength?: number;
}

/** One of `choices` (strings); anything else is a 400 naming them, in a body and in a filter alike. */
function choice(choices: readonly string[], options: ChoiceOptions = {}): Field {
  if (choices.length === 0) throw new Error('fields.choice needs at least one choice.');
  const allowed = new Set(choices);
  const listed = choices.join(', ');
  const parseText = (text: string): string => {
    if (!allowed.has(text)) throw new FieldError(`"${text.length > 100 ? `${text.slice(0, 100)}…` : text}" is not a valid choice. Choices: ${listed}.`);
    return text;
  };
  const maxLength = options.maxLength ?? Math.max(...choices.map((text) => [...text].length));
  return makeField(
    {
      ...textKind('choice', 'string', { type: 'varchar', maxLength }, { type: 'string', enum: [...choices] }, 'Not a valid string.', parseText),
      lookups: equalityLookups,
      choices: [...choices],
    },
    options,
  );
}

// --- date, time, duration ----------------------------------------------------------------------

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD`, a real calendar day (no time, no offset): stored and rendered as that text. */
function parseDate(text: string): string {
  const match = ISO_DATE.exec(text);
  if (!match) throw new FieldError('Enter a valid date in the format YYYY-MM-DD.');
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (year < 1 || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) throw new FieldError('Enter a valid date.');
  return text;
}

const ISO_TIME = /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.(\d{1,6}))?)?$/;

/**
 * `HH:MM[:SS[.ffffff]]` → `HH:MM:SS` with the fraction's trailing zeros dropped, as PostgreSQL
 * prints a time: one text per time, which sorts as the times do (SQLite compares it as text).
 */
function parseTime(text: string): string {
  const match = ISO_TIME.exec(text);
  if (!match) throw new FieldError('Enter a valid time in the format HH:MM[:SS[.ffffff]].');
  const [, hours, minutes, seconds = '00', fraction = ''] = match;
  const kept = fraction.replace(/0+$/, '');
  return `${hours}:${minutes}:${seconds}${kept ? `.${kept}` : ''}`;
}

/** ISO 8601 durations of days, hours, minutes and seconds (to the millisecond): `P1DT2H3M4.5S`. */
const ISO_DURATION = /^P(?:(\d{1,9})D)?(?:T(?:(\d{1,11})H)?(?:(\d{1,11})M)?(?:(\d{1,11}(?:\.\d{1,3})?)S)?)?$/;
/** PostgreSQL's own interval output (`1 day 02:03:04.5`, `26:03:04.5`), where an interval was written there in SQL. */
const POSTGRES_INTERVAL = /^(?:(\d+) days? ?)?(?:(\d+):(\d{2}):(\d{2}(?:\.\d+)?))?$/;
/** The largest duration: its milliseconds stay exact in a double, so SQLite compares them exactly. */
const MAX_DURATION_SECONDS = 1e11;

/** A duration's text → its seconds (milliseconds exact). Months and years are refused: their length varies. */
function durationSeconds(text: string): number {
  const iso = ISO_DURATION.exec(text);
  const match = iso ?? POSTGRES_INTERVAL.exec(text);
  if (!match || text === 'P' || text.endsWith('T') || text === '') {
    throw new FieldError('Enter a valid ISO 8601 duration of days, hours, minutes and seconds, such as P1DT2H30M or PT90.5S.');
  }
  const [days = 0, hours = 0, minutes = 0, seconds = 0] = match.slice(1).map((part) => Number(part ?? 0));
  const total = Math.round((((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000) / 1000;
  if (total > MAX_DURATION_SECONDS) throw new FieldError(`Ensure this duration is at most ${MAX_DURATION_SECONDS} seconds.`);
  return total;
}

/** Seconds → the ISO 8601 text the API renders: `P1DT2H3M4.5S`, `PT0S`. */
function durationText(total: number): string {
  const milliseconds = Math.round(total * 1000);
  const days = Math.floor(milliseconds / 86_400_000);
  const hours = Math.floor((milliseconds % 86_400_000) / 3_600_000);
  const minutes = Math.floor((milliseconds % 3_600_000) / 60_000);
  const seconds = (milliseconds % 60_000) / 1000;
  const time = `${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${seconds ? `${seconds}S` : ''}`;
  if (!days && !time) return 'PT0S';
  return `P${days ? `${days}D` : ''}${time ? `T${time}` : ''}`;
}

// --- decimal -----------------------------------------------------------------------------------

/** `fields.decimal`'s options: `digits` (at most 15) and `places`, rendered as text unless `asNumber`. */
export interface DecimalOptions extends CommonOptions<string>, RangeOptions<number | string> {
  /** Significant digits in all (at most 15: see the column comment in store/dialects/sqlite/capabilities.ts). */
  digits: number;
  /** Digits after the decimal point (at most `digits`). */
  places: number;
  /** Render as a JSON number instead of a string (DRF's `coerce_to_string=False`). */
  asNumber?: boolean;
}

const MAX_DECIMAL_DIGITS = 15;
const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

/** Two decimals of one field (its text at its declared places) by their values: their digits as integers. */
const compareDecimals = (a: unknown, b: unknown): number => {
  const [x, y] = [BigInt((a as string).replace('.', '')), BigInt((b as string).replace('.', ''))];
  return x < y ? -1 : x > y ? 1 : 0;
};

function decimal(options: DecimalOptions): Field {
  const { digits, places, asNumber = false } = options;
  if (!Number.isInteger(digits) || digits < 1 || digits > MAX_DECIMAL_DIGITS || !Number.isInteger(places) || places < 0 || places > digits) {
    throw new Error(`fields.decimal needs 1 ≤ digits ≤ ${MAX_DECIMAL_DIGITS} and 0 ≤ places ≤ digits.`);
  }
  const whole = digits - places;
  /** `12.5`, `+012.50` → `12.50`: the declared places, no sign on zero; a value that does not fit throws. */
  const parseText = (text: string): string => {
    const match = DECIMAL.exec(text);
    if (!match || (match[2] === '' && !match[3])) throw new FieldError('A valid number is required.');
    const [, sign, integer = '', fraction = ''] = match;
    const integerDigits = integer.replace(/^0+/, '');
    const fractionDigits = fraction.replace(/0+$/, '');
    if (integerDigits.length + fractionDigits.length > digits) throw new FieldError(`Ensure that there are no more than ${digits} digits in total.`);
    if (fractionDigits.length > places) throw new FieldError(`Ensure that there are no more than ${places} decimal places.`);
    if (integerDigits.length > whole) throw new FieldError(`Ensure that there are no more than ${whole} digits before the decimal point.`);
    const zero = !/[1-9]/.test(integerDigits + fractionDigits);
    const body = `${integerDigits || '0'}${places ? `.${fractionDigits.padEnd(places, '0')}` : ''}`;
    return sign === '-' && !zero ? `-${body}` : body;
  };
  // PostgreSQL hands back numeric text at the declared scale; SQLite a double, whose digits to the declared places are the stored ones.
  const text = (stored: NonNullable<unknown>): string => (typeof stored === 'number' ? parseText(stored.toFixed(places)) : String(stored));
  /** The largest value the column holds: `whole` nines, then `places`. */
  const largest = `${'9'.repeat(whole) || '0'}${places ? `.${'9'.repeat(places)}` : ''}`;
  const pattern = `^-?\\d{0,${whole}}${places ? `(?:\\.\\d{0,${places}})?` : ''}$`;
  return makeField(
    withRange(
      {
        kind: 'decimal',
        valueType: 'number',
        ranges: [{ min: `-${largest}`, max: largest, message: `Ensure that there are no more than ${whole} digits before the decimal point.` }],
        storage: { type: 'decimal', digits, places },
        schema: asNumber ? { type: 'number', multipleOf: 10 ** -places, maximum: 10 ** whole - 10 ** -places, minimum: -(10 ** whole - 10 ** -places) } : { type: 'string', format: 'decimal', pattern },
        parse(value) {
          // A number in exponent form (1e-7) spelled out: its digits then meet the same limits.
          if (typeof value === 'number' && Number.isFinite(value)) return parseText(String(value).includes('e') ? value.toFixed(20) : String(value));
          return parseText(textOf(value, 'A valid number is required.'));
        },
        parseText,
        render: nullable((stored) => (asNumber ? Number(text(stored)) : text(stored))),
        // Text on both: PostgreSQL reads it as numeric, and SQLite compares it with the column's numbers numerically.
        toDriver: (value) => value,
      },
      options,
      compareDecimals,
    ),
    options,
  );
}

// --- float, bigint -----------------------------------------------------------------------------

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function finite(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new FieldError('A valid number is required.');
  return value;
}

/** `fields.float`'s options: the common ones and `minValue`/`maxValue`. */
export interface FloatOptions extends CommonOptions<number>, RangeOptions<number> {}

const float = (options: FloatOptions = {}): Field =>
  makeField(
    withRange(
      {
        kind: 'float',
        valueType: 'number',
        storage: { type: 'float' },
        schema: { type: 'number', format: 'double' },
        parse: finite,
        parseText: (text) => finite(NUMBER.test(text) ? Number(text) : NaN),
        render: nullable(Number),
        toDriver: (value) => value,
      },
      options,
    ),
    options,
  );

/** A 64-bit integer: a JSON number while it is exact (|n| ≤ 2^53 − 1), a string of digits beyond. */
function bigintValue(value: number | bigint | string): number | string {
  const big = BigInt(value);
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big.toString();
}

/** `fields.bigint`'s options: the common ones and `minValue`/`maxValue`. */
export interface BigintOptions extends CommonOptions<number | string>, RangeOptions<number | bigint | string> {}

/** Two values of a bigint field (a number, or digits beyond 2^53) by their values. */
const compareBigints = (a: unknown, b: unknown): number => {
  const [x, y] = [BigInt(a as number | string), BigInt(b as number | string)];
  return x < y ? -1 : x > y ? 1 : 0;
};

const bigint = (options: BigintOptions = {}): Field =>
  makeField(
    withRange(
      {
        kind: 'bigint',
        valueType: 'integer',
        ranges: [INT64_RANGE],
        storage: { type: 'bigint' },
        // A string beyond 2^53, as JavaScript clients cannot hold those digits in a number.
        schema: { type: ['integer', 'string'], format: 'int64', pattern: '^-?\\d{1,19}$' },
        parse(value) {
          if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new FieldError('A valid integer is required (a string of digits beyond 2^53).');
          return bigintValue(parseBodyInteger64(value));
        },
        parseText: (text) => bigintValue(parseInteger64(text)),
        render: nullable((stored) => bigintValue(stored as number | bigint | string)),
        // Digits as text: exact in both drivers, and an integer to both columns.
        toDriver: (value) => String(value),
      },
      options,
      compareBigints,
    ),
    options,
  );

// --- json ---------------------------------------------------------------------------------------

/** `fields.json`'s options: `shape` restricts the value to objects or arrays. */
export interface JsonOptions extends CommonOptions<unknown> {
  /** Only objects, or only arrays; any JSON value by default. */
  shape?: 'object' | 'array';
}

const JSON_SCHEMAS: Readonly<Record<NonNullable<JsonOptions['shape']> | 'any', JsonSchema>> = { any: {}, object: { type: 'object' }, array: { type: 'array' } };

/**
 * Any JSON value (or only objects or arrays), stored as jsonb on PostgreSQL and as its text on
 * SQLite. A JSON null is the column's NULL, as a null is for every kind: `isnull` finds it.
 */
const json = ({ shape, ...options }: JsonOptions = {}): Field =>
  makeField(
    {
      kind: 'json',
      valueType: 'json',
      storage: { type: 'json' },
      schema: JSON_SCHEMAS[shape ?? 'any'],
      parse(value) {
        if (shape === 'array' && !Array.isArray(value)) throw new FieldError('Expected a list of items.');
        if (shape === 'object' && (typeof value !== 'object' || value === null || Array.isArray(value))) throw new FieldError('Expected an object.');
        // Bounded before anything recurses over it: storing it (JSON.stringify) or PostgreSQL's jsonb parser.
        if (nestsDeeperThan(value, JSON_MAX_DEPTH)) throw new FieldError(`Nested deeper than ${JSON_MAX_DEPTH} levels.`);
        return value;
      },
      // Only `has_key` reads query text (`isnull` is parsed apart): the key itself.
      parseText: (text) => text,
      // Both drivers hand back the document's text (PostgreSQL's jsonb parser is set to keep it).
      render: nullable((stored) => JSON.parse(String(stored)) as unknown),
      toDriver: (value) => JSON.stringify(value),
    },
    options,
  );

// --- url, slug -----------------------------------------------------------------------------------

const SLUG = /^[-a-zA-Z0-9_]+$/;

function url(options: Omit<StringOptions, 'pattern'> = {}): Field {
  const { maxLength = 200 } = options;
  const kind = stringKind('url', { ...options, maxLength }, { type: 'varchar', maxLength }, (text) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(text);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:', 'ftp:', 'ftps:'].includes(parsed.protocol) || !parsed.hostname || /\s/.test(text)) throw new FieldError('Enter a valid URL.');
  });
  return makeField({ ...kind, schema: { ...kind.schema, format: 'uri' } }, options);
}

const slug = (options: Omit<StringOptions, 'pattern'> = {}): Field => {
  const { maxLength = 50 } = options;
  // The kind's format, checked as a body's slug is parsed and wherever one names a record.
  const kind = stringKind('slug', { ...options, maxLength }, { type: 'varchar', maxLength }, (text) => {
    if (!SLUG.test(text)) throw new FieldError('Enter a valid "slug" consisting of letters, numbers, underscores or hyphens.');
  });
  return makeField({ ...kind, schema: { ...kind.schema, pattern: SLUG.source } }, options);
};

/** A date's, a time's or a duration's options: bounds are written as their values are (`2024-01-01`, `09:00`, `PT1M`). */
export interface TextRangeOptions extends CommonOptions<string>, RangeOptions<string> {}

/** A duration's validators see its seconds. */
export interface DurationOptions extends CommonOptions<number>, RangeOptions<string> {}

/** `fields.string({ choices })`'s options. */
export interface ChoiceStringOptions extends StringOptions {
  /** A choice field instead (fields.choice): one of these strings. */
  choices?: readonly string[];
}

export const moreFields = {
  choice,
  /** fields.string, or with `choices` a choice field: DRF's `CharField(choices=…)` spelling. */
  string: ({ choices, ...options }: ChoiceStringOptions = {}): Field => (choices ? choice(choices, options) : plainFields.string(options)),
  /** A calendar day, `YYYY-MM-DD`: a `date` column on PostgreSQL, its text on SQLite. Its text sorts as the days do. */
  date: (options: TextRangeOptions = {}): Field =>
    makeField(withRange(textKind('date', 'timestamp', { type: 'date' }, { type: 'string', format: 'date' }, 'Enter a valid date in the format YYYY-MM-DD.', parseDate), options), options),
  /** A time of day without zone, to the microsecond: `time` on PostgreSQL, its text on SQLite. Its text sorts as the times do. */
  time: (options: TextRangeOptions = {}): Field =>
    makeField(withRange(textKind('time', 'timestamp', { type: 'time' }, { type: 'string', format: 'time' }, 'Enter a valid time in the format HH:MM[:SS[.ffffff]].', parseTime), options), options),
  /** A length of time (ISO 8601), to the millisecond: `interval` on PostgreSQL, seconds on SQLite. */
  duration: (options: DurationOptions = {}): Field =>
    makeField(
      withRange(
        {
          kind: 'duration',
          valueType: 'timestamp',
          storage: { type: 'duration' },
          schema: { type: 'string', format: 'duration' },
          parse: (value) => durationSeconds(textOf(value, 'Enter a valid ISO 8601 duration.')),
          parseText: durationSeconds,
          render: nullable((stored) => durationText(typeof stored === 'number' ? stored : durationSeconds(String(stored)))),
          // Seconds: PostgreSQL reads a bare number as an interval of that many seconds.
          toDriver: (value) => value,
        },
        options,
      ),
      options,
    ),
  decimal,
  float,
  bigint,
  json,
  url,
  slug,
};
