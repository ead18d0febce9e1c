/**
 * Envelopes out: a collection's lists and records wrapped as an API that exists spells them
 * (Conduit's `{"articles": [...], "articlesCount": n}` and `{"article": {...}}`); the parsing stage
 * takes bodies out of them (stages/parsers.ts). Applied around the actions, never inside them: the
 * actions and their ETags see the bare records (an envelope is a fixed function of its record, so
 * the tag still names one body).
 */
import { stringifyJson, isJsonObject } from '../../core/json.js';
import type { ActionResult } from '../actions/request.js';
import type { Envelope } from '../declare/collection.js';
import type { Action } from '../declare/permission-classes.js';

/** What the page of a list says, by its key in the default style. */
export const PAGE_KEYS = ['count', 'next', 'previous'] as const;

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
const isPage = (body: unknown): boolean => Array.isArray(body) || (isJsonObject(body) && Array.isArray(body.results));

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
