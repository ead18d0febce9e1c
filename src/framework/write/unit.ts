/**
 * The write unit: the one place a write's transaction is opened and its steps run, in order, for
 * the built-in create (one record or several), update and delete, and for the app's own writes
 * (recordStore's, a custom action's, a hook's, which join the transaction they are given):
 *
 *   1. the transaction: opened where a step needs one (the history, after-hooks, a scope re-read,
 *      `hooks.inTransaction`, several INSERTs, many-to-many links, a locked read); joined where the
 *      database given is in one already; none otherwise (one statement commits itself). It begins
 *      at its first statement: one that only before-hooks ran in, and they sent nothing, is left,
 *      and the write's statement commits itself;
 *   2. hooks before (an update's first, as its values choose the way it goes), then the model's checks;
 *   3. lock: the record read FOR UPDATE, within the scope (a delete that must see its record, an
 *      update on the locked way), then checks on it (object permissions, If-Match, validation again
 *      where it changed since it was read), then the delete's before-hook, the model's `beforeStore`;
 *   4. the statement (store/write/writes.ts: INSERT, UPDATE, UPDATE if the version is as seen,
 *      DELETE; a bulk create's records in INSERTs of many rows), then the many-to-many links, and
 *      the record read again to show them;
 *   5. the scope re-read: the written records read within the scope, refused (403) outside it
 *      (a create's told on its values before it is stored, where its conditions can be: meetsInMemory);
 *   6. the history (history.ts: who added, changed or deleted which record), then hooks after,
 *      in the transaction;
 *   7. commit, then the writes' changes told (store/changes/changes.ts);
 *   8. afterCommit.
 *
 * An update whose record has a version (PostgreSQL's xmin) and writes nothing alongside is one
 * conditional UPDATE on the version the request saw, with no transaction where nothing else needs
 * one; on a miss (the record moved on) it goes the locked way. Validation, and so password hashing, happen before, outside.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ListSource, RecordScope } from '../../core/list-query.js';
import { isPending, type MaybePromise } from '../../core/maybe-promise.js';
import type { Table } from '../../core/model.js';
import { RecordRefused } from '../../core/refused.js';
import { recordKeyOf, type Row, type Selection } from '../../core/rows.js';
import { storeDatabase, transaction, transactionBegun, type Database } from '../../store/connection/database.js';
import { heldChanges } from '../../store/changes/changes.js';
import { unscoped } from '../../store/conditions/table-scopes.js';
import { meetsInMemory } from '../../core/conditions.js';
import { readList } from '../../store/read/list.js';
import { findRecord, versionOf, type RecordId } from '../../store/read/records.js';
import { deleteRow, insertRow, insertRows, lockRecord, updateRow, updateRowIfVersion } from '../../store/write/writes.js';
import { readIn, type AuthUser } from '../base/auth-user.js';
import { ApiError, permissionDenied, validationFailed, type ErrorDetails } from '../base/errors.js';
import type { CommitEvent, HookContext, Hooks } from '../declare/hooks.js';
import type { UpdateRules } from '../declare/model.js';
import type { Serializer, WriteContext } from '../declare/serializer.js';
import { fromTable, type RequestCredentials } from '../toolkit/credential-store.js';
import { ownValues, setsRelation, writeLinks } from './links.js';
import { changedFields, logsWrites, logWrites, type LoggedWriter } from './change-log.js';

/** A database as a request hands it to the app's code: whose permissions its transactions read, if asked in them (the copies made of it keep it). */
type Asking = Database & { readonly asker?: () => AuthUser | null };

/**
 * `database`, in whose transactions the permissions of the request's user (`asker`, known once the
 * request is authenticated) are read through the transaction when first asked there (`readIn`), not
 * through a connection of their own that, on SQLite, would wait for the one the transaction holds.
 */
export const askedIn = (database: Database, asker: () => AuthUser | null): Database => ({ ...database, asker }) as Asking;

/**
 * `work` in a transaction: the one already open on `database`, else a new one, committed when
 * `work` resolves, and its writes' changes told then. The one place a transaction is opened.
 */
