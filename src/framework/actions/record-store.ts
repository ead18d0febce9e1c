/**
 * A record store: one model's records read and written through its
 * serializer, for routes outside the collection API. Bodies are checked by
 * the serializer; failures are the framework's typed errors (400 naming the
 * field, 404, and 500 when a write fails), so any error renderer can show them.
 */
import { isJsonObject } from '../../core/json.js';
import { storeDatabase, type Database } from '../../store/database.js';
import { recordsInBatches } from '../../store/list.js';
import { recordsMatching } from '../../store/matching.js';
import { findRecord, listRecords, type RecordId } from '../../store/records.js';
import { createRecord, deleteRecord, updateMatching, updateRecord } from '../../store/writes.js';
import { isComputed } from '../../core/expressions.js';
import { exactOnly, filtersOf } from '../../core/where.js';
import { RecordRefused } from '../../core/refused.js';
import { ApiError, notFound, validationFailed } from '../base/errors.js';
import type { Ordering } from '../../core/list-query.js';
import type { Row } from '../../core/rows.js';
import type { Serializer, WriteContext } from '../declare/serializer.js';
import { internalColumns } from '../declare/model.js';

export type { RecordId };

/** Records read per query by `each`: large enough that round trips are few, small enough to hold. */
const BATCH_SIZE = 200;

export interface RecordStoreOptions {
  /** What one record is called in messages: "post" → "Post not found." */
  readonly name: string;
  /** Body fields the serializer does not know: 400 (as collections answer) or dropped. */
  readonly unknownFields?: 'reject' | 'ignore';
}

export interface GetOptions {
  /**
   * Read the record locked until the transaction it is read in ends (`SELECT … FOR UPDATE` on
   * PostgreSQL; SQLite's write transactions already run one at a time), so that a check of it and
   * a write after it cannot interleave with another's. Only inside a transaction (a hook's
   * `database` in a collection with `hooks.inTransaction`, any after-hook's, or one `inTransaction`
   * opens in a custom action): thrown outside one.
   */
  readonly lock?: boolean;
}

/**
 * Records rendered by the serializer (JSON-ready, in its field order). `where`: conditions in the
 * query language's vocabulary, `{ status: 'active', stock__lt: 5 }` (values of the field's type;
 * `null` alone is `isnull`).
 */
export interface RecordStore {
  /** The record; 404 when there is none. */
  get(id: RecordId, options?: GetOptions): Promise<Row>;
  /** Every record meeting `where` (values, not SQL expressions), ordered by field names (`-name` descending). */
  list(where: Row, ordering: readonly string[]): Promise<Row[]>;
  /**
   * The same records, ties by id, read from the database in batches as the caller iterates (for
   * lists too long to hold: see sendJsonArray). Not one snapshot; ordering fields must not be nullable.
   */
  each(where: Row, ordering: readonly string[]): AsyncIterable<Row>;
  /** Validates `body` as a new record (and by the model's `rules.creates`), stores it with `set` (values the route sets, not the client). */
  create(body: unknown, set?: Row): Promise<Row>;
  /**
   * Loads the record (404), then reads the body (so an unknown id is 404 whatever
   * the body), applies the body's fields over the record, then `set`, and saves it. The model's
   * update rules (`rules.updates`) do not run: they judge a request, which a record store has not.
   */
  update(id: RecordId, readBody: () => unknown, set?: Row): Promise<Row>;
  /** Removes the record (404 when there is none). */
  delete(id: RecordId): Promise<void>;
  /**
   * An atomic update (Django's `filter(...).update(...)`): every record meeting `where` changed by
   * one statement, each of `changes` a plain value (checked as a PATCH body's is where the
   * serializer writes the field; else stored as given, as `update`'s `set`) or computed from
   * the stored row, `F('stock').minus(q)` or `increment(1)`, so that concurrent updates add up;
   * how many records it changed (0: none met `where` as the statement found them, so
   * `{ id, stock__gte: q }` with `stock: increment(-q)` never oversells). Declared constraints hold
   * (400 naming the field); field validators cannot see a computed value (declare a constraint).
   * Refused for a model with update rules, which run per record (update through its collection).
   */
  updateMatching(where: Row, changes: Row): Promise<number>;
}

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

