/** The stored files' keys that rows name: what a sweep keeps. */
import { storeDatabase, type Database } from '../connection/database.js';

/** A table and its file columns (each holds a JSON object with the key, or null). */
export interface FileColumns {
  readonly table: string;
  readonly columns: readonly string[];
}

/** Every key the tables' file columns name. */
export async function referencedFileKeys(database: Database, tables: readonly FileColumns[]): Promise<Set<string>> {
  const { db } = storeDatabase(database);
  const keys = new Set<string>();
  for (const { table, columns } of tables) {
    const rows = (await db.selectFrom(table).select(columns as never[]).execute()) as Record<string, unknown>[];
    for (const row of rows) {
      for (const column of columns) {
        const value = row[column];
        if (value === null || value === undefined) continue;
        const stored = (typeof value === 'string' ? JSON.parse(value) : value) as { key?: unknown };
        if (typeof stored.key === 'string') keys.add(stored.key);
      }
    }
  }
  return keys;
}