export function inTransaction<T>(database: Database, work: (transaction: Database) => Promise<T>): Promise<T> {
  if (storeDatabase(database).db.isTransaction) return work(database);
  const user = (database as Asking).asker?.();
  return opened(database, user ? (transaction) => readIn(user, transaction, () => work(transaction)) : work);
}

function opened<T>(database: Database, work: (transaction: Database) => Promise<T>): Promise<T> {
  const held = heldChanges(database);
  if (!held) return transaction(database, work);
  return transaction(database, (opened) => work(held.within(opened))).then((result) => {
    held.tell();
    return result;
  });
}

/** A check of the record about to be written, in the database the write runs in: it throws to refuse. */
export type WriteCheck = (row: Row, database: Database) => MaybePromise<void>;

/** Who a request's write is for, as its hooks and the model's rules see them (an action's request is one). */
export interface Writer {
  readonly user: AuthUser | null;
  readonly parameters: ReadonlyMap<string, string>;
  readonly version?: string;
  readonly credentials: RequestCredentials;
  /** The body as sent, where the model's update rules read their inputs. */
  readonly body?: unknown;
  readonly request: { readonly log: FastifyBaseLogger };
  /** Named in the log when its afterCommit hook fails, and in the history (history.ts). */
  readonly collection: LoggedWriter['collection'];
}

/** What a request's write carries beside its values: who makes it, its collection's hooks, and its scope. */
export interface Requested {
  readonly writer: Writer;
  readonly hooks: Hooks;
  /** The request's scope, and the list its written records are read again from (as the action reads them). */
  readonly within?: { readonly scope: RecordScope; readonly source: ListSource };
}

/** The records a write is of: read back as `selection` reads them; `context` checks the keys its values set. */
interface Target {
  readonly serializer: Serializer;
  readonly selection: Selection;
  readonly context: WriteContext;
}

export interface CreateWrite extends Target {
  /** Each record's validated values. */
  readonly records: readonly Row[];
  /** A bulk create: one transaction, each refusal under its record's index. */
  readonly many?: boolean;
  /** A request's create; absent for the app's own, which runs no hooks. */
  readonly request?: Requested;
}

export interface UpdateWrite extends Target {
  readonly id: RecordId;
  /** The validated values. */
  readonly values: Row;
  /** A request's update; absent for the app's own, which is one UPDATE, with no hooks, rules or checks. */
  readonly request?: UpdateRequest;
}

export interface UpdateRequest extends Requested {
  /** The record as the request read it (within the scope, its object permissions checked). */
  readonly existing: Row;
  /** What is checked of the record as locked. */
  readonly check: WriteCheck;
  /** What is left to check of `existing` (If-Match), before the conditional UPDATE made on its version. */
  checkSeen(row: Row): void;
}

export interface DeleteWrite {
  readonly model: Table;
  readonly selection: Selection;
  readonly id: RecordId;
  readonly request?: DeleteRequest;
}

export interface DeleteRequest extends Requested {
  /** Given when the delete must see its record (to check it, or to show it to a hook): then locked and checked first. */
  readonly check?: WriteCheck;
  /**
   * The records `check` passes, said as conditions: then the DELETE carries them, and the record
   * is locked and checked only when it deletes nothing (to refuse it, or find it gone).
   */
  readonly passing?: RecordScope;
}

/** The conditions of both scopes (either, where one is absent). */
const bothScopes = (one: RecordScope | undefined, other: RecordScope | undefined): RecordScope | undefined =>
  one && other ? { ...one, conditions: [...one.conditions, ...other.conditions] } : (one ?? other);

/** The validated values with what a before-hook returned set over them (at once, without a promise, when there is no hook). */
function prepared(values: Row, before: MaybePromise<Row | void> | undefined): MaybePromise<Row> {
  if (before === undefined) return values;
  return Promise.resolve(before).then((set) => (set ? { ...values, ...set } : values));
}

/**
 * A hook's context and `database`: the write's, as the app's own code sees it (every row, as
 * `recordStore` reads them), which its credentials read and write through; the framework's own
 * statements keep to what the request may see.
 */
