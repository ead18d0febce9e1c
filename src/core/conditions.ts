/**
 * The condition language: which records a list, a scope, a `where`, a record store's call or an
 * aggregate's related rows are kept to. One parser reads every form it is written in, a query
 * string's `author_id__in=1,2` and code's `{ author_id: [1, 2] }` alike, into Filters, so a key
 * and a value mean one thing wherever they are accepted (docs/query-language.md, Conditions).
 */
import { FieldError, lookups, type Field, type Lookup } from './fields.js';

/** One condition: a field, a lookup and its value. */
export interface Filter {
  readonly field: string;
  readonly lookup: Lookup;
  /** Parsed by the field: one operand, a list for `in`, two bounds for `range`, a boolean for `isnull`. */
  readonly value: unknown;
}

/**
 * A condition the filter vocabulary cannot say, built by the store (`storeCondition` in
 * store/conditions/store-condition.ts) from its own expression builder: opaque to the core and the framework.
 */
export interface StoreCondition {
  readonly storeCondition: unknown;
}

/** One condition a record must meet: a filter of the query language, or a store-level expression. */
export type Condition = Filter | StoreCondition;

/**
 * Where a condition was written: `text` is a query string's (every value a string, read by its
 * field: `1,2` for `in`, `true` for `isnull`); `code` is an app's (values already of the field's
 * type, an array for `in` or `range`, null alone meaning "is null").
 */
export type ConditionOrigin = 'code' | 'text';

/** The names a condition may use: the fields, and where narrower than the fields' own, the lookups each takes (a collection's filters). */
export interface ConditionVocabulary {
  readonly fields: Readonly<Record<string, Field>>;
  /** Name → the lookups a key may give it; every name outside it is unknown. Absent: each field, with its own lookups. */
  readonly filters?: ReadonlyMap<string, readonly Lookup[]>;
  /** Names standing for another filter (an app's named filters): one value, matched by the filter it names. */
  readonly named?: ReadonlyMap<string, { readonly field: string; readonly lookup: Lookup }>;
  /** The longest a query string's text operand may be, in characters, whatever its field holds (a collection's `maxFilterLength`). */
  readonly maxFilterLength?: number;
}

/** A condition refused: the key it was written under, and why (a query string's 400 puts these under the key). */
export class ConditionError extends Error {
  constructor(
    readonly key: string,
    readonly messages: readonly string[],
  ) {
    super(`"${key}": ${messages.join(' ')}`);
    this.name = 'ConditionError';
  }
}

/**
 * A key split into its name and lookup (`stock__gte` → stock, gte), the lookup checked by the caller:
 * a name the vocabulary knows (`isName`), or one without `__`, is `exact`. Without a vocabulary (a
 * constraint's, read apart from its columns) a key ends in a lookup only where one follows its last `__`.
 */
export function splitKey(key: string, isName?: (name: string) => boolean): { readonly field: string; readonly lookup: string } {
  const split = key.lastIndexOf('__');
  const suffix = split > 0 ? key.slice(split + 2) : undefined;
  const whole = suffix === undefined || (isName ? isName(key) : !(lookups as readonly string[]).includes(suffix));
  return whole ? { field: key, lookup: 'exact' } : { field: key.slice(0, split), lookup: suffix };
}

const MAX_IN_VALUES = 1000;
/**
 * The longest pattern (and search term, and JSON operand) of a query string, in characters: every
 * row of a scan is matched against it, so its length is work multiplied by the table's size.
 */
export const MAX_TEXT_LENGTH = 200;
/** Counted in code points, as fields count their maxLength; `.length` bounds them from above. */
export const tooLong = (text: string, longest = MAX_TEXT_LENGTH): boolean => text.length > longest && [...text].length > longest;

/** Lookups whose operand is text matched as a pattern (or a JSON key or element): a string, never a list. */
const TEXT_LOOKUPS: ReadonlySet<Lookup> = new Set(['iexact', 'contains', 'icontains', 'startswith', 'endswith', 'has_key', 'has_element']);

/**
 * The longest text operand `lookup` takes on `field` from a query string (undefined: no bound but
 * the query string's own). A pattern's, and a JSON field's, is MAX_TEXT_LENGTH (each row scanned
 * is matched against it); a string compared whole (`exact`, `in`, `gt`, `range`...) may be any
 * value the field holds: its maxLength, at least MAX_TEXT_LENGTH, none for a field without one.
 * The vocabulary's `maxFilterLength` bounds them all.
 */