export function recordStore(database: Database, serializer: Serializer, options: RecordStoreOptions): RecordStore {
  const { model, selection } = serializer;
  const known = new Set(serializer.fields.map((name) => serializer.shown(name)));
  const missing = (): ApiError => notFound(`${capitalized(options.name)} not found.`);
  // Anonymous: no user, no permissions.
  const context: WriteContext = { userId: null, hasPermission: async () => false };

  const parse = async (body: unknown, mode: 'create' | 'partial_update'): Promise<Row> => {
    const input =
      isJsonObject(body) && options.unknownFields === 'ignore'
        ? Object.fromEntries(Object.entries(body).filter(([name]) => known.has(name)))
        : body;
    return serializer.parseBody(input, mode, context);
  };

  /** A failed write is a 500 saying only what failed; the cause goes to the log (an outage stays a 503). */
  const writing = async <T>(what: string, write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } catch (error) {
      if (error instanceof RecordRefused) throw validationFailed(error.details);
      if (error instanceof ApiError || database.isUnavailable(error)) throw error;
      throw Object.assign(new ApiError(500, 'server_error', `Could not ${what} the ${options.name}.`), { cause: error });
    }
  };

  const orderingOf = (ordering: readonly string[]): Ordering[] =>
    ordering.map((term) => {
      const field = term.replace(/^-/, '');
      if (!model.fields[field]) throw new Error(`${model.table} has no field "${field}"`);
      return { field, descending: term.startsWith('-') };
    });

  const load = async (id: RecordId, lock = false): Promise<Row> => {
    if (lock && !storeDatabase(database).db.isTransaction) {
      throw new Error(`A locked read of a ${options.name} holds its lock until its transaction ends: read it with a transaction's database (a hook's, with hooks.inTransaction, or inTransaction's).`);
    }
    const row = await findRecord(database, selection, id, { lock });
    if (!row) throw missing();
    return row;
  };

  return {
    get: async (id, { lock = false } = {}) => serializer.render(await load(id, lock)),

    async list(where, ordering) {
      const rows = exactOnly(where)
        ? await listRecords(database, model, selection, where, orderingOf(ordering))
        : await recordsMatching(database, model, selection, filtersOf(model.table, model.fields, where), orderingOf(ordering));
      return rows.map((row) => serializer.render(row));
    },

    async *each(where, ordering) {
      const terms = orderingOf(ordering);
      const nullable = terms.filter(({ field }) => model.fields[field]!.nullable);
      if (nullable.length > 0) throw new Error(`${model.table}: cannot read in batches ordered by nullable ${nullable.map(({ field }) => field).join(', ')}`);
      const filters = filtersOf(model.table, model.fields, where);
      const source = { selection, fields: model.fields, searchFields: [] };
      for await (const rows of recordsInBatches(database, source, { filters, ordering: terms }, BATCH_SIZE)) {
        for (const row of rows) yield serializer.render(row);
      }
    },

    async create(body, set = {}) {
      const values = { ...(await parse(body, 'create')), ...set };
      model.rules?.creates?.(values, null);
      return serializer.render(await writing('save', () => createRecord(database, model, selection, values)));
    },

    async update(id, readBody, set = {}) {
      await load(id);
      const values = { ...(await parse(readBody(), 'partial_update')), ...set };
      // Only the body's fields are written, so a concurrent save of other fields is not undone.
      const row = await writing('save', () => updateRecord(database, model, selection, id, values));
      if (!row) throw missing();
      return serializer.render(row);
    },

    async delete(id) {
      if (!(await writing('delete', () => deleteRecord(database, selection, id)))) throw missing();
    },

    async updateMatching(where, changes) {
      if (model.rules?.updates) throw new Error(`${model.table}: its update rules run per record, which an atomic update cannot; update its records one by one`);
      const internal = internalColumns(model);
      const hidden = [...Object.keys(changes), ...Object.keys(where).map((key) => key.split('__')[0]!)].filter((name) => internal.includes(name));
      if (hidden.length > 0) throw new Error(`${model.table}: ${hidden.join(', ')} are the framework's own`);
      const computed = Object.entries(changes).filter(([, value]) => isComputed(value));
      const plain = Object.fromEntries(Object.entries(changes).filter(([, value]) => !isComputed(value)));
      // Fields the serializer writes are checked as a PATCH body's; the others are the code's own, as `update`'s `set`.
      const checked = Object.keys(plain).filter((name) => serializer.writable.includes(name));
      const parsed = checked.length > 0 ? await serializer.parseBody(Object.fromEntries(checked.map((name) => [serializer.shown(name), plain[name]])), 'partial_update', context) : {};
      const values = { ...plain, ...parsed, ...Object.fromEntries(computed) };
      // Started outside `writing`: a change or condition that could never apply throws as itself, not as a failed save.
      const updated = updateMatching(database, model, filtersOf(model.table, model.fields, where), values);
      return writing('save', () => updated);
    },
  };
}