function hookEvent({ user, parameters, version, credentials }: Writer, database: Database): HookContext & { readonly database: Database } {
  const own = unscoped(database);
  return { user, parameters, version, credentials: credentials.in(own), database: own };
}

/** The after-commit hook, once per record: the write stands whatever it does, so its failure is logged, not answered. */
async function committed({ writer }: Requested, afterCommit: NonNullable<Hooks['afterCommit']>, kind: CommitEvent['action'], records: readonly Row[]): Promise<void> {
  const { user, parameters, version, credentials } = writer;
  for (const record of records) {
    try {
      await afterCommit({ user, parameters, version, credentials, action: kind, record });
    } catch (error) {
      writer.request.log.error({ err: error }, `afterCommit hook of ${writer.collection.name} failed`);
    }
  }
}

const CREATED_OUTSIDE = 'You may not create a record outside the ones you may see.';
const MOVED_OUT = 'You may not change a record so that it lies outside the ones you may see.';

/**
 * The written records read again through the scope, in the write's transaction (row-level
 * security's WITH CHECK): a record the request could not see is refused, and nothing is stored.
 */
async function inScope(database: Database, { scope, source }: NonNullable<Requested['within']>, rows: readonly Row[], refused: string): Promise<Row[]> {
  const ids = { field: 'id', lookup: 'in', value: rows.map((row) => row.id) } as const;
  const query = { page: 1, pageSize: rows.length, search: [], ordering: [], filters: [ids], scope: scope.conditions };
  const { rows: again } = await readList(database, { source, query, paging: { by: 'number' }, count: 'none', estimateThreshold: 0 });
  if (again.length < rows.length) throw permissionDenied(refused);
  return again;
}

/**
 * `statement` of the record's own values (slugs resolved to their keys first), then, for each
 * many-to-many the values set, its links replaced, in one transaction; the record read again after,
 * so it shows its new links.
 */
async function linked<T extends Row | undefined>(
  database: Database,
  { serializer, selection, context }: Target,
  values: Row,
  statement: (database: Database, own: Row) => Promise<T>,
): Promise<T> {
  const { own, links } = await ownValues(database, serializer, values, context);
  if (links.length === 0) return statement(database, own);
  return inTransaction(database, async (transaction) => {
    const row = await statement(transaction, own);
    if (!row) return row;
    await writeLinks(transaction, database, links, row.id as RecordId);
    // Found as `selection` finds records: by the collection's record key, which need not be the id.
    return ((await findRecord(transaction, selection, row[recordKeyOf(selection)] as RecordId)) ?? row) as T;
  });
}

/** `statement` of the values, through `linked` where they set a many-to-many or a slug; not async otherwise (no frame on a plain write). */
function withLinks<T extends Row | undefined>(database: Database, write: Target, values: Row, statement: (database: Database, own: Row) => Promise<T>): Promise<T> {
  return setsRelation(write.serializer, values) ? linked(database, write, values, statement) : statement(database, values);
}

/** Whether the write is a request's that the database logs (history.ts). */
const logged = (database: Database, request: Requested | undefined): request is Requested => request !== undefined && logsWrites(database);

/** Each record's errors under `<index>.<field>`. */
export function atIndex(index: number, details: ErrorDetails | undefined): ErrorDetails {
  return Object.fromEntries(Object.entries(details ?? {}).map(([field, messages]) => [`${index}.${field}`, messages]));
}

/**
 * Whether records holding each of `records`' values meet the scope, told without the database
 * (meetsInMemory); undefined where a condition cannot be told so, or a before-hook may change them.
 */
function meetsScope({ scope }: NonNullable<Requested['within']>, records: readonly Row[], hooks: Hooks): boolean | undefined {
  if (hooks.beforeCreate) return undefined;
  let meets = true;
  for (const condition of scope.conditions) {
    if (!('lookup' in condition) || scope.across?.[condition.field]) return undefined;
    for (const values of records) {
      const met = meetsInMemory(condition, values);
      if (met === undefined) return undefined;
      meets &&= met;
    }
  }
  return meets;
}

