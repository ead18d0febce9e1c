/**
 * Scope application, the stage before the action: the rows a request to a collection may touch
 * (its scope, resolved for the request, with every table it may see only in part handed to the
 * request's reader, tableScopes.ts) and, for a nested collection (DRF's nested routers,
 * `/articles/{parent}/comments/`), the parent record named by the path, which must lie within the
 * parent collection's scope (404 otherwise; a segment no parent can have answers as the parent's
 * detail path does: 400 for a malformed id). A create under it gets its foreign key from the path.
 */
import type { FastifyRequest } from 'fastify';
import type { RecordScope } from '../../../core/list-query.js';
import { isPending, type MaybePromise } from '../../../core/maybe-promise.js';
import type { Row, Selection } from '../../../core/rows.js';
import type { RequestReader } from '../../../store/read/reader.js';
import type { RecordId } from '../../../store/read/records.js';
import { PARENT_PARAMETER } from '../../declare/paths.js';
import type { Collection } from '../../declare/collection.js';
import { notFound } from '../../base/errors.js';
import { narrowedBy, type RequestContext } from '../../declare/scope.js';
import { requestViews, type RequestViews, type ScopePlan } from './plan.js';

/** What a request to a collection reaches: its scope, and the values its path sets on a create. */
export interface RequestScope {
  readonly scope?: RecordScope;
  readonly fromPath?: Row;
}

const idSelections = new WeakMap<Collection, Selection>();

/** The parent record's id column alone, found by its record key: whether it exists within its scope is all a nested request asks. */
function idSelection(parent: Collection): Selection {
  let selection = idSelections.get(parent);
  if (!selection) idSelections.set(parent, (selection = parent.recordKey.selection({ table: parent.serializer.model.table, columns: ['id'], joins: [] })));
  return selection;
}

/**
 * The parent record named by the path segment (its record key's value: its id unless the parent
 * names another), within the parent collection's scope for this request: its id, else 404. A
 * segment no record can have is answered as the parent's detail path answers it (400 for a
 * malformed integer id, keyed by the parameter).
 */
async function parentId(parent: Collection, segment: string, reader: RequestReader, scope: RecordScope | undefined): Promise<RecordId> {
  const key = parent.recordKey.key(segment);
  if (key === undefined) throw parent.recordKey.unreachable(PARENT_PARAMETER);
  const found = await reader.record(idSelection(parent), key, scope);
  if (!found) throw notFound();
  return found.id as RecordId;
}

/**
 * The collection's scope for this request and, for a nested collection, its parent's: 404 when the
 * parent is out of reach. The request's views are resolved first (every scope it needs, once), and
 * what it may see of the app's tables handed to its reader.
 */
export function requestScope(plan: ScopePlan, collection: Collection, request: FastifyRequest, reader: RequestReader, context: RequestContext): MaybePromise<RequestScope> {
  const views = requestViews(plan, collection, context);
  return isPending(views) ? views.then((resolved) => scopeUnder(resolved, collection, request, reader)) : scopeUnder(views, collection, request, reader);
}

function scopeUnder(views: RequestViews, collection: Collection, request: FastifyRequest, reader: RequestReader): MaybePromise<RequestScope> {
  if (views.tableScopes) reader.scopeTo(views.tableScopes);
  const scope = narrowedBy(views.scopeOf(collection), collection);
  const { parent } = collection;
  // At once for a collection that is not nested: there is no parent to read.
  if (!parent) return { scope };
  const segment = (request.params as Record<string, string | undefined>)[PARENT_PARAMETER] ?? '';
  return parentId(parent.collection, segment, reader, narrowedBy(views.scopeOf(parent.collection), parent.collection)).then((id) => {
    const underParent = { field: parent.field, lookup: 'exact', value: id } as const;
    return {
      scope: { fields: collection.queryRules.fields, conditions: [...(scope?.conditions ?? []), underParent], across: collection.listSource.across },
      fromPath: { [parent.field]: id },
    };
  });
}
