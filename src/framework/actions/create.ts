/**
 * create: one record from the body, or several from an array (the collection's `bulkCreateMax`),
 * validated, passed to the hooks and stored; 201 with its Location, or the collection's status.
 */
import { RecordRefused } from '../../core/refused.js';
import { pathEnd } from '../base/style.js';
import { strongEtag } from '../stages/conditional.js';
import { ApiError, validationFailed, type ErrorDetails, throwIfInvalid } from '../base/errors.js';
import { atIndex, createRecords } from '../write/unit.js';
import { linkBelow } from '../base/hosts.js';
import type { Row } from '../../core/rows.js';
import type { Serializer, WriteContext } from '../declare/serializer.js';
import { isPending } from '../../core/maybe-promise.js';
import { assertWritable, selectionOf, shownRefusal, writeContext, written, type ActionRequest, type ActionResult } from './request.js';

/** A new record's values: its fields, then the whole object, validated (the before-create hook runs with the write: see framework/write/unit.ts). */
async function creation(action: ActionRequest, serializer: Serializer, body: unknown, context: WriteContext): Promise<Row> {
  const parsed = serializer.parseBody(body, 'create', context);
  const values = { ...(isPending(parsed) ? await parsed : parsed), ...action.fromPath };
  action.collection.recordKey.assertReachable(values);
  const validated = serializer.validateObject(values, { existing: undefined, user: action.user, version: action.version }, action.collection.validate);
  if (validated) await validated;
  serializer.model.rules?.creates?.(values, action.user);
  return values;
}

/** The records created by the write unit (framework/write/unit.ts), with the request's hooks and scope; `many`: a bulk create. */
async function stored(action: ActionRequest, serializer: Serializer, records: readonly Row[], context: WriteContext, many: boolean): Promise<Row[]> {
  const { collection, scope } = action;
  // Read as a detail path finds it, so the row carries the record key its Location names.
  const selection = selectionOf(action, serializer);
  try {
    return await createRecords(action.reader.database, {
      serializer,
      selection,
      context,
      records,
      many,
      request: { writer: action, hooks: collection.hooks, within: scope && { scope, source: { ...collection.listSource, selection } } },
    });
  } catch (error) {
    throw shownRefusal(action, error);
  }
}

export async function create(action: ActionRequest): Promise<ActionResult> {
  if (Array.isArray(action.body) && action.collection.bulkCreateMax !== undefined) return createMany(action, action.body);
  const { collection, request } = action;
  const serializer = collection.serializerFor(action);
  const refused = assertWritable(action, serializer, [action.body], false);
  if (refused) await refused;
  const context = writeContext(action);
  const values = await creation(action, serializer, action.body, context);
  const [row] = (await stored(action, serializer, [values], context, false)) as [Row];
  action.fileWrites?.committedOver(serializer.model.fields, undefined, row);
  const body = serializer.render(row, action);
  // A 200 names no new resource (RFC 9110 gives Location a meaning in a 201 or a redirect only).
  if (collection.createStatus === 200) return written(200, body, strongEtag);
  return written(201, body, strongEtag, linkBelow(request, `${collection.recordKey.segment(row)}${pathEnd(request)}${action.linkQuery ?? ''}`));
}

/** A bulk create: every record valid and stored, in one transaction, or none. */
async function createMany(action: ActionRequest, records: unknown[]): Promise<ActionResult> {
  const { collection } = action;
  const max = collection.bulkCreateMax!;
  if (records.length > max) throw new ApiError(413, 'payload_too_large', `Send at most ${max} records at once.`);
  if (records.length === 0) throw validationFailed({ non_field_errors: ['Send at least one record.'] });
  const serializer = collection.serializerFor(action);
  const refused = assertWritable(action, serializer, records, true);
  if (refused) await refused;
  const context = writeContext(action);
  const details: ErrorDetails = {};
  const values: Row[] = [];
  for (const [index, record] of records.entries()) {
    try {
      values.push(await creation(action, serializer, record, context));
    } catch (error) {
      if (!(error instanceof ApiError) || !error.details) throw error;
      Object.assign(details, atIndex(index, error.details));
    }
  }
  throwIfInvalid(details);
  try {
    const rows = await stored(action, serializer, values, context, true);
    return { status: collection.createStatus, body: rows.map((row) => serializer.render(row, action)) };
  } catch (error) {
    if (error instanceof RecordRefused && error.index !== undefined) throw validationFailed(atIndex(error.index, serializer.refusalDetails(error)));
    throw error;
  }
}