/**
 * `before` in a transaction, then `rest` with what it gave: in that transaction where `before` sent
 * a statement in it; else after it, as `rest` runs with no transaction, since one that sent
 * nothing began nothing (store/connection/deferred-begin.ts). For writes whose only steps in the
 * transaction come before their statement (`hooks.inTransaction` and before-hooks alone).
 */
async function beforeInTransaction<T, R>(database: Database, before: (transaction: Database) => Promise<T>, rest: (database: Database, given: T) => Promise<R>): Promise<R> {
  const outcome = await inTransaction(database, async (transaction): Promise<{ done: R } | { given: T }> => {
    const given = await before(transaction);
    return (await transactionBegun(transaction)) ? { done: await rest(transaction, given) } : { given };
  });
  return 'done' in outcome ? outcome.done : rest(database, outcome.given);
}

/** New records, all or none; each refusal of a bulk create carries the refused record's index. */
export async function createRecords(database: Database, write: CreateWrite): Promise<Row[]> {
  const { request, many = false } = write;
  const hooks = request?.hooks;
  // A scope told on the values refuses before anything is stored; one that is not is read again after, in the write's transaction.
  const judged = request?.within && meetsScope(request.within, write.records, request.hooks);
  if (judged === false) throw permissionDenied(CREATED_OUTSIDE);
  const rereads = request?.within !== undefined && judged === undefined;
  const store = (database: Database, values: readonly Row[]) => stored(database, write, values, rereads);
  const rows =
    rereads || hooks?.afterCreate !== undefined || logged(database, request)
      ? await inTransaction(database, async (transaction) => store(transaction, await creating(transaction, write)))
      : // A bulk create's before-hooks run in its transaction, as they did when it always had one.
        hooks?.inTransaction || (many && hooks?.beforeCreate)
        ? await beforeInTransaction(database, (transaction) => creating(transaction, write), store)
        : await store(database, await creating(database, write));
  if (hooks?.afterCommit) await committed(request!, hooks.afterCommit, 'create', rows);
  return rows;
}

/** Each record's values, with what the before-create hook set over them. */
async function creating(database: Database, { request, records, many }: CreateWrite): Promise<readonly Row[]> {
  const beforeCreate = request?.hooks.beforeCreate;
  if (!beforeCreate) return records;
  const values: Row[] = [];
  for (let index = 0; index < records.length; index++) {
    const row = records[index]!;
    try {
      const set = prepared(row, beforeCreate({ ...hookEvent(request!.writer, database), values: row }));
      values.push(isPending(set) ? await set : set);
    } catch (error) {
      if (!many || !(error instanceof ApiError) || !error.details) throw error;
      throw validationFailed(atIndex(index, error.details));
    }
  }
  return values;
}

/** Each of `values` inserted, with its links, one at a time; a refusal of a bulk create's carries its record's index. */
async function oneByOne(database: Database, write: CreateWrite, values: readonly Row[]): Promise<Row[]> {
  const { many, serializer, selection } = write;
  const inserted: Row[] = [];
  for (let index = 0; index < values.length; index++) {
    const own = values[index]!;
    try {
      inserted.push(
        await withLinks(database, write, own, (database, own) => insertRow(database, serializer.model, selection, own)),
      );
    } catch (error) {
      throw many && error instanceof RecordRefused ? new RecordRefused(error.details, index, error.clashing) : error;
    }
  }
  return inserted;
}

/**
 * A bulk create's records: in INSERTs of many rows (insertRows), with no transaction where they take
 * one, where the database given is in none and no record sets a many-to-many; else one at a time,
 * in one transaction. A refusal of an INSERT of many names no record: then they are inserted again
 * one at a time, in a transaction, which names the record refused by its index (or stores them all,
 * where what refused them is gone meanwhile).
 */
async function manyInserted(database: Database, write: CreateWrite, values: readonly Row[]): Promise<Row[]> {
  const { serializer, selection } = write;
  const oneAtATime = (database: Database) => oneByOne(database, write, values);
  if (storeDatabase(database).db.isTransaction || values.some((own) => setsRelation(serializer, own))) return inTransaction(database, oneAtATime);
  try {
    return await insertRows(database, serializer.model, selection, values, (work) => inTransaction(database, work));
  } catch (error) {
    if (error instanceof RecordRefused || database.isUnavailable(error)) throw error;
    return inTransaction(database, oneAtATime);
  }
}

