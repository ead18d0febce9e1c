/**
 * Every row of a database deleted at once, its tables kept: what a test suite does between tests
 * (Django's TestCase, DRF's APITestCase) instead of migrating a new database for each.
 */
import { storeDatabase, type Database } from '../connection/database.js';

/** Deletes every row of every table of the current schema but `kept`'s (the migrations' records), and starts ids again from 1. */
export async function emptyTables(database: Database, kept: readonly string[]): Promise<void> {
  const { db, capabilities } = storeDatabase(database);
  await capabilities.emptyTables(db, kept);
}
