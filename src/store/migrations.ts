/**
 * Migrations through Kysely's Migrator, which takes a lock first (an advisory
 * lock on PostgreSQL), so processes starting together migrate once. Before it
 * runs, migrations that replace others (`replaces`) take their place in the
 * bookkeeping, under the same lock.
 */
import { Migrator, type Kysely, type MigrationProvider } from 'kysely';
import { storeDatabase, type Database, type Tables } from './database.js';
import { currentSchema } from './introspection.js';
import { applyMigration } from './schema/compile.js';
import { recordedState, type Migration, type MigrationStep, type Migrations } from './schema/operations.js';

export type { SqlTypes } from './dialects/capabilities.js';
export type { Migration, MigrationStep, Migrations, Operation } from './schema/operations.js';

const replacedNames = (migration: Migration): readonly string[] =>
  Array.isArray(migration.replaces) ? migration.replaces : Object.keys(migration.replaces ?? {});

/**
 * For each migration that replaces others: where all of those ran, it is recorded as run in their
 * place; where some did, the rest run first (when the migration carries their steps), then the same.
 */
async function adoptReplaced(database: Database, table: string, migrations: Migrations, schema: string | undefined): Promise<string[]> {
  const replacing = Object.entries(migrations).filter(
    (entry): entry is [string, Migration] => typeof entry[1] !== 'function' && replacedNames(entry[1]).length > 0,
  );
  const applied: string[] = [];
  if (replacing.length === 0) return applied;
  const { db, capabilities } = storeDatabase(database);
  const { adapter } = db.getExecutor();
  await db.connection().execute(async (connection) => {
    const lock = { lockTable: `${table}_lock`, lockRowId: 'migration_lock', lockTableSchema: schema };
    await adapter.acquireMigrationLock(connection, lock);
    try {
      const scoped = schema ? connection.withSchema(schema) : connection;
      const exists = (await capabilities.liveColumns(connection)).some((column) => column.table === table);
      if (!exists) return;
      const ran = new Set((await scoped.selectFrom(table).select('name').execute()).map((row) => row.name as string));
      for (const [name, migration] of replacing) {
        const names = replacedNames(migration);
        const done = names.filter((replaced) => ran.has(replaced));
        if (done.length === 0 || ran.has(name)) continue;
        if (done.length < names.length) {
          const steps = Array.isArray(migration.replaces) ? undefined : (migration.replaces as Readonly<Record<string, MigrationStep>>);
          if (!steps) {
            throw new Error(`${table}: ${name} replaces ${names.join(', ')}, of which only ${done.join(', ')} ran; run the rest with the release that has them first.`);
          }
          for (const missing of names.filter((replaced) => !ran.has(replaced))) {
            await steps[missing]!(connection, capabilities.types);
            applied.push(missing);
          }
        }
        const timestamp = new Date().toISOString();
        await scoped.insertInto(table).values({ name, timestamp }).execute();
        await scoped.deleteFrom(table).where('name', 'in', [...names]).execute();
      }
    } finally {
      await adapter.releaseMigrationLock(connection, lock);
    }
  });
  return applied;
}

/**
 * Runs what has not run yet of `migrations`, bookkept in `<name>_migrations`; returns the names of
 * what ran (a replaced migration's among them, where a database had run only some of them).
 */
export async function migrate(database: Database, name: string, migrations: Migrations): Promise<string[]> {
  const store = storeDatabase(database);
  // Kysely looks for its tables in every schema unless told which; another schema's must not count.
  const schema = store.capabilities.hasSchemas ? await currentSchema(store.db) : undefined;
  const finished = await adoptReplaced(database, `${name}_migrations`, migrations, schema);
  const provider: MigrationProvider = {
    getMigrations: async () =>
      Object.fromEntries(
        Object.entries(migrations).map(([key, migration]) => [
          key,
          {
            up: (db: Kysely<Tables>) =>
              typeof migration === 'function'
                ? migration(db, store.capabilities.types)
                : applyMigration(db, store.capabilities, migration, recordedState(migrations, key)),
          },
        ]),
      ),
  };
  const migrator = new Migrator({
    db: store.db,
    provider,
    migrationTableName: `${name}_migrations`,
    migrationLockTableName: `${name}_migrations_lock`,
    migrationTableSchema: schema,
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) throw error;
  return [...finished, ...results.filter((result) => result.status === 'Success').map((result) => result.migrationName)];
}
