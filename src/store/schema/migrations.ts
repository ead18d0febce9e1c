/**
 * Migrations: what has not run yet of a list, in the order of their names, bookkept in
 * `<name>_migrations` (the table Kysely's Migrator keeps, which earlier releases ran: the same rows
 * serve both). Where DDL is transactional (PostgreSQL) all of it runs in one transaction that first
 * takes the dialect's migration lock, so processes starting together, and `migrate`, migrate once,
 * one after the other, and a failing migration leaves nothing half-applied. The lock is held by
 * the transaction, not the session: Kysely's Migrator takes a session lock and releases it with
 * another statement, which behind a transaction pooler may reach another server connection and
 * leave the lock held. Migrations that replace others (`replaces`) take their place in the
 * bookkeeping first, in the same run. A contract step (`contract`) and those after it wait until asked.
 */
import type { Kysely } from 'kysely';
import { storeDatabase, transaction, type Database, type Tables } from '../connection/database.js';
import type { DialectCapabilities } from '../dialects/capabilities.js';
import { applyMigration } from './compile.js';
import { recordedState, type Migration, type MigrationStep, type Migrations } from './operations.js';
import type { SchemaState } from '../../core/schema.js';

export type { RowsMove, SqlTypes } from '../dialects/capabilities.js';
export type { Migration, MigrationStep, Migrations, Operation } from './operations.js';

const replacedNames = (migration: Migration): readonly string[] =>
  Array.isArray(migration.replaces) ? migration.replaces : Object.keys(migration.replaces ?? {});

/** A run migration, as `<name>_migrations` records it. */
interface Ran {
  readonly name: string;
  readonly timestamp: string;
}

/**
 * For each migration that replaces others: where all of those ran, it is recorded as run in their
 * place; where some did, the rest run first (when the migration carries their steps), then the same.
 */
async function adoptReplaced(db: Kysely<Tables>, capabilities: DialectCapabilities, table: string, migrations: Migrations, ran: Set<string>): Promise<string[]> {
  const applied: string[] = [];
  for (const [name, migration] of Object.entries(migrations)) {
    if (typeof migration === 'function') continue;
    const names = replacedNames(migration);
    const done = names.filter((replaced) => ran.has(replaced));
    if (done.length === 0 || ran.has(name)) continue;
    if (done.length < names.length) {
      const steps = Array.isArray(migration.replaces) ? undefined : (migration.replaces as Readonly<Record<string, MigrationStep>>);
      if (!steps) {
        throw new Error(`${table}: ${name} replaces ${names.join(', ')}, of which only ${done.join(', ')} ran; run the rest with the release that has them first.`);
      }
      for (const missing of names.filter((replaced) => !ran.has(replaced))) {
        await steps[missing]!(db, capabilities.types);
        applied.push(missing);
      }
    }
    await db.insertInto(table).values({ name, timestamp: new Date().toISOString() }).execute();
    await db.deleteFrom(table).where('name', 'in', [...names]).execute();
  }
  return applied;
}

/** The run migrations' names in the order they ran (Kysely's: by time, then name), refused where they are no beginning of `names`. */
function ranInOrder(table: string, rows: readonly Ran[], names: readonly string[]): string[] {
  const ran = [...rows].sort((a, b) => new Date(a.timestamp).getTime() - new Date(b.timestamp).getTime() || a.name.localeCompare(b.name)).map((row) => row.name);
  const missing = ran.find((name) => !names.includes(name));
  if (missing) throw new Error(`corrupted migrations: previously executed migration ${missing} is missing (${table})`);
  const misplaced = ran.findIndex((name, index) => names[index] !== name);
  if (misplaced >= 0) {
    throw new Error(
      `corrupted migrations: expected previously executed migration ${ran[misplaced]} to be at index ${misplaced} but ${names[misplaced]} was found in its place. New migrations must always have a name that comes alphabetically after the last executed migration (${table}).`,
    );
  }
  return ran;
}

const isContract = (migration: Migration | MigrationStep): boolean => typeof migration !== 'function' && migration.contract === true;

/** The table that records which of `name`'s migrations have run. */
export const migrationsTable = (name: string): string => `${name}_migrations`;

/** What `migrate` ran, and what it held: a contract step, and those after it, that wait for `contract`. */
export interface MigrateResult {
  readonly applied: string[];
  readonly held: string[];
}

/**
 * Runs what has not run yet of `migrations`, bookkept in `<name>_migrations`; returns the names of
 * what ran (a replaced migration's among them, where a database had run only some of them), and of
 * what waits. `baseline`: the state of the migrations run before these (the framework's), whose
 * tables these alter. `contract`: run contract steps too.
 */
export async function migrate(database: Database, name: string, migrations: Migrations, baseline?: SchemaState, contract = false): Promise<MigrateResult> {
  const { db, capabilities } = storeDatabase(database);
  const table = migrationsTable(name);
  const names = Object.keys(migrations).sort();
  const run = async (db: Kysely<Tables>): Promise<MigrateResult> => {
    if (capabilities.migrationLock) await capabilities.migrationLock.execute(db);
    // Under the lock, no other process is making it meanwhile.
    await db.schema
      .createTable(table)
      .ifNotExists()
      .addColumn('name', 'varchar(255)', (column) => column.notNull().primaryKey())
      .addColumn('timestamp', 'varchar(255)', (column) => column.notNull())
      .execute();
    const recorded = async () => (await db.selectFrom(table).select(['name', 'timestamp']).execute()) as unknown as Ran[];
    const applied = await adoptReplaced(db, capabilities, table, migrations, new Set((await recorded()).map((row) => row.name)));
    const done = ranInOrder(table, await recorded(), names);
    const pending = names.slice(done.length);
    const heldFrom = contract || done.length === 0 ? -1 : pending.findIndex((next) => isContract(migrations[next]!));
    const held = heldFrom < 0 ? [] : pending.splice(heldFrom);
    for (const next of pending) {
      const migration = migrations[next]!;
      if (typeof migration === 'function') await migration(db, capabilities.types);
      else await applyMigration(db, capabilities, migration, recordedState(migrations, next), baseline);
      await db.insertInto(table).values({ name: next, timestamp: new Date().toISOString() }).execute();
      applied.push(next);
    }
    return { applied, held };
  };
  if (capabilities.migrationLock) return transaction(database, (transaction) => run(storeDatabase(transaction).db));
  return db.connection().execute(run);
}
