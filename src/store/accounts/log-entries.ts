/**
 * The log of writes (Django's LogEntry, `admin_log_entries`): who wrote which record of which
 * collection, when, how, and the names of the fields a change set, never their values. Written
 * by the framework's write unit in the write's own transaction, so a write that rolls back leaves
 * no entry; read newest first for a record's history.
 */
import { storeDatabase, type Database } from '../connection/database.js';

export type LogAction = 'add' | 'change' | 'delete';

export interface NewLogEntry {
  readonly userId: number | null;
  readonly collection: string;
  readonly recordId: string;
  readonly action: LogAction;
  readonly changed: readonly string[];
}

export interface LogEntryRow {
  readonly id: number;
  readonly actionTime: Date;
  readonly userId: number | null;
  /** The user's name now; null when the user is gone (or the write was anonymous). */
  readonly username: string | null;
  readonly action: LogAction;
  readonly changed: readonly string[];
}

/** Each entry, stamped now. */
export async function insertLogEntries(database: Database, entries: readonly NewLogEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const at = new Date().toISOString();
  await storeDatabase(database)
    .db.insertInto('admin_log_entries')
    .values(
      entries.map((entry) => ({
        action_time: at,
        user_id: entry.userId,
        collection: entry.collection,
        record_id: entry.recordId,
        action: entry.action,
        changed: JSON.stringify(entry.changed),
      })),
    )
    .execute();
}

const changedNames = (stored: unknown): string[] => {
  try {
    const names = JSON.parse(String(stored)) as unknown;
    return Array.isArray(names) ? names.map(String) : [];
  } catch {
    return [];
  }
};

/** The record's entries, newest first, at most `limit`. */
export async function logEntriesOf(database: Database, collection: string, recordId: string, limit: number): Promise<LogEntryRow[]> {
  const rows = await storeDatabase(database)
    .db.selectFrom('admin_log_entries')
    .leftJoin('users', 'users.id', 'admin_log_entries.user_id')
    .select(['admin_log_entries.id', 'admin_log_entries.action_time', 'admin_log_entries.user_id', 'users.username', 'admin_log_entries.action', 'admin_log_entries.changed'])
    .where('admin_log_entries.collection', '=', collection)
    .where('admin_log_entries.record_id', '=', recordId)
    .orderBy('admin_log_entries.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: Number(row.id),
    actionTime: new Date(row.action_time as string | Date),
    userId: row.user_id === null ? null : Number(row.user_id),
    username: (row.username as string | null) ?? null,
    action: row.action as LogAction,
    changed: changedNames(row.changed),
  }));
}
