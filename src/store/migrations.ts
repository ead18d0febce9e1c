/**
 * Migrations through Kysely's Migrator, which takes a lock first (an advisory
 * lock on PostgreSQL), so processes starting together migrate once.
 */
import { Migrator, sql, type Kysely, type MigrationProvider } from 'kysely';
import { storeDatabase, type Database, type Tables } from './database.js';
import type { SqlTypes } from './dialects/capabilities.js';
import { currentSchema } from './introspection.js';

export type { SqlTypes } from './dialects/capabilities.js';

export type MigrationStep = (db: Kysely<Tables>, types: SqlTypes) => Promise<void>;

/** Name → step; steps run in name order, each once. */
export type Migrations = Readonly<Record<string, MigrationStep>>;

/** Runs what has not run yet of `migrations`, bookkept in `<name>_migrations`. */
export async function migrate(database: Database, name: string, migrations: Migrations): Promise<string[]> {
  const { types, hasSchemas } = storeDatabase(database).capabilities;
  const provider: MigrationProvider = {
    getMigrations: async () =>
      Object.fromEntries(
        Object.entries(migrations).map(([key, step]) => [key, { up: (db: Kysely<Tables>) => step(db, types) }]),
      ),
  };
  const migrator = new Migrator({
    db: storeDatabase(database).db,
    provider,
    migrationTableName: `${name}_migrations`,
    migrationLockTableName: `${name}_migrations_lock`,
    // Kysely looks for its tables in every schema unless told which; another schema's must not count.
    migrationTableSchema: hasSchemas ? await currentSchema(storeDatabase(database).db) : undefined,
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) throw error;
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

export interface TrigramIndex {
  readonly name: string;
  readonly table: string;
  readonly column: string;
}

/**
 * A step that creates trigram GIN indexes, which serve `LIKE`/`ILIKE '%term%'`, where the database
 * has them (types.supportsTrigramIndexes); elsewhere it does nothing, and a search stays a scan.
 */
export const trigramIndexes =
  (indexes: readonly TrigramIndex[]): MigrationStep =>
  async (db, types) => {
    if (!types.supportsTrigramIndexes) return;
    // In `public`, not the first schema on the search path: the extension is one per database, and a
    // schema dropped with CASCADE (as the test suites do) would take it and every other schema's indexes along.
    await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`.execute(db);
    const { rows } = await sql<{ schema: string }>`
      SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'pg_trgm'`.execute(db);
    const operatorClass = sql`${sql.id(rows[0]!.schema)}.gin_trgm_ops`;
    for (const { table, column, name } of indexes) {
      await sql`CREATE INDEX ${sql.id(name)} ON ${sql.table(table)} USING gin (${sql.ref(column)} ${operatorClass})`.execute(db);
    }
  };
