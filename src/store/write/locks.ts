/**
 * Named locks, for a check for absence and the write after it (a free slug): no row can be locked
 * for a value not stored yet, so the transactions that may store it take one lock named for it.
 */
import { storeDatabase, type Database } from '../connection/database.js';

/**
 * Takes the lock on `key` for the rest of `transaction`, waiting while another transaction holds it
 * (DialectCapabilities.namedLock; nothing where write transactions already run one at a time).
 * Only inside a transaction: outside one the lock would end with its statement.
 */
export async function lockNamed(transaction: Database, key: string): Promise<void> {
  const { db, capabilities } = storeDatabase(transaction);
  if (!db.isTransaction) throw new Error(`The lock on "${key}" is held until its transaction ends: take it with a transaction's database.`);
  if (capabilities.namedLock) await capabilities.namedLock(key).execute(db);
}
