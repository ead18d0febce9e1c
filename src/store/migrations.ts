/**
 * Migrations through Kysely's Migrator, which takes a lock first (an advisory
 * lock on PostgreSQL), so processes starting together migrate once.
 */
import { Migrator, type ColumnDefinitionBuilder, type Kysely, type MigrationProvider } from 'kysely';
import type { Database, Dialect, Tables } from './database.js';
import { currentSchema } from './introspection.js';

/** Column types that differ between SQLite and PostgreSQL, so one migration serves both. */
export interface SqlTypes {
  readonly dialect: Dialect;
  /** An auto-assigned 64-bit primary key. */
  readonly id: 'integer' | 'bigint';
  readonly idColumn: (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  /** Millisecond precision, UTC. */
  readonly timestamp: 'text' | 'timestamptz(3)';
  readonly boolean: 'integer' | 'boolean';
}

export type MigrationStep = (db: Kysely<Tables>, types: SqlTypes) => Promise<void>;

/** Name → step; steps run in name order, each once. */
export type Migrations = Readonly<Record<string, MigrationStep>>;

export function sqlTypes(dialect: Dialect): SqlTypes {
  return dialect === 'postgres'
    ? {
        dialect,
        id: 'bigint',
        idColumn: (column) => column.primaryKey().generatedByDefaultAsIdentity(),
        timestamp: 'timestamptz(3)',
        boolean: 'boolean',
      }
    : {
        dialect,
        id: 'integer',
        idColumn: (column) => column.primaryKey().autoIncrement(),
        timestamp: 'text',
        boolean: 'integer',
      };
}

/** Runs what has not run yet of `migrations`, bookkept in `<name>_migrations`. */
export async function migrate(database: Database, name: string, migrations: Migrations): Promise<string[]> {
  const types = sqlTypes(database.dialect);
  const provider: MigrationProvider = {
    getMigrations: async () =>
      Object.fromEntries(
        Object.entries(migrations).map(([key, step]) => [key, { up: (db: Kysely<Tables>) => step(db, types) }]),
      ),
  };
  const migrator = new Migrator({
    db: database.db,
    provider,
    migrationTableName: `${name}_migrations`,
    migrationLockTableName: `${name}_migrations_lock`,
    // Kysely looks for its tables in every schema unless told which; another schema's must not count.
    migrationTableSchema: database.dialect === 'postgres' ? await currentSchema(database.db) : undefined,
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) throw error;
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName);
}
