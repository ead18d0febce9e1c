/**
 * update and partial_update: the record the path names, read and checked, changed by the body's
 * fields (all of them, or those sent) and the hooks, conditionally on it being unchanged (the
 * write unit's steps: framework/write/unit.ts).
 */
import { strongEtag } from '../stages/conditional.js';
import { notFound } from '../base/errors.js';
import { updateRecord, type WriteCheck } from '../write/unit.js';
import type { Row } from '../../core/rows.js';
import type { WriteMode } from '../declare/serializer.js';
import { isPending } from '../../core/maybe-promise.js';
import { assertCurrent, assertWritable, guard, loadRecord, selectionOf, shownRefusal, writeContext, written, type ActionRequest, type ActionResult } from './request.js';

/** Object validation of an update's values over a stored record: the serializer's `validate`, then the collection's. */
const validateUpdate = (action: ActionRequest, fields: Row, existing: Row): Promise<void> | undefined =>
  action.collection.serializerFor(action).validateObject(fields, { existing, user: action.user, version: action.version }, action.collection.validate);

/**
 * The update's object validation again, on the record it writes, where that is not the one
 * validated: changed since the first read (PostgreSQL's conditional UPDATE missed and the record
 * was read again under a lock; SQLite's locked re-read found it changed). Rules across fields then
 * hold for what is stored, not for what was read.
 */
function revalidation(action: ActionRequest, fields: Row, existing: Row): WriteCheck | undefined {
  const { validate } = action.collection;
  const serializer = action.collection.serializerFor(action);
  if (!serializer.validatesObjects(validate)) return undefined;
  const stored = (row: Row): string => JSON.stringify(serializer.storedFields(row), (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
  return async (row) => {
    if (row !== existing && stored(row) !== stored(existing)) await validateUpdate(action, fields, row);
  };
}

export async function change(action: ActionRequest, mode: WriteMode): Promise<ActionResult> {
  const { collection, scope } = action;
  const serializer = collection.serializerFor(action);
  const selection = selectionOf(action, serializer);
  // 404 and 403 come before a body is judged; validation (which may hash a password) stays outside the transaction.
  const { id, row: existing } = await loadRecord(action, serializer);
  const refused = assertWritable(action, serializer, [action.body], false, existing);
  if (refused) await refused;
  const context = writeContext(action);
  const parsed = serializer.parseBody(action.body, mode, context);
  const fields = isPending(parsed) ? await parsed : parsed;
  collection.recordKey.assertReachable(fields);
  const validated = validateUpdate(action, fields, existing);
  if (validated) await validated;
  let row: Row | undefined;
  // The record as written over: the one read, or (when it changed meanwhile) the one the locked way checked.
  let replaced = existing;
  const check = guard(action, revalidation(action, fields, existing));
  try {
    row = await updateRecord(action.reader.database, {
      serializer,
      selection,
      context,
      id,
      values: fields,
      request: {
        writer: action,
        hooks: collection.hooks,
        within: scope && { scope, source: { ...collection.listSource, selection } },
        existing,
        check: (locked, database) => {
          replaced = locked;
          return check(locked, database);
        },
        // loadRecord checked the object permissions on the record seen: what is left is If-Match.
        checkSeen: (row) => assertCurrent(action, row),
      },
    });
  } catch (error) {
    throw shownRefusal(action, error);
  }
  if (!row) throw notFound();
  action.fileWrites?.committedOver(serializer.model.fields, replaced, row);
  return written(200, serializer.render(row, action), strongEtag);
}
