/**
 * A list request's query string → a typed ListQuery, or a 400 that names
 * what is allowed. Nothing here touches SQL; names are checked against the
 * collection's declaration and values are parsed by their fields.
 */
import type { Filter, ListQuery, Ordering } from '../../core/list-query.js';
import { ApiError, emptyDetails, type ErrorDetails, throwIfInvalid } from '../base/errors.js';
import { FieldError, assertCleanText } from '../../core/fields.js';
import { ConditionError, MAX_TEXT_LENGTH, parseCondition, tooLong } from '../../core/conditions.js';
import type { QueryRules } from '../declare/collection.js';

export const RESERVED_PARAMETERS = ['page', 'page_size', 'search', 'ordering', 'format', 'fields', 'omit', 'cursor'] as const;

const MAX_SEARCH_TERMS = 50;


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
  else if (search.some((term) => tooLong(term))) details.search = [`Ensure each search term has no more than ${MAX_TEXT_LENGTH} characters.`];
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

/** One parameter as a filter of the condition language (core/conditions.ts), text read by its field; a refusal goes under its name. */
function parseFilter(name: string, text: string, rules: QueryRules, details: ErrorDetails): Filter | undefined {
  try {
    return parseCondition(rules, name, text, 'text');
  } catch (error) {
    if (!(error instanceof ConditionError)) throw error;
    details[name] = [...error.messages];
    return undefined;
  }
}