function longestOperand(vocabulary: ConditionVocabulary, field: Field, lookup: Lookup): number | undefined {
  const own = field.valueType === 'string' && !TEXT_LOOKUPS.has(lookup) ? (field.schema.maxLength as number | undefined) : MAX_TEXT_LENGTH;
  const longest = own === undefined ? undefined : Math.max(own, MAX_TEXT_LENGTH);
  const { maxFilterLength } = vocabulary;
  return maxFilterLength === undefined ? longest : Math.min(longest ?? maxFilterLength, maxFilterLength);
}

/** Whether code's non-string operand is of the field's type (the value its driver parameter is made from). */
const OF_TYPE: Readonly<Record<Field['valueType'], (value: unknown) => boolean>> = {
  integer: (value) => Number.isSafeInteger(value) || typeof value === 'bigint',
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  string: () => false,
  boolean: (value) => typeof value === 'boolean',
  // A Date for timestamps, seconds for durations.
  timestamp: (value) => value instanceof Date || (typeof value === 'number' && Number.isFinite(value)),
  json: () => false,
};

/** One of code's operands, checked against the field's type and kept as given: a string must be text the field reads (a valid UUID, an integer's digits). */
function codeValue(field: Field, value: unknown): unknown {
  if (typeof value === 'string') {
    // Compared as text by SQLite and as a boolean by PostgreSQL: one meaning needs the boolean itself.
    if (field.valueType === 'boolean') throw new FieldError(`Must be true or false, not ${JSON.stringify(value)}.`);
    field.parseText(value);
    return value;
  }
  if (!OF_TYPE[field.valueType](value)) throw new FieldError(`${describeValue(value)} is not a value of this ${field.kind} field.`);
  return value;
}

/** One of a query string's operands, parsed by its field; a string one at most `longest` long (longestOperand). */
function textValue(field: Field, text: string, longest: number | undefined): unknown {
  if ((field.valueType === 'string' || field.valueType === 'json') && longest !== undefined && tooLong(text, longest)) throw new FieldError(`Ensure each value has no more than ${longest} characters.`);
  return field.parseText(text);
}

const describeValue = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'An array' : value instanceof Date ? 'A Date' : typeof value === 'object' ? 'An object' : JSON.stringify(typeof value === 'bigint' ? String(value) : value) ?? typeof value;

/** A query string's operand for `lookup`: `in` a comma-separated list, `range` two bounds, `isnull` true or false. */
function textOperand(field: Field, lookup: Lookup, text: string, longest: number | undefined): unknown {
  switch (lookup) {
    case 'isnull':
      if (text === 'true' || text === '1') return true;
      if (text === 'false' || text === '0') return false;
      throw new FieldError('Must be true or false.');
    case 'in': {
      const values = text.split(',');
      if (values.length > MAX_IN_VALUES) throw new FieldError(`Give at most ${MAX_IN_VALUES} values.`);
      return values.map((value) => textValue(field, value, longest));
    }
    case 'range': {
      const bounds = text.split(',');
      if (bounds.length !== 2) throw new FieldError('Give exactly two comma-separated bounds.');
      return bounds.map((bound) => textValue(field, bound, longest));
    }
    default:
      return textValue(field, text, longest);
  }
}

/** Code's operand for `lookup`: a list for `in` (empty: no record), two bounds for `range`, a boolean for `isnull`, a string for a pattern. */
function codeOperand(field: Field, lookup: Lookup, value: unknown): unknown {
  switch (lookup) {
    case 'isnull':
      if (typeof value !== 'boolean') throw new FieldError('Must be true or false.');
      return value;
    case 'in':
      if (!Array.isArray(value)) throw new FieldError('Give a list of values.');
      return value.map((element) => codeValue(field, element));
    case 'range':
      if (!Array.isArray(value) || value.length !== 2) throw new FieldError('Give a list of exactly two bounds.');
      return value.map((bound) => codeValue(field, bound));
    default:
      if (TEXT_LOOKUPS.has(lookup) && typeof value !== 'string') throw new FieldError(`Give a string, not ${describeValue(value).toLowerCase()}.`);
      return codeValue(field, value);
  }
}

/**
 * One condition, `key` → `value`, as a Filter over the vocabulary's names, or ConditionError. The
 * same for every origin: a name and optionally `__` and one of its lookups; an array under a bare
 * name means `in`, and null means "is null" (code); each operand read by its field.
 */
