/**
 * Nested collections (DRF's nested routers): a collection mounted under one record of its parent,
 * `/articles/{parent}/comments/`. Every read and write of it is scoped to that record (the child's
 * foreign key equals it, ANDed with the child's own scope), a create sets the foreign key from the
 * path, and a parent that does not exist or lies outside the parent collection's scope is 404.
 */
import type { FastifyRequest } from 'fastify';
import type { RecordScope } from '../core/list-query.js';
import type { Row, Selection } from '../core/rows.js';
import type { RequestReader } from '../store/reader.js';
import type { RecordId } from '../store/records.js';
import { PARENT_PARAMETER } from './collection-paths.js';
import type { Collection } from './collection.js';
import { notFound } from './errors.js';
import { idOf } from './record-id.js';
import { scopeFor, type RequestContext } from './scope.js';
import type { Serializer } from './serializer.js';

export interface Parent {
  /** The collection whose records this one is mounted under. */
  readonly collection: Collection;
  /** This model's foreign key to the parent's model: the path sets it, so the serializer may not take it from a body. */
  readonly field: string;
}

/** Refuses, at start-up, a parent this collection cannot be nested under. */
export function assertParent(name: string, serializer: Serializer, parent: Parent): void {
  const { model } = parent.collection.serializer;
  if (parent.collection.parent) throw new Error(`${name}: its parent "${parent.collection.name}" is nested itself; nest one level only.`);
  if (serializer.model.fields[parent.field]?.references !== model.table) {
    throw new Error(`${name}: parent field "${parent.field}" must be a foreign key to ${model.table}.`);
  }
  if (serializer.writable.includes(parent.field)) {
    throw new Error(`${name}: "${parent.field}" is set from the path; list it in the serializer's readOnly (or leave it out of its fields).`);
  }
}

/** What a request to a collection reaches: its scope, and the values its path sets on a create. */
export interface RequestScope {
  readonly scope?: RecordScope;
  readonly fromPath?: Row;
}

/** The parent record's id column alone: whether it exists within its scope is all a nested request asks. */
const idSelection = (parent: Collection): Selection => ({ table: parent.serializer.model.table, columns: ['id'], joins: [] });

/**
 * The parent record named by the path segment, within the parent collection's scope for this
 * request: its id, else 404 (a segment that is no id names no record). The one place a parent is
 * looked up: a parent looked up by another field than its id changes this function only.
 */
async function parentId(parent: Collection, segment: string, reader: RequestReader, context: RequestContext): Promise<RecordId> {
  const id = idOf(segment);
  const found = id !== undefined && (await reader.record(idSelection(parent), id, scopeFor(parent.scope, parent.queryRules.fields, context)));
  if (!found) throw notFound();
  return id!;
}

/** The collection's scope for this request and, for a nested collection, its parent's: 404 when the parent is out of reach. */
export async function requestScope(collection: Collection, request: FastifyRequest, reader: RequestReader, context: RequestContext): Promise<RequestScope> {
  const scope = scopeFor(collection.scope, collection.queryRules.fields, context);
  const { parent } = collection;
  if (!parent) return { scope };
  const segment = (request.params as Record<string, string | undefined>)[PARENT_PARAMETER] ?? '';
  const id = await parentId(parent.collection, segment, reader, context);
  const underParent = { field: parent.field, lookup: 'exact', value: id } as const;
  return {
    scope: { fields: collection.queryRules.fields, conditions: [...(scope?.conditions ?? []), underParent] },
    fromPath: { [parent.field]: id },
  };
}
