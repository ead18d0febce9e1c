/**
 * What a database's writes changed, told after they commit (live changes, docs/guides/live-changes.md):
 * a change names the table, the rows' ids and what happened to them, never their values, so whoever
 * hears of it reads the rows again and sees committed data only. A database opened by openDatabase
 * tells no one; `tellingChanges` gives a copy that tells `listener`. A write outside a transaction is
 * told once its statement has run (it committed); one inside a transaction that the framework's write
 * unit opened (heldChanges), once that transaction commits, and never when it rolls back.
 */
import type { Database } from '../connection/database.js';
import type { RecordId } from '../read/records.js';

export type ChangeKind = 'created' | 'updated' | 'deleted';

export interface Change {
  readonly table: string;
  readonly kind: ChangeKind;
  readonly ids: readonly RecordId[];
  /** An update's: the columns it set. Absent: any column may have changed. */
  readonly columns?: readonly string[];
}

export type ChangeListener = (change: Change) => void;

/** The database as the store carries its listener: the copies a transaction or a request makes keep it. */
type Telling = Database & { readonly changes?: ChangeListener };

/** `database`, its committed writes told to `listener`. */
export const tellingChanges = (database: Database, listener: ChangeListener): Database => ({ ...database, changes: listener }) as Telling;

/** A write's change: told now, or kept until its transaction commits (see heldChanges). */
export function noteChange(database: Database, table: string, kind: ChangeKind, ids: readonly RecordId[], columns?: readonly string[]): void {
  if (ids.length > 0) (database as Telling).changes?.(columns ? { table, kind, ids, columns } : { table, kind, ids });
}

/** A transaction's changes, held until it commits (see heldChanges). */
export interface HeldChanges {
  /** The transaction's database, keeping its writes' changes; each attempt starts afresh (a transaction run again after a stale plan keeps only its last attempt's). */
  within(transaction: Database): Database;
  /** Tells the changes kept, once the transaction committed. */
  tell(): void;
}

/** What a transaction opened on `database` does with its writes' changes: held until it commits; undefined when no one listens. */
export function heldChanges(database: Database): HeldChanges | undefined {
  const listener = (database as Telling).changes;
  if (!listener) return undefined;
  let kept: Change[] = [];
  return {
    within: (transaction) => {
      kept = [];
      return tellingChanges(transaction, (change) => kept.push(change));
    },
    tell: () => {
      for (const change of kept) listener(change);
    },
  };
}
