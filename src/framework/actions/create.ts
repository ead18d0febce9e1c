/**
 * create: one record from the body, or several from an array (the collection's `bulkCreateMax`),
 * validated, passed to the hooks and stored; 201 with its Location, or the collection's status.
 */
import type { Database } from '../../store/connection/database.js';
import { createRecord, createRecords } from '../../store/write/writes.js';
import { RecordRefused } from '../../core/refused.js';
import { pathEnd } from '../base/style.js';
import { strongEtag } from '../stages/conditional.js';
import { ApiError, validationFailed, type ErrorDetails, throwIfInvalid } from '../base/errors.js';
import { prepared, written as hooked } from '../declare/hooks.js';
import { writeWithRelations } from '../declare/relations.js';
import { absoluteLink } from '../base/hosts.js';
import type { Row, Selection } from '../../core/rows.js';
import type { WriteContext } from '../declare/serializer.js';
import { isPending } from '../../core/maybe-promise.js';
import { fromTable } from '../toolkit/credential-store.js';
import { committed, hookEvent, inScope, selectionOf, shownRefusal, writeContext, written, type ActionRequest, type ActionResult } from './request.js';

/** A new record's values: its fields, then the whole object, validated (the before-create hook runs with the write: see stored). */
async function creation(action: ActionRequest, body: unknown, context: WriteContext): Promise<Row> {
  const serializer = action.collection.serializerFor('create');
  const parsed = serializer.parseBody(body, 'create', context);
  const values = { ...(isPending(parsed) ? await parsed : parsed), ...action.fromPath };
  action.collection.recordKey.assertReachable(values);
  const validated = serializer.validateObject(values, { existing: undefined, user: action.user }, action.collection.validate);
  if (validated) await validated;
  serializer.model.rules?.creates?.(values, action.user);
  return values;
}

/**
 * The before-create hook's values over each record's validated ones, then the records created: in
 * one transaction with the hooks and the scope's re-read, when there are after-create hooks or a
 * scope, when the hooks ask for one (`inTransaction`), or for a bulk create (the before-hook's reads then see what the write will); then
 * committed. A bulk create's hook refusing a record is reported under its index.
 */
async function stored(action: ActionRequest, validated: readonly Row[], create: (database: Database, values: readonly Row[]) => Promise<Row[]>): Promise<Row[]> {
  const { reader, collection } = action;
  const { beforeCreate, afterCreate } = collection.hooks;
  const values: Row[] = [];
  let rows: Row[];
  try {
    rows = await hooked(
      reader.database,
      // A bulk create is one transaction anyway (createRecords joins this one).
      action.scope !== undefined || afterCreate !== undefined || collection.hooks.inTransaction === true || Array.isArray(action.body),
      async (database) => {
        for (let index = 0; index < validated.length; index++) {
          const row = validated[index]!;
          try {
            const set = prepared(row, beforeCreate?.({ ...hookEvent(action, database), values: row }));
            values.push(isPending(set) ? await set : set);
          } catch (error) {
            if (!Array.isArray(action.body) || !(error instanceof ApiError) || !error.details) throw error;
            throw validationFailed(atIndex(index, error.details));
          }
        }
        const created = await create(database, values);
        const rows = action.scope ? await inScope(action, action.scope, database, created) : created;
        fromTable(collection.serializer.model, ...rows);
        return rows;
      },
      async (database, rows) => {
        for (const [index, record] of rows.entries()) await afterCreate?.({ ...hookEvent(action, database), values: values[index]!, record });
      },
    );
  } catch (error) {
    throw shownRefusal(action, error);
  }
  for (const record of rows) {
    const afterCommit = committed(action, 'create', record);
    if (afterCommit) await afterCommit;
  }
  return rows;
}

/** Writes one record with its relations, read back as `selection` reads it. */
const createOne = (action: ActionRequest, selection: Selection, context: WriteContext) => (database: Database, values: Row) => {
  const serializer = action.collection.serializerFor('create');
  return writeWithRelations(database, serializer, selection, values, context, (database, own) => createRecord(database, serializer.model, selection, own));
};

export async function create(action: ActionRequest): Promise<ActionResult> {
  if (Array.isArray(action.body) && action.collection.bulkCreateMax !== undefined) return createMany(action, action.body);
  const { collection, request } = action;
  // Read as a detail path finds it, so the row carries the lookup field its Location names.
  const selection = selectionOf(action);
  const context = writeContext(action);
  const values = await creation(action, action.body, context);
  const [row] = (await stored(action, [values], async (database, [prepared]) => [await createOne(action, selection, context)(database, prepared!)])) as [Row];
  const body = collection.serializerFor('create').render(row, action);
  // A 200 names no new resource (RFC 9110 gives Location a meaning in a 201 or a redirect only).
  if (collection.createStatus === 200) return written(200, body, strongEtag);
  const path = `${request.url.split('?')[0]!.replace(/\/?$/, '/')}${collection.recordKey.segment(row)}${pathEnd(request)}`;
  return written(201, body, strongEtag, absoluteLink(request, path));
}

/** Each record's errors under `<index>.<field>`. */
function atIndex(index: number, details: ErrorDetails | undefined): ErrorDetails {
  return Object.fromEntries(Object.entries(details ?? {}).map(([field, messages]) => [`${index}.${field}`, messages]));
}

/** A bulk create: every record valid and stored, in one transaction, or none. */
async function createMany(action: ActionRequest, records: unknown[]): Promise<ActionResult> {
  const { collection } = action;
  const max = collection.bulkCreateMax!;
  if (records.length > max) throw new ApiError(413, 'payload_too_large', `Send at most ${max} records at once.`);
  if (records.length === 0) throw validationFailed({ non_field_errors: ['Send at least one record.'] });
  const context = writeContext(action);
  const details: ErrorDetails = {};
  const values: Row[] = [];
  for (const [index, record] of records.entries()) {
    try {
      values.push(await creation(action, record, context));
    } catch (error) {
      if (!(error instanceof ApiError) || !error.details) throw error;
      Object.assign(details, atIndex(index, error.details));
    }
  }
  throwIfInvalid(details);
  try {
    const rows = await stored(action, values, (database, prepared) => createRecords(database, prepared, createOne(action, selectionOf(action), context)));
    return { status: collection.createStatus, body: rows.map((row) => collection.serializerFor('create').render(row, action)) };
  } catch (error) {
    if (error instanceof RecordRefused && error.index !== undefined) throw validationFailed(atIndex(error.index, collection.serializerFor('create').refusalDetails(error)));
    throw error;
  }
}
