/** Test apps declare models only: their migrations are generated from the declarations, as `makemigrations` first writes them. */
import { appBaseline, appState, defineApp, planMigration, type AppDefinition, type Migrations } from '../../src/framework/index.js';

export function generatedMigrations(definition: AppDefinition): Migrations {
  const state = appState(definition);
  return { '0001_initial': { operations: planMigration(state, {}, {}, appBaseline(definition)).operations, state } };
}

/** `definition` with the migration generated from its declarations in place of any it had. */
export const withGeneratedMigrations = (definition: AppDefinition): AppDefinition =>
  defineApp({ ...definition, migrations: generatedMigrations(definition) });
