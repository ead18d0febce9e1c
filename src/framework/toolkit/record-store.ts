/**
 * A record store: one model's records read and written through its
 * serializer, for routes outside the collection API. Bodies are checked by
 * the serializer; failures are the framework's typed errors (400 naming the
 * field, 404, and 500 when a write fails), so any error renderer can show them.
 */
import { isJsonObject } from '../../core/json.js';
import { storeDatabase, type Database } from '../../store/connection/database.js';
import { recordsInBatches } from '../../store/read/list.js';
import { lockNamed } from '../../store/write/locks.js';
import { recordsMatching } from '../../store/conditions/matching.js';
import { findRecord, listRecords, type RecordId } from '../../store/read/records.js';
import { deleteMatching, insertRow, insertRowIfAbsent, matchingUpdate, savepointed } from '../../store/write/writes.js';
import { createRecords, deleteRecord, inTransaction, updateRecord } from '../write/unit.js';
import { isComputed } from '../../core/expressions.js';
import { ConditionError, parseConditions, type Filter } from '../../core/conditions.js';
import { RecordProtected, RecordRefused } from '../../core/refused.js';
import { ApiError, notFound, toApiError } from '../base/errors.js';
import type { Ordering } from '../../core/list-query.js';
import type { Row } from '../../core/rows.js';
import type { Serializer, WriteContext } from '../declare/serializer.js';
import { internalColumns } from '../declare/model.js';
import { recordFiles } from './record-files.js';

export type { RecordId };

/**
 * Filters that each say a field's one value (or that it is null) as the values a record store's
 * compiled shapes take (store/read/records.ts's listRecords); undefined where any says more.
 */
function exactValues(filters: readonly Filter[]): Row | undefined {
  const values: Row = {};
  for (const { field, lookup, value } of filters) {
    if (Object.hasOwn(values, field) || !(lookup === 'exact' || (lookup === 'isnull' && value === true))) return undefined;
    values[field] = lookup === 'isnull' ? null : value;
  }
  return values;
}

/** Records read per query by `each`: large enough that round trips are few, small enough to hold. */
const BATCH_SIZE = 200;

/**
 * How often getOrCreate looks again for a record that concurrent writes make and delete as it
 * looks. Each look lost means another writer's insert won, so n writers of one record at once may
 * need up to n looks: 10 pins beside 10 unpins at once took more than 5 (test/api/idempotent-writes.test.ts).
 */
const GET_OR_CREATE_ATTEMPTS = 25;

/** `recordStore`'s options. */
export interface RecordStoreOptions {
  /** What one record is called in messages: "post" → "Post not found." */
  readonly name: string;
  /** Body fields the serializer does not know: 400 (as collections answer) or dropped. */
  readonly unknownFields?: 'reject' | 'ignore';
}

/** `recordStore(…).get`'s options. */
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

/** What getOrCreate answers: the record, and whether this call stored it. */
export interface GotOrCreated {
  readonly record: Row;
  readonly created: boolean;
}

/**
 * Records rendered by the serializer (JSON-ready, in its field order). `where`: conditions in the
 * condition language scopes and `where`s take (docs/query-language.md, Conditions),
 * `{ status: 'active', stock__lt: 5, author_id: [1, 2] }` (values of the field's type; an array
 * alone is `in`, `null` alone is `isnull`); one no database could run is an Error at the call.
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
   * The record whose fields have `where`'s values, made from them and `set` when there is none
   * (Django's `get_or_create(defaults=set, **where)`), and whether this call made it. Race-free
   * where a unique constraint covers `where`'s fields: the record is stored by
   * `INSERT … ON CONFLICT DO NOTHING`, and when a concurrent call stored it first, that one is read
   * and answered (`created: false`); a unique clash fails no statement, so a transaction it runs in goes on.
   * `where` names fields, not lookups (its values make the new record). The new record's values
   * are checked as `create`'s body is where the serializer writes the field (the values looked up
   * by are the checked ones), else stored as given (as `create`'s `set`), and by the model's
   * `rules.creates`. A clash on another unique field (no record meets `where`) is the 400 `create` answers.
   * Without a covering unique constraint two concurrent calls may both create.
   */
  getOrCreate(where: Row, set?: Row): Promise<GotOrCreated>;
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
  /**
   * Every record meeting `where` deleted by one `DELETE … WHERE` (Django's `filter(...).delete()`),
   * `where` as `updateMatching`'s and at least one condition; how many it deleted (0: none met it,
   * so deleting what another request deleted first is no error). Rows referring to them go as their
   * foreign keys say (cascade, set null); a restricting key refuses them all (400, code `protected`).
   */
  deleteMatching(where: Row): Promise<number>;
}

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** Refuses `database` outside a transaction for `what`, a lock held until the transaction ends. */
function inTransactionOnly(database: Database, what: string): void {
  if (!storeDatabase(database).db.isTransaction) {
    throw new Error(`${what} holds its lock until its transaction ends: take it with a transaction's database (a hook's, with hooks.inTransaction, or inTransaction's).`);
  }
}

