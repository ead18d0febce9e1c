/**
 * A collection's record key: the unique field its detail paths name a record by
 * (`/articles/{slug}/`), declared as `recordKey` (DRF's `lookup_field`), `id` unless the
 * collection says otherwise. Retrieve, update, delete, custom detail actions, conditional
 * requests, `Location` and the OpenAPI path parameter all go through it. Checked once, at start-up.
 */
import { FieldError, type JsonSchema } from '../../core/fields.js';
import type { Model } from '../../core/model.js';
import type { Row, Selection } from '../../core/rows.js';
import type { RecordId } from '../../store/read/records.js';
import { ApiError, notFound, validationFailed } from '../base/errors.js';
import { idOf, invalidId } from './record-id.js';

export interface RecordKey {
  /** The field, and the name of the detail paths' parameter. */
  readonly field: string;
  /** A detail route's segment naming the record, from its path parameters (undefined on the list's routes). */
  segmentIn(params: unknown): string | undefined;
  /** A path segment → the key the store finds the record by; undefined when no record can have it. */
  key(text: string): RecordId | undefined;
  /**
   * What a path segment no record can have answers: 404 as DRF does (400 for a malformed integer
   * `id`, as always, its details keyed by `parameter`, the path's name for the segment).
   */
  unreachable(parameter?: string): ApiError;
  /** The selection finding its record by the key field (the same object each time, so its compiled queries are kept). */
  selection(selection: Selection): Selection;
  /** The path segment naming a stored row. */
  segment(row: Row): string;
  /** The detail paths' parameter, for the OpenAPI document. */
  readonly params: JsonSchema;
  /** 400 when a write would give the key field a value one of the collection's own paths takes (`bulk`, a list action). */
  assertReachable(values: Row): void;
}

/** An integer id's parameter: the route's path segment, checked by the action (400), not by a schema. */
const idParams: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'integer', minimum: 1, description: 'A positive 64-bit integer.' } },
  required: ['id'],
};

/** A path parameter is the client's to send, whatever the field is in a body. */
const withoutReadOnly = (schema: JsonSchema): JsonSchema => Object.fromEntries(Object.entries(schema).filter(([name]) => name !== 'readOnly'));

const keyed = new WeakMap<Selection, Selection>();

/**
 * `field` of `model` as `collection`'s record key (its `recordKey`); `taken` are the path segments
 * after `/<collection>/` that name endpoints of its own, which a record's value must not shadow.
 */
export function recordKey(collection: string, model: Model, field: string, taken: readonly string[]): RecordKey {
  const declared = model.fields[field];
  if (!declared) throw new Error(`${collection}: recordKey "${field}" is no field of ${model.table}.`);
  const byId = field === 'id';
  const fit = declared.valueType === 'string' || declared.valueType === 'integer';
  if (!byId && (!declared.unique || declared.nullable || declared.writeOnly || !fit)) {
    throw new Error(`${collection}: recordKey "${field}" must be a unique, not nullable string or integer field.`);
  }
  const integerId = byId && declared.kind === 'integer';
  const parse = (text: string): unknown => (declared.valueType === 'string' ? declared.parse(text) : declared.parseText(text));
  return {
    field,
    segmentIn: (params) => (params as Partial<Record<string, string>>)[field],
    key(text) {
      if (integerId) return idOf(text);
      try {
        return declared.toDriver(parse(text)) as RecordId;
      } catch (error) {
        if (error instanceof FieldError) return undefined;
        throw error;
      }
    },
    unreachable: (parameter) => (integerId ? invalidId(parameter) : notFound()),
    selection(selection) {
      if (byId) return selection;
      let found = keyed.get(selection);
      if (!found) {
        const columns = selection.columns.includes(field) ? selection.columns : [...selection.columns, field];
        keyed.set(selection, (found = { ...selection, columns, recordKey: field }));
      }
      return found;
    },
    segment: (row) => encodeURIComponent(String(declared.render(row[field]))),
    params: integerId
      ? idParams
      : {
          type: 'object',
          properties: { [field]: { ...withoutReadOnly(declared.schema), description: `The record's ${field}.` } },
          required: [field],
        },
    assertReachable(values) {
      const value = values[field];
      if (typeof value === 'string' && taken.includes(value)) {
        throw validationFailed({ [field]: [`"${value}" is the path of one of this collection's endpoints (/${collection}/${value}/); choose another.`] });
      }
    },
  };
}
