/**
 * Envelopes: how a collection's lists, records and request bodies are wrapped, when an API must
 * match one that exists (Conduit's `{"articles": [...], "articlesCount": n}` and `{"article": {...}}`,
 * in and out). Applied around the actions, never inside them: the actions and their ETags see the
 * bare records (an envelope is a fixed function of its record, so the tag still names one body).
 */
import { stringifyJson } from '../../core/json.js';
import type { ActionResult } from '../actions/request.js';
import type { Envelope } from '../declare/collection.js';
import { validationFailed } from '../base/errors.js';
import type { Action } from '../declare/permissions.js';


/** What the page of a list says, by its key in the default style. */
export const PAGE_KEYS = ['count', 'next', 'previous'] as const;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The body inside its envelope: a record under `record`, or several (a bulk create) under `list`.
 * A body without it is a 400 naming the key, as a missing field is.
 */
export function unwrapBody(envelope: Envelope | undefined, body: unknown): unknown {
  if (!envelope || body === undefined) return body;
  if (isObject(body) && Array.isArray(body[envelope.list])) return body[envelope.list];
  if (isObject(body) && Object.hasOwn(body, envelope.record)) return body[envelope.record];
  throw validationFailed({ [envelope.record]: ['This field is required.'] });
}

/**
 * A list's page `{count, next, previous, results}` → the envelope's keys; an unpaginated list (an
 * array) is one page of all its records, with no links.
 */
function wrapPage(envelope: Envelope, list: unknown): Record<string, unknown> {
  const page = Array.isArray(list) ? { count: list.length, next: null, previous: null, results: list } : (list as Record<string, unknown>);
  const body: Record<string, unknown> = { [envelope.list]: page.results };
  for (const key of PAGE_KEYS) if (envelope[key] !== undefined) body[envelope[key]] = page[key];
  return body;
}

/** A list's answer: a page `{results, …}`, or an unpaginated list (an array). */
const isPage = (body: unknown): boolean => Array.isArray(body) || (isObject(body) && Array.isArray(body.results));

/**
 * The action's result in the envelope: a list's page re-keyed, a record (or several: a bulk
 * create's) wrapped. A custom action's answer is wrapped as its built-in action's would be; text
 * it wrote in a media type of its own is left as it is.
 */
export function wrapResult(envelope: Envelope | undefined, action: Action, result: ActionResult): ActionResult {
  if (!envelope || result.body === undefined || result.type !== undefined) return result;
  const body =
    action === 'list' && isPage(result.body)
      ? wrapPage(envelope, result.body)
      : { [Array.isArray(result.body) ? envelope.list : envelope.record]: result.body };
  return { ...result, body, json: stringifyJson(body) };
}