/** The records inserted, read again within the scope where `rereads`, logged, and shown to the after-create hook. */
async function stored(database: Database, write: CreateWrite, values: readonly Row[], rereads: boolean): Promise<Row[]> {
  const { request, many, serializer, selection } = write;
  const inserted = many && values.length > 1 ? await manyInserted(database, write, values) : await oneByOne(database, write, values);
  const rows = rereads ? await inScope(database, request!.within!, inserted, CREATED_OUTSIDE) : inserted;
  fromTable(serializer.model, ...rows);
  if (logged(database, request)) await logWrites(database, request.writer, 'add', rows.map((row, index) => ({ key: row[recordKeyOf(selection)], changed: Object.keys(values[index]!) })));
  const afterCreate = request?.hooks.afterCreate;
  if (afterCreate) for (const [index, record] of rows.entries()) await afterCreate({ ...hookEvent(request.writer, database), values: values[index]!, record });
  return rows;
}

/**
 * The record changed to the values; undefined when there is none (or it is outside the scope). Two
 * writers that checked the same version of the record cannot both succeed (see the steps above).
 */
export async function updateRecord(database: Database, write: UpdateWrite): Promise<Row | undefined> {
  const { request, serializer, selection, id, values } = write;
  if (!request) {
    return withLinks(database, write, values, (database, own) => updateRow(database, serializer.model, selection, id, own));
  }
  const { hooks, within } = request;
  // Whether the update may move the record out of the scope (a before-hook may set any field): then it is read again within it before it commits.
  const checksScope = within !== undefined && (hooks.beforeUpdate !== undefined || mayLeave(within.scope, values));
  const store = (database: Database, given: Updating) => storedUpdate(database, write, request, given, checksScope);
  const row =
    hooks.afterUpdate !== undefined || checksScope || logged(database, request)
      ? await inTransaction(database, async (transaction) => store(transaction, await updating(transaction, write, request)))
      : hooks.inTransaction === true
        ? await beforeInTransaction(database, (transaction) => updating(transaction, write, request), store)
        : await store(database, await updating(database, write, request));
  if (row && hooks.afterCommit) await committed(request, hooks.afterCommit, 'update', [row]);
  return row;
}

/** Whether the model's rules write alongside this update (beforeStore, for the fields it is called on). */
const storesBefore = (rules: UpdateRules, values: Row): boolean => !rules.beforeStoreOn || rules.beforeStoreOn.some((field) => field in values);

/** An update's values as the before-hook set them, checked by the model's rules, and what those write alongside. */
interface Updating {
  readonly values: Row;
  readonly alongside: WriteCheck | undefined;
}

async function updating(database: Database, write: UpdateWrite, request: UpdateRequest): Promise<Updating> {
  const { hooks, writer, existing } = request;
  const set = prepared(write.values, hooks.beforeUpdate?.({ ...hookEvent(writer, database), values: write.values, existing }));
  const values = isPending(set) ? await set : set;
  const rules = write.serializer.model.rules?.updates;
  if (!rules) return { values, alongside: undefined };
  // The model's rules get the record's id, whatever the path named it by.
  const update = { id: existing.id as RecordId, values, body: writer.body as Row, user: writer.user, database: unscoped(database), countPasswordCheck: writer.credentials.countOwnCheck };
  const checked = rules.check(update);
  if (isPending(checked)) await checked;
  const alongside: WriteCheck | undefined = storesBefore(rules, values) ? (row, database) => rules.beforeStore({ ...update, database: unscoped(database) }, row) : undefined;
  return { values, alongside };
}