export function parseCondition(vocabulary: ConditionVocabulary, key: string, value: unknown, origin: ConditionOrigin): Filter {
  const { fields, filters, named } = vocabulary;
  const lookupsOf = (name: string): readonly Lookup[] | undefined => (filters ? filters.get(name) : Object.hasOwn(fields, name) ? fields[name]!.lookups : undefined);
  const { field: name, lookup: written } = splitKey(key, (whole) => lookupsOf(whole) !== undefined);
  const allowed = lookupsOf(name);
  if (!allowed) throw new ConditionError(key, [`Unknown filter field "${name}". Allowed: ${[...(filters?.keys() ?? Object.keys(fields))].join(', ')}.`]);
  if (value === undefined) throw new ConditionError(key, ['undefined is no value (null means "is null").']);
  const bare = key === name;
  // Code's shorthands for a bare name: null is "is null", an array is "one of".
  const implied: Lookup | undefined = origin === 'code' && bare ? (value === null ? 'isnull' : Array.isArray(value) ? 'in' : undefined) : undefined;
  if (!implied && !allowed.includes(written as Lookup)) throw new ConditionError(key, [`Unknown lookup "${written}" for "${name}". Allowed: ${allowed.join(', ')}.`]);
  if (origin === 'code' && value === null && !bare) throw new ConditionError(key, [`null compares with nothing; write "${name}": null (or "${name}__isnull": true) for "is null".`]);
  const target = named?.get(name);
  const lookup = target?.lookup ?? implied ?? (written as Lookup);
  const field = fields[name]!;
  try {
    if (implied === 'isnull') return { field: target?.field ?? name, lookup, value: true };
    if (origin === 'text' && typeof value !== 'string') throw new FieldError('A query parameter is text.');
    return { field: target?.field ?? name, lookup, value: origin === 'text' ? textOperand(field, lookup, value as string, longestOperand(vocabulary, field, lookup)) : codeOperand(field, lookup, value) };
  } catch (error) {
    if (error instanceof FieldError) throw new ConditionError(key, error.messages);
    throw error;
  }
}

/** An object literal (not an array, a Date, a Map...): what conditions are written as. */
export const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
};

/** Conditions written as an object, `{ sku: 'A1', stock__gte: 3, author_id: [1, 2] }`, as Filters (all must hold), or ConditionError for the first key refused. */
export function parseConditions(vocabulary: ConditionVocabulary, input: unknown, origin: ConditionOrigin): Filter[] {
  if (!isPlainObject(input)) throw new ConditionError('', [`Conditions are an object of field or field__lookup → value, not ${describeValue(input).toLowerCase()}.`]);
  return Object.entries(input).map(([key, value]) => parseCondition(vocabulary, key, value, origin));
}

/**
 * A filter written out, `{ field, lookup, value }` (a scope's or a `where`'s list form), checked as
 * its key `field__lookup` is: the lookup one its field takes, the value of its type.
 */
export function checkFilter(vocabulary: ConditionVocabulary, filter: { readonly field: string; readonly lookup: string; readonly value: unknown }): Filter {
  if (!(lookups as readonly string[]).includes(filter.lookup)) throw new ConditionError(`${filter.field}__${filter.lookup}`, [`Unknown lookup "${filter.lookup}".`]);
  // Written out, a lookup is never implied: `exact` with a list is refused rather than read as `in`.
  if (filter.lookup === 'exact' && (filter.value === null || Array.isArray(filter.value))) {
    throw new ConditionError(filter.field, [`exact compares with one value; use the lookup ${filter.value === null ? 'isnull' : 'in'}.`]);
  }
  return parseCondition(vocabulary, filter.lookup === 'exact' ? filter.field : `${filter.field}__${filter.lookup}`, filter.value, 'code');
}

/** A value whose equality the databases judge as JavaScript does: a whole number or a boolean (text has collations, numbers with fractions and times have types). */
const plainlyEqual = (value: unknown): value is number | boolean => typeof value === 'boolean' || Number.isSafeInteger(value);

/**
 * Whether a record holding `values` meets `filter`, where that can be told without the database:
 * `exact` or `in` of whole numbers or booleans, or `isnull`, on a field `values` holds; undefined
 * otherwise (the database then judges).
 */
export function meetsInMemory(filter: Filter, values: Readonly<Record<string, unknown>>): boolean | undefined {
  if (!(filter.field in values)) return undefined;
  const held = values[filter.field];
  if (filter.lookup === 'isnull') return typeof filter.value === 'boolean' ? (held === null || held === undefined) === filter.value : undefined;
  const among = filter.lookup === 'exact' ? [filter.value] : filter.lookup === 'in' && Array.isArray(filter.value) ? filter.value : undefined;
  if (!among?.every(plainlyEqual)) return undefined;
  if (held === null) return false;
  return plainlyEqual(held) ? among.includes(held) : undefined;
}
