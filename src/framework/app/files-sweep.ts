/**
 * `restfold files sweep`: the stored objects no row names (what a crash between storing and
 * committing, or between committing and removing, left behind), listed or removed. Objects stored
 * within the grace period are left alone: a request may still be writing the row that names them.
 */
import type { Database } from '../../store/connection/database.js';
import { referencedFileKeys, type FileColumns } from '../../store/files/references.js';
import { openFileStorage } from '../../store/files/open.js';
import type { Config } from './config.js';
import { storedAt } from '../stages/parsers/multipart.js';
import type { AppDefinition } from './definition.js';

/** An hour: far longer than any request may take to commit its row. */
export const SWEEP_GRACE_MS = 3600_000;

/** The app's tables with file fields, and those fields' columns. */
function fileColumns(definition: AppDefinition): FileColumns[] {
  const byTable = new Map<string, Set<string>>();
  for (const { serializer } of definition.collections) {
    const columns = Object.entries(serializer.model.fields).filter(([, field]) => field.file);
    if (columns.length === 0) continue;
    const set = byTable.get(serializer.model.table) ?? new Set<string>();
    for (const [name] of columns) set.add(name);
    byTable.set(serializer.model.table, set);
  }
  return [...byTable].map(([table, columns]) => ({ table, columns: [...columns] }));
}

/** The orphaned keys in FILES_STORAGE, removed when `remove` is set. */
export async function sweepFiles(definition: AppDefinition, config: Config, database: Database, options: { remove: boolean }): Promise<string[]> {
  const storage = await openFileStorage({ url: config.files.storage, env: config.files.s3Env });
  try {
    // Listed before the rows are read: an object stored meanwhile is named by then, or young.
    const keys: string[] = [];
    for await (const key of storage.list('')) keys.push(key);
    const named = await referencedFileKeys(database, fileColumns(definition));
    const cutoff = Date.now() - SWEEP_GRACE_MS;
    const orphans = keys.filter((key) => !named.has(key) && (storedAt(key) ?? 0) <= cutoff);
    if (options.remove) for (const key of orphans) await storage.remove(key);
    return orphans;
  } finally {
    await storage.close();
  }
}
