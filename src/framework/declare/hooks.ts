/**
 * A collection's lifecycle hooks (DRF's `perform_create`, `perform_update`, `perform_destroy`),
 * as an app declares them; the write unit (framework/write/unit.ts) runs them in their order.
 * Before-hooks run before the write, and may refuse it (throw an ApiError) or set server-side
 * values (return them), reading the database to choose them (a slug not yet taken); after-hooks
 * run in the write's transaction, so a throw rolls it back;
 * `afterCommit` runs once it is committed, for side effects that must not roll back.
 */
import type { MaybePromise } from '../../core/maybe-promise.js';
import type { Row } from '../../core/rows.js';
import type { Database } from '../../store/connection/database.js';
import type { RequestContext } from './scope.js';
import type { Credentials } from './credentials.js';

/** What every hook sees of its request. */
export interface HookContext extends RequestContext {
  /** Checks a password and issues credentials (written through `database` when the event has one). */
  readonly credentials: Credentials;
}

/**
 * The database the write runs in, for `recordStore(database, …)`: its transaction when it has one
 * (after-hooks or a scope open it, before the before-hook; a delete that reads its record first
 * reads it in one), so the hook's reads and the write agree; otherwise the database itself (no
 * transaction is opened for a hook alone: a hook that reads nothing costs no statement).
 */
interface WithDatabase {
  readonly database: Database;
}
/** What the create hooks get: the validated values, and the database. */
export interface CreateEvent extends HookContext, WithDatabase {
  /** The validated values about to be stored. */
  readonly values: Row;
}
/** What the update hooks get: the values, the stored record (`existing`), and the database. */
export interface UpdateEvent extends CreateEvent {
  /** The record as stored before this update. */
  readonly existing: Row;
}
/** What the delete hooks get: the record being deleted, and the database. */
export interface DeleteEvent extends HookContext, WithDatabase {
  readonly existing: Row;
}
/** After a write: the record as stored now, and the write's transaction (`database`, to write more in it). */
export interface Written extends WithDatabase {
  readonly record: Row;
}
/** What `afterCommit` gets: the action and the record written. */
export interface CommitEvent extends HookContext {
  readonly action: 'create' | 'update' | 'delete';
  /** The record as stored (for a delete, as it was). */
  readonly record: Row;
}

/**
 * A collection's lifecycle hooks: before (may refuse or add values) and after each write (in its
 * transaction), and after commit (docs/guides/consistency.md).
 */
export interface Hooks {
  /**
   * Run the before-hooks in the write's transaction, so that what they write (an atomic update
   * through `recordStore(event.database, …)`) commits or rolls back with the record, and what they
   * read locked (`get(id, { lock: true })`) stays locked until then. Without it a before-create or
   * before-update hook gets a transaction only where after-hooks or a scope open one.
   */
  readonly inTransaction?: boolean;
  /** Returns values to store beside the validated ones (an owner, a derived column), or nothing. */
  beforeCreate?(event: CreateEvent): MaybePromise<Row | void>;
  beforeUpdate?(event: UpdateEvent): MaybePromise<Row | void>;
  beforeDelete?(event: DeleteEvent): MaybePromise<void>;
  afterCreate?(event: CreateEvent & Written): MaybePromise<void>;
  afterUpdate?(event: UpdateEvent & Written): MaybePromise<void>;
  afterDelete?(event: DeleteEvent & HookContext & Omit<Written, 'record'>): MaybePromise<void>;
  afterCommit?(event: CommitEvent): MaybePromise<void>;
}