/** The record written (within the scope where `checksScope`), logged, and shown to the after-update hook. */
async function storedUpdate(database: Database, write: UpdateWrite, request: UpdateRequest, { values, alongside }: Updating, checksScope: boolean): Promise<Row | undefined> {
  const { hooks, writer, existing, within } = request;
  const written = await withLinks(database, write, values, (database, own) => guarded(database, write, request, own, alongside));
  const row = written && checksScope && mayLeave(within!.scope, values) ? (await inScope(database, within!, [written], MOVED_OUT))[0] : written;
  if (!row) return undefined;
  fromTable(write.serializer.model, row);
  if (logged(database, request)) await logWrites(database, writer, 'change', [{ key: write.id, changed: changedFields(values, existing, row) }]);
  if (hooks.afterUpdate) await hooks.afterUpdate({ ...hookEvent(writer, database), values, existing, record: row });
  return row;
}

/**
 * The UPDATE of a request: conditional on the version of the record it saw, once what is left to
 * check of it is, where the record has a version and nothing is written alongside; else, or when
 * that matches nothing (written or deleted meanwhile), the locked way. Not async: the conditional
 * way, every PATCH's on PostgreSQL, chains the driver's promise with no frame around it.
 */
function guarded(database: Database, write: UpdateWrite, request: UpdateRequest, values: Row, alongside: WriteCheck | undefined): Promise<Row | undefined> {
  const { existing } = request;
  const version = alongside || Object.keys(values).length === 0 ? undefined : versionOf(existing);
  if (version === undefined) return locked(database, write, request, values, alongside);
  request.checkSeen(existing);
  return updateRowIfVersion(database, write.serializer.model, write.selection, write.id, values, existing, version).then(
    (row) => row ?? locked(database, write, request, values, undefined),
  );
}

/** In one transaction: the record read and locked (within the scope), checked, the writes alongside made, and the record written. */
function locked(database: Database, { serializer, selection, id }: UpdateWrite, request: UpdateRequest, values: Row, alongside: WriteCheck | undefined): Promise<Row | undefined> {
  return inTransaction(database, async (transaction) => {
    const row = await lockRecord(transaction, selection, id, request.within?.scope);
    if (!row) return undefined;
    await request.check(row, transaction);
    if (alongside) await alongside(row, transaction);
    return updateRow(transaction, serializer.model, selection, id, values, row);
  });
}

/**
 * Whether writing `values` may take a record out of `scope`: a condition on a field they set or
 * across a relation, or one only the database can judge (a store condition).
 */
const mayLeave = (scope: RecordScope, values: Row): boolean =>
  scope.conditions.some((condition) =>
    'reference' in condition ? condition.reference.column in values : 'storeCondition' in condition || condition.field in values || scope.across?.[condition.field] !== undefined,
  );

/**
 * Whether the record existed (and is now gone). One DELETE, within the request's scope and carrying
 * its check where that is said as conditions; where the request must see the record (a check, a
 * hook) or is logged, the record is locked first (within the scope), checked and shown to the
 * before-hook, then deleted, and the after-hook run; these and the history in one transaction.
 */
export async function deleteRecord(database: Database, { model, selection, id, request }: DeleteWrite): Promise<boolean> {
  if (!request) return deleteRow(database, selection, id);
  const { check, passing, hooks, writer, within } = request;
  if (!logsWrites(database) && (!check || passing)) {
    const deleted = await deleteRow(database, selection, id, bothScopes(within?.scope, passing));
    // Nothing deleted: gone, outside the scope, or refused by the check, which only the locked way tells apart.
    if (deleted || !check) return deleted;
  }
  let existing: Row | undefined;
  const deleted = await inTransaction(database, async (transaction) => {
    const row = check || within ? await lockRecord(transaction, selection, id, within?.scope) : {};
    if (!row) return false;
    if (check) {
      await check(row, transaction);
      existing = row;
      fromTable(model, row);
      await hooks.beforeDelete?.({ ...hookEvent(writer, transaction), existing: row });
    }
    const gone = await deleteRow(transaction, selection, id);
    if (gone && logged(database, request)) await logWrites(transaction, writer, 'delete', [{ key: id, changed: [] }]);
    if (gone && existing && hooks.afterDelete) await hooks.afterDelete({ ...hookEvent(writer, transaction), existing });
    return gone;
  });
  if (deleted && existing && hooks.afterCommit) await committed(request, hooks.afterCommit, 'delete', [existing]);
  return deleted;
}
