/**
 * An app's migrations found by convention, as Django finds them: the modules of the `migrations/`
 * folder beside the app's module, each named `NNNN_words` and exporting a migration, imported in
 * name order and checked, so that a malformed file stops the command naming that file rather than
 * failing later inside the migrator.
 */
import { spawnSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { operations, type Migration, type MigrationStep, type Migrations } from '../../store/schema/operations.js';
import { isJsonObject } from '../../core/json.js';

/** A migration's file name: its number, its words, a module's extension. */
export const MIGRATION_FILE = /^(\d{4})_\w+\.[cm]?[jt]s$/;
const MODULE = /\.[cm]?[jt]s$/;
/** Modules of the folder that are not migrations: the index `makemigrations` keeps, helpers (`_steps.ts`), declaration files. */
const NOT_A_MIGRATION = /^(?:index\.|_)|\.d\.[cm]?ts$/;

const OPERATIONS = new Set(Object.keys(operations));

/** What is wrong with a migration module's default export, or undefined when it is a migration. */
function problemOf(value: unknown): string | undefined {
  if (typeof value === 'function') return undefined;
  if (!isJsonObject(value)) return 'its default export is not a migration: export default migration({ operations: [...] })';
  const { operations: steps, state, replaces } = value;
  if (!Array.isArray(steps)) return '`operations` is not an array';
  const wrong = steps.findIndex((step) => !isJsonObject(step) || !OPERATIONS.has(step.op as string) || (step.op === 'run' && typeof step.step !== 'function'));
  if (wrong >= 0) return `operations[${wrong}] is not an operation (op.createTable(...), op.run(async (db) => { ... }), ...)`;
  if (state !== undefined && !(isJsonObject(state) && isJsonObject(state.tables) && isJsonObject(state.indexes))) return '`state` is not a schema state ({ tables, indexes })';
  const replacesNames = Array.isArray(replaces) && replaces.every((name) => typeof name === 'string');
  const replacesSteps = isJsonObject(replaces) && Object.values(replaces).every((step) => typeof step === 'function');
  if (replaces !== undefined && !replacesNames && !replacesSteps) return '`replaces` is neither a list of names nor an object of steps by name';
  return undefined;
}

/** `file:line` of a JavaScript file's syntax error: a failed import says only what it is, `node --check` says where. */
function syntaxErrorAt(file: string): string {
  const line = /^.*:(\d+)$/m.exec(spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' }).stderr)?.[1];
  return line ? `${file}:${line}` : file;
}

/**
 * The migrations in `folder` by name, in name order; none when the folder does not exist yet.
 * Where one name has files in several languages (`0001_initial.ts` and its compiled `.js`), the one
 * in `extension` (the app module's) is taken. Throws naming the file for a module that is not named
 * or shaped as a migration, or that fails to import.
 */
export async function loadMigrations(folder: string | URL, extension?: string): Promise<Migrations> {
  const path = typeof folder === 'string' ? folder : fileURLToPath(folder);
  let entries;
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return {};
    throw error;
  }
  const files = new Map<string, string[]>();
  for (const entry of entries) {
    if (!entry.isFile() || !MODULE.test(entry.name) || NOT_A_MIGRATION.test(entry.name)) continue;
    if (!MIGRATION_FILE.test(entry.name)) {
      throw new Error(`${join(path, entry.name)} is not named as a migration: NNNN_words${extname(entry.name)} (a helper module's name starts with _).`);
    }
    const name = entry.name.slice(0, -extname(entry.name).length);
    files.set(name, [...(files.get(name) ?? []), entry.name]);
  }
  const migrations: Record<string, Migration | MigrationStep> = {};
  for (const name of [...files.keys()].sort()) {
    const candidates = files.get(name)!;
    const file = candidates.length === 1 ? candidates[0] : candidates.find((candidate) => extname(candidate) === extension);
    if (!file) throw new Error(`${path} holds ${candidates.sort().join(' and ')}: one migration ${name}, in one language, please.`);
    const location = join(path, file);
    let module: { default?: unknown };
    try {
      module = (await import(pathToFileURL(location).href)) as { default?: unknown };
    } catch (error) {
      const where = error instanceof SyntaxError ? syntaxErrorAt(location) : location;
      throw new Error(`${where} failed to load: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    const problem = problemOf(module.default);
    if (problem) throw new Error(`${location}: ${problem}.`);
    migrations[name] = module.default as Migration | MigrationStep;
  }
  return migrations;
}
