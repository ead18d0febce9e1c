/** destroy: the record the path names, or on the list path the records its filters select (`bulkDelete`). */
import { deleteMatching } from '../../store/write/writes.js';
import { notFound, validationFailed } from '../base/errors.js';
import { deleteRecord, inTransaction, type DeleteRequest, type WriteCheck } from '../write/unit.js';
import { recordConditions } from '../stages/permissions.js';
import { logsWrites, logWrites } from '../write/change-log.js';
import type { Row } from '../../core/rows.js';
import { PAGING_PARAMETERS } from './limit-offset.js';
import { parseListQuery } from '../stages/list-params.js';
import { guard, pathKey, selectionOf, shownRefusal, type ActionRequest, type ActionResult } from './request.js';

/** Whether a delete must see the record first: to compare its ETag, to show it to a hook, or to know its files. */
const deleteShowsRecord = ({ request, fileWrites, collection: { hooks } }: ActionRequest): boolean =>
  request.headers['if-match'] !== undefined || fileWrites !== undefined || Boolean(hooks.beforeDelete ?? hooks.afterDelete ?? hooks.afterCommit);

/**
 * The record's checks as a delete runs them: none where its object permissions pass every record;
 * said as conditions (`passing`) the DELETE carries where they can be; else read and checked first.
 */
async function deleteChecks(action: ActionRequest): Promise<Pick<DeleteRequest, 'check' | 'passing'>> {
  const { user, version } = action;
  const conditions = deleteShowsRecord(action) ? undefined : await recordConditions(action.permissions, { user, action: action.action, version });
  if (conditions === true) return {};
  const passing = typeof conditions === 'object' ? { fields: action.collection.queryRules.fields, conditions } : undefined;
  return { check: guard(action), passing };
}

/**
 * DELETE on the list path (the collection's `bulkDelete`): every record the list's filters and
 * search select within the request's scope, in one statement (logged in its transaction); 204. With no filter, refused unless
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
  const { database } = action.reader;
  const matching = { filters, search, scope: action.scope?.conditions };
  if (!logsWrites(database)) await deleteMatching(database, collection.listSource, matching);
  else {
    // Logged in the delete's own transaction, as the write unit logs one record's.
    await inTransaction(database, async (transaction) => {
      const keys = await deleteMatching(transaction, collection.listSource, matching);
      await logWrites(transaction, action, 'delete', keys.map((key) => ({ key, changed: [] })));
    });
  }
  return { status: 204 };
}

export async function destroy(action: ActionRequest): Promise<ActionResult> {
  // The list path names no record: there, DELETE is the collection's bulk delete (the router mounts it only when declared).
  if (action.id === undefined) return destroyMatching(action);
  const { collection, scope, fileWrites } = action;
  const id = pathKey(action);
  const { model } = collection.serializer;
  let deleted: boolean;
  // With files, the record is read as it is deleted: the objects it names go once the delete commits.
  let gone: Row | undefined;
  const { check: checked, passing } = await deleteChecks(action);
  const check: WriteCheck | undefined = fileWrites
    ? (row, database) => {
        gone = row;
        return checked?.(row, database);
      }
    : checked;
  try {
    deleted = await deleteRecord(action.reader.database, {
      model: collection.serializer.model,
      selection: selectionOf(action),
      id,
      // Only the scope's conditions are read: a delete reads no record back.
      request: { writer: action, hooks: collection.hooks, within: scope && { scope, source: collection.listSource }, check, passing },
    });
  } catch (error) {
    throw shownRefusal(action, error);
  }
  if (!deleted) throw notFound();
  fileWrites?.committedOver(model.fields, gone, undefined);
  return { status: 204 };
}
