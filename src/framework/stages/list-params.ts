/**
 * A list request's query string → a typed ListQuery, or a 400 that names
 * what is allowed. Nothing here touches SQL; names are checked against the
 * collection's declaration and values are parsed by their fields.
 */
import type { Filter, ListQuery, Ordering } from '../../core/list-query.js';
import { ApiError, emptyDetails, type ErrorDetails, throwIfInvalid } from '../base/errors.js';
import { FieldError, assertCleanText, type Field, type Lookup } from '../../core/fields.js';
import type { QueryRules } from '../declare/collection.js';

export const RESERVED_PARAMETERS = ['page', 'page_size', 'search', 'ordering', 'format', 'fields', 'omit', 'cursor'] as const;

const MAX_SEARCH_TERMS = 50;
const MAX_IN_VALUES = 1000;
/**
 * The longest search term or string filter value, in characters: on SQLite every row of a scan is
 * matched against it, so its length is work multiplied by the table's size.
 */
const MAX_TEXT_LENGTH = 200;
const TOO_LONG = `Ensure each value has no more than ${MAX_TEXT_LENGTH} characters.`;
/** Counted in code points, as fields count their maxLength; `.length` bounds them from above. */
const tooLong = (text: string): boolean => text.length > MAX_TEXT_LENGTH && [...text].length > MAX_TEXT_LENGTH;


export const invalidPage = (): ApiError => new ApiError(404, 'not_found', 'Invalid page.');

function positiveInteger(text: string, name: string, details: ErrorDetails): number | undefined {
  if (!/^[1-9]\d*$/.test(text)) {
    details[name] = ['A positive integer is required.'];
    return undefined;
  }
  return Number(text);
}

/** `paging`: the pagination's own parameters besides the reserved ones (never read as filters). */
export function parseListQuery(parameters: ReadonlyMap<string, string>, rules: QueryRules, paging: readonly string[] = []): ListQuery {
  const details = emptyDetails();
  const filters: Filter[] = [];
  for (const [name, text] of parameters) {
    try {
      assertCleanText(text);
    } catch (error) {
      details[name] = (error as FieldError).messages;
      continue;
    }
    if (!(RESERVED_PARAMETERS as readonly string[]).includes(name) && !paging.includes(name)) {
      const filter = parseFilter(name, text, rules, details);
      if (filter) filters.push(filter);
    }
  }

  const page = positiveInteger(parameters.get('page') ?? '1', 'page', details) ?? 1;
  const requestedSize = positiveInteger(parameters.get('page_size') ?? String(rules.pageSize), 'page_size', details);
  const search = (parameters.get('search') ?? '').split(/\s+/).filter(Boolean);
  if (search.length > MAX_SEARCH_TERMS) details.search = [`Use at most ${MAX_SEARCH_TERMS} search terms.`];
  else if (search.some(tooLong)) details.search = [`Ensure each search term has no more than ${MAX_TEXT_LENGTH} characters.`];
  const ordering = parseOrdering(parameters.get('ordering'), rules, details) ?? rules.defaultOrdering;

  throwIfInvalid(details, 'Invalid query parameters.');
  // A page number beyond any page that could exist is simply past the end.
  if (!Number.isSafeInteger(page)) throw invalidPage();
  return {
    page,
    pageSize: Math.min(requestedSize ?? rules.pageSize, rules.maxPageSize),
    search,
    ordering,
    filters,
  };
}

function parseOrdering(text: string | undefined, rules: QueryRules, details: ErrorDetails): Ordering[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const ordering: Ordering[] = [];
  for (const term of text.split(',').map((part) => part.trim()).filter(Boolean)) {
    const descending = term.startsWith('-');
    const field = descending ? term.slice(1) : term;
    if (!rules.ordering.includes(field)) {
      details.ordering = [`Unknown ordering field "${term}". Allowed: ${rules.ordering.join(', ')}.`];
      return undefined;
    }
    // A field named again cannot change the order its first mention set (and SQLite refuses an
    // ORDER BY of more than 2000 terms, which a 16 KiB query string could otherwise reach).
    if (ordering.some((earlier) => earlier.field === field)) continue;
    ordering.push({ field, descending });
  }
  return ordering;
}

function parseFilter(name: string, text: string, rules: QueryRules, details: ErrorDetails): Filter | undefined {
  const split = name.lastIndexOf('__');
  const [fieldName, lookupName] =
    rules.filters.has(name) || split === -1 ? [name, 'exact'] : [name.slice(0, split), name.slice(split + 2)];
  const allowedLookups = rules.filters.get(fieldName);
  if (!allowedLookups) {
    details[name] = [`Unknown filter field "${fieldName}". Allowed: ${[...rules.filters.keys()].join(', ')}.`];
    return undefined;
  }
  if (!allowedLookups.includes(lookupName as Lookup)) {
    details[name] = [`Unknown lookup "${lookupName}" for "${fieldName}". Allowed: ${allowedLookups.join(', ')}.`];
    return undefined;
  }
  const named = rules.named?.get(fieldName);
  const lookup = named?.lookup ?? (lookupName as Lookup);
  try {
    return { field: named?.field ?? fieldName, lookup, value: parseOperand(rules.fields[fieldName]!, lookup, text) };
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    details[name] = error.messages;
    return undefined;
  }
}

function parseOperand(field: Field, lookup: Lookup, text: string): unknown {
  switch (lookup) {
    case 'isnull':
      if (text === 'true' || text === '1') return true;
      if (text === 'false' || text === '0') return false;
      throw new FieldError('Must be true or false.');
    case 'in': {
      const values = text.split(',');
      if (values.length > MAX_IN_VALUES) throw new FieldError(`Give at most ${MAX_IN_VALUES} values.`);
      return values.map((value) => parseValue(field, value));
    }
    case 'range': {
      const bounds = text.split(',');
      if (bounds.length !== 2) throw new FieldError('Give exactly two comma-separated bounds.');
      return bounds.map((bound) => parseValue(field, bound));
    }
    default:
      return parseValue(field, text);
  }
}

/** One operand, parsed by its field; a string one at most MAX_TEXT_LENGTH long. */
function parseValue(field: Field, text: string): unknown {
  if ((field.valueType === 'string' || field.valueType === 'json') && tooLong(text)) throw new FieldError(TOO_LONG);
  return field.parseText(text);
}
