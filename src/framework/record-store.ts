/**
 * A record store: one model's records read and written through its
 * serializer, for routes outside the collection API. Bodies are checked by
 * the serializer; failures are the framework's typed errors (400 naming the
 * field, 404, and 500 when a write fails), so any error renderer can show them.
 */
import type { Database } from '../store/database.js';
import { deleteRecord, findRecord, insertRecord, listRecords, recordExists, updateRecord, type RecordId } from '../store/records.js';
import { storing } from './actions.js';
import { ApiError, notFound } from './errors.js';
import { FieldError, parseInteger64 } from './fields.js';
import type { Row, Serializer, WriteContext } from './serializer.js';

export type { RecordId };

export interface RecordStoreOptions {
  /** What one record is called in messages: "post" → "Post not found." */
  readonly name: string;
  /** Body fields the serializer does not know: 400 (as collections answer) or dropped. */
  readonly unknownFields?: 'reject' | 'ignore';
}

/** Records rendered by the serializer (JSON-ready, in its field order). */
export interface RecordStore {
  /** The record; 404 when there is none. */
  get(id: RecordId): Promise<Row>;
  /** Every record whose fields equal `where` (values, not SQL expressions), ordered by field names (`-name` descending). */
  list(where: Row, ordering: readonly string[]): Promise<Row[]>;
  /** Validates `body` as a new record, stores it with `set` (values the route sets, not the client). */
  create(body: unknown, set?: Row): Promise<Row>;
  /**
   * Loads the record (404), then reads the body (so an unknown id is 404 whatever
   * the body), applies the body's fields over the record, then `set`, and saves it.
   */
  update(id: RecordId, readBody: () => unknown, set?: Row): Promise<Row>;
  /** Loads the record (404), then removes it. */
  delete(id: RecordId): Promise<void>;
}

/** A path's id segment: a signed 64-bit integer, else 400 (whether a record has it is for the store to say). */
export function parseRecordId(text: string, name = 'record'): RecordId {
  try {
    return parseInteger64(text);
  } catch (error) {
    if (!(error instanceof FieldError)) throw error;
    throw new ApiError(400, 'validation_failed', `Invalid ${name} id: it must be a 64-bit integer.`);
  }
}

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

export function recordStore(database: Database, serializer: Serializer, options: RecordStoreOptions): RecordStore {
  const { model, selection } = serializer;
  const known = new Set(serializer.fields);
  const missing = (): ApiError => notFound(`${capitalized(options.name)} not found.`);
  const context: WriteContext = { userId: null, exists: (table, id) => recordExists(database, table, id) };

  const validate = (body: unknown, mode: 'create' | 'partial_update'): Promise<Row> => {
    const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
    const input =
      isObject && options.unknownFields === 'ignore'
        ? Object.fromEntries(Object.entries(body).filter(([name]) => known.has(name)))
        : body;
    return serializer.validate(input, mode, context);
  };

  /** A failed write is a 500 saying only what failed; the cause goes to the log (an outage stays a 503). */
  const writing = async <T>(what: string, write: () => Promise<T>): Promise<T> => {
    try {
      return await storing(database, write);
    } catch (error) {
      if (error instanceof ApiError || database.isUnavailable(error)) throw error;
      throw Object.assign(new ApiError(500, 'server_error', `Could not ${what} the ${options.name}.`), { cause: error });
    }
  };

  const load = async (id: RecordId): Promise<Row> => {
    const row = await findRecord(database, selection, id);
    if (!row) throw missing();
    return row;
  };

  return {
    get: async (id) => serializer.render(await load(id)),

    async list(where, ordering) {
      const terms = ordering.map((term) => ({ field: term.replace(/^-/, ''), descending: term.startsWith('-') }));
      for (const { field } of terms) if (!model.fields[field]) throw new Error(`${model.table} has no field "${field}"`);
      const rows = await listRecords(database, model, selection, where, terms);
      return rows.map((row) => serializer.render(row));
    },

    async create(body, set = {}) {
      const values = { ...(await validate(body, 'create')), ...set };
      const id = await writing('save', () => insertRecord(database, model, values));
      return serializer.render({ ...values, id });
    },

    async update(id, readBody, set = {}) {
      const row = await load(id);
      const values = { ...(await validate(readBody(), 'partial_update')), ...set };
      if (!(await writing('save', () => updateRecord(database, model, id, values)))) throw missing();
      // Only the body's fields are written, so a concurrent save of other fields is not undone.
      return serializer.render({ ...row, ...values });
    },

    async delete(id) {
      await load(id);
      if (!(await writing('delete', () => deleteRecord(database, model, id)))) throw missing();
    },
  };
}
