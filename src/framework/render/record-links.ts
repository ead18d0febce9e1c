/**
 * Records' own URLs (`computed.url()`, DRF's HyperlinkedIdentityField), built as a created record's
 * `Location` is: the request's origin, the prefix and trailing-slash rule of the router that
 * serves it, the collection's path and the record's key segment.
 */
import type { FastifyRequest } from 'fastify';
import type { Row } from '../../core/rows.js';
import { pathEnd } from '../base/style.js';
import type { Collection } from '../declare/collection.js';
import { listPath, PARENT_PARAMETER } from '../declare/paths.js';
import type { RecordLinks } from '../declare/computed.js';
import { absoluteLink } from '../base/hosts.js';
import { FILES_SEGMENT, type FilePlace } from '../base/file-links.js';

/** Whether each record of the collection has a path of its own that answers GET (a singleton's path names no record). */
const retrievable = (collection: Collection): boolean => collection.builtInActions.has('retrieve') && !collection.singleton;

/**
 * The links a collection's records render with: its own records at its own paths (a nested
 * collection's under the request's parent record), and a record of another table (a nested one,
 * or a singleton's) at the first of the router's top-level collections of that table that serves it.
 */
export function recordLinks(collection: Collection, routed: readonly Collection[]): RecordLinks {
  const byTable = new Map<string, Collection>();
  if (retrievable(collection)) byTable.set(collection.serializer.model.table, collection);
  for (const other of routed) {
    const table = other.serializer.model.table;
    if (!byTable.has(table) && !other.parent && retrievable(other)) byTable.set(table, other);
  }
  /** The collection's path, a nested one's under the request's parent record; undefined when the request names none. */
  const pathOf = (request: FastifyRequest, target: Collection): string | undefined => {
    if (!target.parent) return listPath(target);
    const parent = (request.params as Partial<Record<string, string>>)[PARENT_PARAMETER];
    return parent === undefined ? undefined : listPath(target).replace(`:${PARENT_PARAMETER}`, encodeURIComponent(parent));
  };
  const own = collection.serializer.model.table;
  return {
    recordUrl(request: FastifyRequest, table: string, row: Row): string | null {
      const target = byTable.get(table);
      const path = target && pathOf(request, target);
      if (!target || path === undefined) return null;
      if (row[target.recordKey.field] === undefined || row[target.recordKey.field] === null) return null;
      return absoluteLink(request, `${request.server.prefix}${path}${target.recordKey.segment(row)}${pathEnd(request)}`);
    },
    filePlace(request: FastifyRequest, table: string, row: Row): FilePlace | null {
      // The request's own collection serves its files' downloads even where it answers no GET for the record.
      const target = table === own ? collection : byTable.get(table);
      const path = target && pathOf(request, target);
      return !target || path === undefined ? null : filePlaceIn(target, path, row);
    },
  };
}

/** Where `row`'s files are downloaded in `target`, whose list is at `path` (a nested one's parent filled in); null when the row has no key. */
export function filePlaceIn(target: Collection, path: string, row: Row): FilePlace | null {
  if (target.singleton) return { collection: target.name, record: '', path: `${path}${FILES_SEGMENT}/` };
  const value = row[target.recordKey.field];
  if (value === undefined || value === null) return null;
  const segment = target.recordKey.segment(row);
  return { collection: target.name, record: decodeURIComponent(segment), path: `${path}${segment}/${FILES_SEGMENT}/` };
}

/**
 * The query string a request's links carry: under the query scheme its version (as DRF's
 * QueryParameterVersioning.reverse adds it), so a client following a record's URL or a created
 * record's Location stays on its version; else none.
 */
export const linkQueryOf = (param: string | undefined, version: string | undefined): string =>
  param === undefined || version === undefined ? '' : `?${new URLSearchParams({ [param]: version }).toString()}`;

/** The links with `query` (linkQueryOf's) after each URL. */
export const withLinkQuery = (links: RecordLinks, query: string): RecordLinks => ({
  recordUrl(request, table, row) {
    const url = links.recordUrl(request, table, row);
    return url === null ? null : `${url}${query}`;
  },
  // Downloads answer every version alike: their links carry none.
  filePlace: (request, table, row) => links.filePlace(request, table, row),
});
