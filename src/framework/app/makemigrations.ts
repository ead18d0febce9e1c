/**
 * `makemigrations`: the declared schema against the state the existing migrations record, written
 * as the next migration file of a folder, with the folder's index module rewritten to list it.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SchemaState } from '../../core/schema.js';
import { describe, diffStates, renameCandidates, type Renames } from '../../store/schema/diff.js';
import { recordedState, withInheritedColumns, type Migrations, type Operation } from '../../store/schema/operations.js';
import { renderIndex, renderMigration } from '../../store/schema/render.js';
import { MIGRATION_FILE } from './migration-folder.js';

export type { Renames } from '../../store/schema/diff.js';

/** What `makemigrations` would write: the operations, a line per change, possible renames, and what to review. */
export interface MigrationPlan {
  readonly operations: readonly Operation[];
  /** One line per operation (`add column books.isbn`). */
  readonly changes: readonly string[];
  /** Columns dropped and added in one table, which the user may mean as renames. */
  readonly renameCandidates: readonly { table: string; from: string; to: string }[];
  /** Operations that fail on a table with rows unless a hand-written step prepares them (as Django asks for a one-off default). */
  readonly warnings: readonly string[];
}

function warningsFor(operations: readonly Operation[]): string[] {
  return operations.flatMap((operation) => {
    if (operation.op === 'addColumn' && !operation.definition.nullable && operation.definition.default === undefined) {
      return [`${operation.table}.${operation.column} is NOT NULL without a default: migrating fails on a table with rows. Give it a default, or add it nullable, fill it in a step (op.run) and make it NOT NULL.`];
    }
    if (operation.op === 'alterColumn' && operation.from.nullable && !operation.to.nullable) {
      return [`${operation.table}.${operation.column} becomes NOT NULL: migrating fails while a row holds NULL there. Fill those rows in a step (op.run) before this migration.`];
    }
    if (operation.op === 'addCheck') {
      return [`${operation.table} gets the check ${operation.name}: migrating fails while a row breaks it. Fix those rows in a step (op.run) before this migration.`];
    }
    return [];
  });
}

/** The migrations' state over `baseline` (tables made by others' migrations, which they alter): their own record of a table wins. */
function startState(migrations: Migrations, baseline: SchemaState): SchemaState {
  const recorded = withInheritedColumns(recordedState(migrations), baseline);
  const inherited = Object.keys(baseline.tables).filter((table) => !recorded.tables[table]);
  const indexes = Object.entries(baseline.indexes).filter(([, index]) => inherited.includes(index.table));
  return {
    tables: { ...Object.fromEntries(inherited.map((table) => [table, baseline.tables[table]!])), ...recorded.tables },
    indexes: { ...Object.fromEntries(indexes), ...recorded.indexes },
  };
}

export function planMigration(declared: SchemaState, migrations: Migrations, renames: Renames = {}, baseline: SchemaState = { tables: {}, indexes: {} }): MigrationPlan {
  const operations = diffStates(startState(migrations, baseline), declared, renames);
  return { operations, changes: operations.map(describe), renameCandidates: renameCandidates(operations), warnings: warningsFor(operations) };
}

/** Where an app's migrations are, and in what language new ones are written. */
export interface MigrationFolder {
  readonly path: string;
  /** `.mjs`, `.js` or `.ts`, as the app's module is written. */
  readonly extension: string;
  /** Where migration files import `migration` and `operations` from (`restfold` in an app). */
  readonly importFrom: string;
}

/** A file name's words from what the migration does: `0002_add_books_isbn`, `0001_initial`. */
function nameFor(plan: MigrationPlan, first: boolean): string {
  if (first) return 'initial';
  const words = plan.changes[0]!.split(' ').slice(0, 3).join('_').replace(/\W+/g, '_').slice(0, 40);
  return plan.changes.length > 1 ? `${words}_and_more` : words;
}

/** Writes the plan as the folder's next migration and rewrites its index module; returns the file's path. */
export async function writeMigration(
  folder: MigrationFolder,
  plan: MigrationPlan,
  state: SchemaState,
  options: { name?: string; generatedBy: string },
): Promise<string> {
  await mkdir(folder.path, { recursive: true });
  const existing = (await readdir(folder.path)).filter((file) => MIGRATION_FILE.test(file));
  const number = Math.max(0, ...existing.map((file) => Number(MIGRATION_FILE.exec(file)![1]))) + 1;
  const name = options.name ?? nameFor(plan, existing.length === 0);
  if (!/^\w+$/.test(name)) throw new Error(`--name must be letters, digits and _ only, not "${name}".`);
  const file = `${String(number).padStart(4, '0')}_${name}${folder.extension}`;
  await writeFile(join(folder.path, file), renderMigration({ importFrom: folder.importFrom, operations: plan.operations, state, generatedBy: options.generatedBy }));
  await writeFile(join(folder.path, `index${folder.extension}`), renderIndex([...existing, file], options.generatedBy));
  return join(folder.path, file);
}
