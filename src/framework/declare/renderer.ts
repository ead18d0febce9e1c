/**
 * A renderer (DRF's `renderer_classes`): one more representation of a collection's answers,
 * negotiated like JSON and the browsable page, by `Accept` or `?format=`. Declared per collection
 * (`renderers`): the built-in CSV one (render/csv.ts, `csvRenderer`), or the app's own.
 */
import type { FastifyRequest } from 'fastify';
import type { Action } from './permission-classes.js';

/** What a renderer is given: the answer as JSON would show it, or a list's records streamed. */
export interface RenderInput {
  readonly status: number;
  /**
   * The body JSON would carry, before the collection's envelope: a record, a page
   * `{count, next, previous, results}`, an array (a bulk create, an unpaginated list), or a custom
   * action's value. Undefined for a streamed list and for an answer without a body (204).
   */
  readonly body: unknown;
  /** A list streamed whole (`lists: 'all'`): every record the request selects, rendered as JSON shows them. */
  readonly records?: AsyncIterable<Readonly<Record<string, unknown>>>;
  /** The fields a list's records show, in order, after `fields=` and `omit=` (a header, say, before any record). */
  readonly fields?: readonly string[];
  /** The built-in action the answer is of (a custom action's: the one it stands for). */
  readonly action: Action;
  readonly collection: string;
  readonly request: FastifyRequest;
}

/**
 * A representation beside JSON and the browsable page, negotiated by `Accept` or `?format=` (a collection's
 * `renderers`).
 */
export interface Renderer {
  /** The media type it answers `Accept` with, as sent in Content-Type: `application/x-ndjson`. */
  readonly mediaType: string;
  /** Its `?format=` name: `ndjson`. */
  readonly format: string;
  /**
   * How it renders a list: `page` (the default) gets the page JSON would show, as `body`; `all` gets
   * every record the list's filters, search, ordering and scope select, as `records`, read in
   * batches and sent as they are rendered, never held whole. A request naming a page
   * (`page`, `cursor`, `limit` or `offset`) gets that page as `body` either way.
   */
  readonly lists?: 'page' | 'all';
  /** The answer's bytes: at once, or as they are made (an async iterable of chunks is streamed). */
  render(input: RenderInput): string | Buffer | AsyncIterable<string | Buffer>;
}

/** A representation a request may negotiate: its media type and, where it has one, its `?format=` name. */
export interface Representation {
  readonly mediaType: string;
  readonly format?: string;
}

/**
 * The API's own representations: JSON first (for any type, or no Accept), the browsable page for
 * browsers. Others are a collection's choice (`renderers`: the built-in CSV one, render/csv.ts, or
 * the app's own), as DRF's `renderer_classes` are: a client asking another gets 406.
 */
export const API_REPRESENTATIONS: readonly Representation[] = [
  { mediaType: 'application/json', format: 'json' },
  { mediaType: 'text/html', format: 'html' },
];

const FORMAT = /^[a-z][a-z0-9_-]*$/;
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i;

/** Refuses, at start-up, a renderer whose media type or format clashes with another's or cannot be negotiated. */
export function assertRenderers(name: string, renderers: readonly Renderer[]): void {
  const taken = [...API_REPRESENTATIONS];
  for (const renderer of renderers) {
    if (!MEDIA_TYPE.test(renderer.mediaType)) throw new Error(`${name}: renderer media type "${renderer.mediaType}" must be type/subtype, without parameters.`);
    if (!FORMAT.test(renderer.format)) throw new Error(`${name}: renderer format "${renderer.format}" must match ${FORMAT}.`);
    if (typeof renderer.render !== 'function') throw new Error(`${name}: renderer ${renderer.mediaType} has no render function.`);
    if (renderer.lists !== undefined && renderer.lists !== 'page' && renderer.lists !== 'all') throw new Error(`${name}: renderer ${renderer.mediaType}: lists must be 'page' or 'all'.`);
    const clash = taken.find((other) => other.mediaType === renderer.mediaType.toLowerCase() || other.format === renderer.format);
    if (clash) throw new Error(`${name}: renderer ${renderer.mediaType} (format ${renderer.format}) clashes with ${clash.mediaType} (format ${clash.format}).`);
    taken.push({ mediaType: renderer.mediaType.toLowerCase(), format: renderer.format });
  }
}
