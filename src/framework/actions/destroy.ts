/** destroy: the record the path names, or on the list path the records its filters select (`bulkDelete`). */
import type { Database } from '../../store/connection/database.js';
import { deleteMatching, deleteRecord } from '../../store/write/writes.js';
import { notFound, validationFailed } from '../base/errors.js';
import { written as hooked } from '../declare/hooks.js';
import { PAGING_PARAMETERS } from './limit-offset.js';
import { parseListQuery } from '../stages/list-params.js';
import type { Row } from '../../core/rows.js';
import { fromTable } from '../toolkit/credential-store.js';
import { committed, guard, hookEvent, pathKey, selectionOf, shownRefusal, type ActionRequest, type ActionResult } from './request.js';

/** Whether a delete must see the record first: to compare its ETag, to check a permission on it, or to show it to a hook. */
const deleteReadsRecord = ({ request, permissions, collection: { hooks } }: ActionRequest): boolean =>
  request.headers['if-match'] !== undefined ||
  permissions.some((permission) => permission.hasObjectPermission) ||
  Boolean(hooks.beforeDelete ?? hooks.afterDelete ?? hooks.afterCommit);

/**
 * DELETE on the list path (the collection's `bulkDelete`): every record the list's filters and
 * search select within the request's scope, in one statement; 204. With no filter, refused unless
 * the collection allows deleting all its records at once.
 */
async function destroyMatching(action: ActionRequest): Promise<ActionResult> {
  const { collection, parameters } = action;
  // A bulk delete takes no page, so that none seems to narrow what it deletes.
  const paging = PAGING_PARAMETERS.filter((name) => parameters.has(name));
  if (paging.length > 0) throw validationFailed(Object.fromEntries(paging.map((name) => [name, ['A delete takes no page: it deletes every record its filters select.']])), 'Invalid query parameters.');
  const { filters, search } = parseListQuery(parameters, collection.queryRules);
  if (filters.length === 0 && search.length === 0 && collection.bulkDelete !== 'all') {
    throw validationFailed({ non_field_errors: ['Name at least one filter: this collection does not delete all its records at once.'] });
  }
  await deleteMatching(action.reader.database, collection.listSource, { filters, search, scope: action.scope?.conditions });
  return { status: 204 };
}

export async function destroy(action: ActionRequest): Promise<ActionResult> {
  // The list path names no record: there, DELETE is the collection's bulk delete (the router mounts it only when declared).
  if (action.id === undefined) return destroyMatching(action);
  const id = pathKey(action);
  const { hooks } = action.collection;
  let existing: Row | undefined;
  // In the locked read's transaction: the hook's reads see the record as it is deleted.
  const seen = async (row: Row, database: Database): Promise<void> => {
    existing = row;
    fromTable(action.collection.serializer.model, row);
    await hooks.beforeDelete?.({ ...hookEvent(action, database), existing: row });
  };
  let deleted: boolean;
  try {
    deleted = await hooked(
      action.reader.database,
      hooks.afterDelete !== undefined,
      (database) => deleteRecord(database, selectionOf(action), id, deleteReadsRecord(action) ? guard(action, seen) : undefined, action.scope),
      async (database, deleted) => {
        if (deleted) await hooks.afterDelete?.({ ...hookEvent(action, database), existing: existing! });
      },
    );
  } catch (error) {
    throw shownRefusal(action, error);
  }
  if (!deleted) throw notFound();
  const afterCommit = existing && committed(action, 'delete', existing);
  if (afterCommit) await afterCommit;
  return { status: 204 };
}
