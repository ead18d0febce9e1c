/**
 * A migration: the operations that lead from the previous migration's schema state to its own,
 * and that state (so the next `makemigrations` diffs against the files, with no database). The
 * operations are data, written into migration files as calls of `operations.*`, compiled for the
 * database at `migrate` (compile.ts); `operations.run` is a hand-written step among them.
 */
import type { Kysely } from 'kysely';
import type { Column, IndexState, RowCondition, SchemaState } from '../../core/schema.js';
import type { Tables } from '../connection/database.js';
import type { SqlTypes } from '../dialects/capabilities.js';

/** A hand-written step: any SQL through Kysely, with the dialect's column types. */
export type MigrationStep = (db: Kysely<Tables>, types: SqlTypes) => Promise<void>;

/** One step of a migration (`operations.createTable`, `addColumn`, …, `run` for a hand-written one). */
export type Operation =
  | {
      readonly op: 'createTable';
      readonly table: string;
      readonly columns: Readonly<Record<string, Column>>;
      readonly primaryKey: readonly string[];
      readonly checks?: Readonly<Record<string, RowCondition>>;
    }
  | { readonly op: 'dropTable'; readonly table: string }
  | { readonly op: 'addColumn'; readonly table: string; readonly column: string; readonly definition: Column }
  | { readonly op: 'dropColumn'; readonly table: string; readonly column: string }
  | { readonly op: 'alterColumn'; readonly table: string; readonly column: string; readonly from: Column; readonly to: Column }
  | { readonly op: 'renameColumn'; readonly table: string; readonly from: string; readonly to: string }
  | { readonly op: 'addCheck'; readonly table: string; readonly name: string; readonly check: RowCondition }
  | { readonly op: 'dropCheck'; readonly table: string; readonly name: string }
  | { readonly op: 'createIndex'; readonly name: string; readonly index: IndexState }
  | { readonly op: 'dropIndex'; readonly name: string; readonly index: IndexState }
  | { readonly op: 'run'; readonly step: MigrationStep };

/**
 * A migration: its operations, in order, and the declared state after them (what the next `makemigrations`
 * diffs against).
 */
export interface Migration {
  /**
   * Names of migrations this one stands for (Django's `replaces`): where all of them ran, it is
   * recorded as run without running, and they are forgotten. With their steps (name → step), a
   * database that ran only some of them runs the rest first. How hand-written histories join a generated one.
   */
  readonly replaces?: readonly string[] | Readonly<Record<string, MigrationStep>>;
  readonly operations: readonly Operation[];
  /**
   * A contract step: it removes what servers of an earlier release still use (a table the expand
   * step before it replaced), so `migrate` holds it, and every migration after it, until asked
   * (`migrate --contract`), once none of them serves. A database that had run none of the list's
   * migrations runs it at once: nothing served it before.
   */
  readonly contract?: boolean;
  /** The schema after this migration; left out by a hand-written one that changes no declared table. */
  readonly state?: SchemaState;
}

/** Name → migration (or a bare hand-written step); they run in name order, each once. */
export type Migrations = Readonly<Record<string, Migration | MigrationStep>>;

/** The constructors migration files call: each returns the operation as data. */
export const operations = {
  createTable: (
    table: string,
    columns: Readonly<Record<string, Column>>,
    primaryKey: readonly string[] = ['id'],
    checks?: Readonly<Record<string, RowCondition>>,
  ): Operation => ({ op: 'createTable', table, columns, primaryKey, ...(checks && { checks }) }),
  dropTable: (table: string): Operation => ({ op: 'dropTable', table }),
  addColumn: (table: string, column: string, definition: Column): Operation => ({ op: 'addColumn', table, column, definition }),
  dropColumn: (table: string, column: string): Operation => ({ op: 'dropColumn', table, column }),
  alterColumn: (table: string, column: string, from: Column, to: Column): Operation => ({ op: 'alterColumn', table, column, from, to }),
  renameColumn: (table: string, from: string, to: string): Operation => ({ op: 'renameColumn', table, from, to }),
  addCheck: (table: string, name: string, check: RowCondition): Operation => ({ op: 'addCheck', table, name, check }),
  dropCheck: (table: string, name: string): Operation => ({ op: 'dropCheck', table, name }),
  createIndex: (name: string, index: IndexState): Operation => ({ op: 'createIndex', name, index }),
  dropIndex: (name: string, index: IndexState): Operation => ({ op: 'dropIndex', name, index }),
  run: (step: MigrationStep): Operation => ({ op: 'run', step }),
};

/** Declares a migration file's migration (it only gives the object its type). */
export const migration = (definition: Migration): Migration => definition;

/** The schema state `migrations` lead to: the last one recorded, in name order. */
export function recordedState(migrations: Migrations, until?: string): SchemaState {
  let state: SchemaState = { tables: {}, indexes: {} };
  for (const name of Object.keys(migrations).sort()) {
    if (until !== undefined && name > until) break;
    const migration = migrations[name]!;
    if (typeof migration !== 'function' && migration.state) state = migration.state;
  }
  return state;
}

/**
 * `recorded` with, in each of its tables that `baseline` (others' migrations: the framework's) also
 * has, the columns `baseline` has that the record lacks: the others' migrations added them since
 * (the framework's `users.is_staff`), and they are neither the app's to add nor to drop.
 */
export function withInheritedColumns(recorded: SchemaState, baseline: SchemaState): SchemaState {
  const tables = Object.entries(recorded.tables).map(([name, table]) => {
    const base = baseline.tables[name];
    return [name, base ? { ...table, columns: { ...base.columns, ...table.columns } } : table] as const;
  });
  return { ...recorded, tables: Object.fromEntries(tables) };
}
