/**
 * The history of a request's writes (Django's LogEntry): the write unit (unit.ts) logs each record a
 * request adds, changes or deletes, in the write's own transaction, whatever surface sent it (the
 * API, the admin's in-process requests, a bulk create or delete). A change names the fields whose
 * stored values differ (a password's hash among them, by name only); values are never kept.
 * An app's database logs the admin's writes by default, and every request's with HISTORY=true
 * (docs/admin.md): the log makes each write a transaction of its own, with one INSERT more, which
 * is why the API's are not logged by default.
 */
import type { Row } from '../../core/rows.js';
import type { Database } from '../../store/connection/database.js';
import { insertLogEntries, type LogAction } from '../../store/accounts/log-entries.js';
import type { AuthUser } from '../base/auth-user.js';

interface LoggedCollection {
  readonly name: string;
  readonly parent?: { readonly collection: LoggedCollection } | undefined;
}

/** Who a logged write is by, and of which collection. */
export interface LoggedWriter {
  readonly user: AuthUser | null;
  readonly collection: LoggedCollection;
}

/**
 * The name a collection's entries are logged under: its own, after its parents' for a nested one
 * (`users.groups`, not the `groups` a user's memberships and the groups themselves share).
 */
export const loggedName = (collection: LoggedCollection): string => (collection.parent ? `${loggedName(collection.parent.collection)}.${collection.name}` : collection.name);

/** Whose writes are logged (HISTORY): every request's, the admin's only (the default, as Django's LogEntry), or none. */
export type HistoryKept = 'all' | 'admin' | 'off';

/** The database as the write unit sees whose writes it logs: the copies a transaction or a request makes keep it. */
type Logging = Database & { readonly logsWrites?: HistoryKept };

/** `database`, the writes of the requests `kept` names logged. */
export const loggingWrites = (database: Database, kept: HistoryKept): Database => (kept === 'off' ? database : ({ ...database, logsWrites: kept } as Logging));

/** `database` as one of the admin's requests writes on it: logged where the admin's writes are. */
export const asAdminWrite = (database: Database): Database => ((database as Logging).logsWrites === 'admin' ? loggingWrites(database, 'all') : database);

/** Whether a request's write on `database` is logged. */
export const logsWrites = (database: Database): boolean => (database as Logging).logsWrites === 'all';

/** A value as compared across two reads of a row (a driver's Date, bigint or Buffer as text). */
const comparable = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? String(item) : Buffer.isBuffer(item) ? item.toString('base64') : item));

/** The fields `values` set whose stored value differs from `before` (a field either row lacks, such as a many-to-many, counts as set). */
export function changedFields(values: Row, before: Row, after: Row): string[] {
  return Object.keys(values).filter((name) => !(name in before && name in after) || comparable(before[name]) !== comparable(after[name]));
}

/** One entry per record, by its key. */
export async function logWrites(database: Database, writer: LoggedWriter, action: LogAction, records: readonly { readonly key: unknown; readonly changed: readonly string[] }[]): Promise<void> {
  const userId = writer.user ? Number(writer.user.id) : null;
  await insertLogEntries(
    database,
    records.map(({ key, changed }) => ({ userId, collection: loggedName(writer.collection), recordId: String(key), action, changed })),
  );
}
