/**
 * update and partial_update: the record the path names, read and checked, changed by the body's
 * fields (all of them, or those sent) and the hooks, conditionally on it being unchanged.
 */
import type { Database } from '../../store/connection/database.js';
import type { RecordScope } from '../../core/list-query.js';
import { unrestricted } from '../../store/conditions/visibility.js';
import type { RecordId } from '../../store/read/records.js';
import { updateRecord, type WriteCheck } from '../../store/write/writes.js';
import { strongEtag } from '../stages/conditional.js';
import { notFound } from '../base/errors.js';
import { prepared, written as hooked } from '../declare/hooks.js';
import { writeWithRelations } from '../declare/relations.js';
import type { UpdateRules } from '../declare/model.js';
import type { Row } from '../../core/rows.js';
import type { WriteMode } from '../declare/serializer.js';
import { isPending } from '../../core/maybe-promise.js';
import { fromTable } from '../toolkit/credential-store.js';
import {
  assertCurrent,
  committed,
  guard,
  hookEvent,
  inScope,
  loadRecord,
  selectionOf,
  shownRefusal,
  writeContext,
  written,
  type ActionRequest,
  type ActionResult,
} from './request.js';

/** Whether the model's rules write alongside this update (beforeStore, for the fields it is called on). */
const storesBefore = (rules: UpdateRules, values: Row): boolean => !rules.beforeStoreOn || rules.beforeStoreOn.some((field) => field in values);

/** Object validation of an update's values over a stored record: the serializer's `validate`, then the collection's. */
const validateUpdate = (action: ActionRequest, fields: Row, existing: Row): Promise<void> | undefined =>
  action.collection.serializerFor(action.action).validateObject(fields, { existing, user: action.user }, action.collection.validate);

/**
 * The update's object validation again, on the record it writes, where that is not the one
 * validated: changed since the first read (PostgreSQL's conditional UPDATE missed and the record
 * was read again under a lock; SQLite's locked re-read found it changed). Rules across fields then
 * hold for what is stored, not for what was read.
 */
function revalidation(action: ActionRequest, fields: Row, existing: Row): WriteCheck | undefined {
  const { validate } = action.collection;
  const serializer = action.collection.serializerFor(action.action);
  if (!serializer.validatesObjects(validate)) return undefined;
  const stored = (row: Row): string => JSON.stringify(serializer.storedFields(row), (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
  return async (row) => {
    if (row !== existing && stored(row) !== stored(existing)) await validateUpdate(action, fields, row);
  };
}

export async function change(action: ActionRequest, mode: WriteMode): Promise<ActionResult> {
  const { collection, reader } = action;
  const { hooks } = collection;
  const serializer = collection.serializerFor(action.action);
  const { model } = serializer;
  const selection = selectionOf(action);
  // 404 and 403 come before a body is judged; validation (which may hash a password) stays outside the transaction.
  const { id, row: existing } = await loadRecord(action);
  const context = writeContext(action);
  const parsed = serializer.parseBody(action.body, mode, context);
  const fields = isPending(parsed) ? await parsed : parsed;
  collection.recordKey.assertReachable(fields);
  const validated = validateUpdate(action, fields, existing);
  if (validated) await validated;
  const rules = model.rules?.updates;
  let values = fields;
  let row: Row | undefined;
  const { scope } = action;
  // Whether the update may move the record out of the scope (a before-hook may set any field): then it is read again within it before it commits.
  const checksScope = scope !== undefined && (hooks.beforeUpdate !== undefined || mayLeave(scope, fields));
  // With after-update hooks the before-hook and the update, conditional or locked, run in their transaction, so a throw rolls it back.
  try {
    row = await hooked(
      reader.database,
      hooks.afterUpdate !== undefined || hooks.inTransaction === true || checksScope,
      async (database) => {
        const set = prepared(fields, hooks.beforeUpdate?.({ ...hookEvent(action, database), values: fields, existing }));
        values = isPending(set) ? await set : set;
        // The model's rules get the record's id, whatever the path named it by.
        const update = { id: existing.id as RecordId, values, body: action.body as Row, user: action.user, database: unrestricted(database), countPasswordCheck: action.credentials.countOwnCheck };
        const checked = rules?.check(update);
        if (isPending(checked)) await checked;
        const alongside = rules && storesBefore(rules, values) ? (row: Row, database: Database) => rules.beforeStore({ ...update, database: unrestricted(database) }, row) : undefined;
        const updated = await writeWithRelations(database, serializer, selection, values, context, (database, own) =>
          updateRecord(database, model, selection, id, own, {
            check: guard(action, revalidation(action, fields, existing)),
            // loadRecord checked the object permissions on the record seen: what is left is If-Match.
            checkSeen: (row) => assertCurrent(action, row),
            seen: existing,
            scope,
            alongside,
          }),
        );
        const row = updated && scope && checksScope && mayLeave(scope, values) ? (await inScope(action, scope, database, [updated], MOVED_OUT))[0] : updated;
        if (row) fromTable(model, row);
        return row;
      },
      async (database, record) => {
        if (record) await hooks.afterUpdate?.({ ...hookEvent(action, database), values, existing, record });
      },
    );
  } catch (error) {
    throw shownRefusal(action, error);
  }
  if (!row) throw notFound();
  const afterCommit = committed(action, 'update', row);
  if (afterCommit) await afterCommit;
  return written(200, serializer.render(row, action), strongEtag);
}

const MOVED_OUT = 'You may not change a record so that it lies outside the ones you may see.';

/**
 * Whether writing `values` may take a record out of `scope`: a condition on a field they set or
 * across a relation, or one only the database can judge (a store condition).
 */
const mayLeave = (scope: RecordScope, values: Row): boolean =>
  scope.conditions.some((condition) =>
    'reference' in condition ? condition.reference.column in values : 'storeCondition' in condition || condition.field in values || scope.across?.[condition.field] !== undefined,
  );