/**
 * Takes the lock named `key` until `transaction` ends, waiting while another transaction holds it
 * (PostgreSQL's `pg_advisory_xact_lock` on a 64-bit hash of the key; SQLite's write transactions
 * already run one at a time). For a check for absence and the write after it, where no row exists
 * yet to lock: two requests choosing a free slug both lock the slug's name first, so the second
 * sees what the first stored. Transaction-scoped, so safe behind a transaction pooler (PgBouncer);
 * thrown outside a transaction, as a locked read is.
 */
export async function lockFor(transaction: Database, key: string): Promise<void> {
  inTransactionOnly(transaction, `The lock on "${key}"`);
  await lockNamed(transaction, key);
}

/**
 * The app's own reads and writes of a serializer's records, outside a request (hooks, actions, routes): the
 * serializer's validation, the model's rules, the app's rights (docs/guides/consistency.md).
 */
export function recordStore(database: Database, serializer: Serializer, options: RecordStoreOptions): RecordStore {
  const { model, selection } = serializer;
  const known = new Set(serializer.fields.map((name) => serializer.shown(name)));
  const missing = (): ApiError => notFound(`${capitalized(options.name)} not found.`);
  // Anonymous: no user, no permissions.
  const context: WriteContext = { userId: null, hasPermission: async () => false };
  const files = recordFiles(database, serializer);
  const render = (row: Row): Row => files.linked(serializer.render(row) as Row, row);

  const parse = async (body: unknown, mode: 'create' | 'partial_update'): Promise<Row> => {
    const input =
      isJsonObject(body) && options.unknownFields === 'ignore'
        ? Object.fromEntries(Object.entries(body).filter(([name]) => known.has(name)))
        : body;
    return serializer.parseBody(input, mode, context);
  };

  /** A failed write is a 500 saying only what failed; the cause goes to the log (an outage stays a 503). */
  const failure = (what: string, error: unknown): unknown => {
    // A refusal for what the record says, or for what still refers to it: a 400, as its collection answers.
    if (error instanceof RecordRefused || error instanceof RecordProtected) return toApiError(error, database.isUnavailable);
    if (error instanceof ApiError || database.isUnavailable(error)) return error;
    return Object.assign(new ApiError(500, 'server_error', `Could not ${what} the ${options.name}.`), { cause: error });
  };
  const writing = async <T>(what: string, write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } catch (error) {
      throw failure(what, error);
    }
  };

  /** Refuses conditions or changes naming the framework's own columns (ModelRules.internal). */
  const assertOwnFields = (names: readonly string[]): void => {
    const internal = internalColumns(model);
    const hidden = names.map((key) => key.split('__')[0]!).filter((name) => internal.includes(name));
    if (hidden.length > 0) throw new Error(`${model.table}: ${hidden.join(', ')} are the framework's own`);
  };

  /** `values` with those of fields the serializer writes checked as a body's in `mode` (400 naming the field); the others as given. */
  const checked = async (values: Row, mode: 'create' | 'partial_update'): Promise<Row> => {
    const written = Object.keys(values).filter((name) => serializer.writable.includes(name));
    if (written.length === 0) return values;
    return { ...values, ...(await serializer.parseBody(Object.fromEntries(written.map((name) => [serializer.shown(name), values[name]])), mode, context)) };
  };

  /** `where` in the condition language (core/conditions.ts) as filters; one it cannot run is thrown here, at the call, naming the table and the key. */
  const filtersOf = (where: Row): Filter[] => {
    try {
      return parseConditions({ fields: model.fields }, where, 'code');
    } catch (error) {
      if (error instanceof ConditionError) throw new Error(`${model.table}: ${error.message}`);
      throw error;
    }
  };

  const orderingOf = (ordering: readonly string[]): Ordering[] =>
    ordering.map((term) => {
      const field = term.replace(/^-/, '');
      if (!model.fields[field]) throw new Error(`${model.table} has no field "${field}"`);
      return { field, descending: term.startsWith('-') };
    });

  const load = async (id: RecordId, lock = false): Promise<Row> => {
    if (lock) inTransactionOnly(database, `A locked read of a ${options.name}`);
    const row = await findRecord(database, selection, id, { lock });
    if (!row) throw missing();
    return row;
  };

  return {
    get: async (id, { lock = false } = {}) => render(await load(id, lock)),

    async list(where, ordering) {
      const filters = filtersOf(where);
      const values = exactValues(filters);
      const rows = values
        ? await listRecords(database, model, selection, values, orderingOf(ordering))
        : await recordsMatching(database, model, selection, filters, orderingOf(ordering));
      return rows.map((row) => render(row));
    },

    async *each(where, ordering) {
      const terms = orderingOf(ordering);
      const nullable = terms.filter(({ field }) => model.fields[field]!.nullable);
      if (nullable.length > 0) throw new Error(`${model.table}: cannot read in batches ordered by nullable ${nullable.map(({ field }) => field).join(', ')}`);
      const filters = filtersOf(where);
      const source = { selection, fields: model.fields, searchFields: [] };
      for await (const rows of recordsInBatches(database, source, { filters, ordering: terms }, BATCH_SIZE)) {
        for (const row of rows) yield render(row);
      }
    },

    create: (body, set = {}) =>
      files.storing(body, async (withFiles) => {
        const values = { ...(await parse(withFiles, 'create')), ...set };
        model.rules?.creates?.(values, null);
        const [row] = await writing('save', () => createRecords(database, { serializer, selection, context, records: [values] }));
        return render(row!);
      }),

    async getOrCreate(where, set = {}) {
      const named = Object.keys(where).filter((name) => !model.fields[name] || Array.isArray(where[name]));
      if (named.length > 0) throw new Error(`${model.table}: getOrCreate looks up by fields' values, which make the new record, not by ${named.join(', ')} (a lookup, or a list)`);
      const values = await checked({ ...where, ...set }, 'create');
      // By the values as checked, which are the ones stored.
      const match = Object.fromEntries(Object.keys(where).map((name) => [name, values[name]]));
      const found = async () => (await listRecords(database, model, selection, match, [{ field: 'id', descending: false }]))[0];
      const existing = await found();
      if (existing) return { record: render(existing), created: false };
      model.rules?.creates?.(values, null);
      for (let attempt = 1; ; attempt += 1) {
        const row = await writing('save', () => insertRowIfAbsent(database, model, selection, values));
        if (row) return { record: render(row), created: true };
        const stored = await found();
        if (stored) return { record: render(stored), created: false };
        // Taken by a record that is gone already (deleted meanwhile), or another unique field's values
        // are: the plain create tells which, behind a savepoint so that its refusal fails no transaction.
        try {
          return { record: render(await savepointed(database, () => insertRow(database, model, selection, values))), created: true };
        } catch (error) {
          // `where`'s own fields clash again: a record made and deleted meanwhile, once more; looked for again.
          const again = error instanceof RecordRefused && error.clashing !== undefined && error.clashing.length > 0 && error.clashing.every((name) => name in where);
          if (!again || attempt === GET_OR_CREATE_ATTEMPTS) throw failure('save', error);
        }
      }
    },

    async update(id, readBody, set = {}) {
      await load(id);
      return files.storing(readBody(), async (body) => {
        const values = { ...(await parse(body, 'partial_update')), ...set };
        // Only the body's fields are written, so a concurrent save of other fields is not undone.
        if (!files.any) {
          const row = await writing('save', () => updateRecord(database, { serializer, selection, context, id, values }));
          if (!row) throw missing();
          return render(row);
        }
        // With files, the row written over is read locked in the write's transaction: of concurrent replaces, each removes the object the one before it stored.
        const written = await writing('save', () =>
          inTransaction(database, async (transaction) => {
            const old = await findRecord(transaction, selection, id, { lock: true });
            const row = old && (await updateRecord(transaction, { serializer, selection, context, id, values }));
            return old && row && { old, row };
          }),
        );
        if (!written) throw missing();
        await files.replaced(written.old, written.row);
        return render(written.row);
      });
    },

    async delete(id) {
      // The objects the record names go with it: read first where it has files.
      const old = files.any ? await load(id) : undefined;
      if (!(await writing('delete', () => deleteRecord(database, { model, selection, id })))) throw missing();
      if (old) await files.replaced(old, undefined);
    },

    async updateMatching(where, changes) {
      if (model.rules?.updates) throw new Error(`${model.table}: its update rules run per record, which an atomic update cannot; update its records one by one`);
      assertOwnFields([...Object.keys(changes), ...Object.keys(where)]);
      const computed = Object.entries(changes).filter(([, value]) => isComputed(value));
      // Fields the serializer writes are checked as a PATCH body's; the others are the code's own, as `update`'s `set`.
      const plain = await checked(Object.fromEntries(Object.entries(changes).filter(([, value]) => !isComputed(value))), 'partial_update');
      const values = { ...plain, ...Object.fromEntries(computed) };
      // Made outside `writing`: a change or condition that could never apply throws as itself, not as a failed save.
      const update = matchingUpdate(database, model, filtersOf(where), values);
      // Kept within the fields' ranges, it is checked and written in one transaction: the write unit's, or the one it joins.
      return writing('save', () => (update.checksRanges ? inTransaction(database, update.run) : update.run(database)));
    },

    async deleteMatching(where) {
      if (Object.keys(where).length === 0) throw new Error(`${model.table}: deleteMatching deletes what its conditions select: name at least one`);
      assertOwnFields(Object.keys(where));
      const source = { selection, fields: model.fields, searchFields: [] };
      // Built outside `writing`: a condition that could never apply throws as itself.
      const filters = filtersOf(where);
      return writing('delete', async () => (await deleteMatching(database, source, { filters, search: [] })).length);
    },
  };
}
