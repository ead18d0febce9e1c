/**
 * The schema the declarations make: the framework's tables (the User model and the store's account
 * tables), and an app's (its collections' models, its other models, and the indexes its collections
 * need). Migrations are generated from these states; `check` and start-up compare them with the database.
 */
import { tableIndexes, tableState, type Table } from '../core/model.js';
import { indexName, indexState, type IndexState, type SchemaState, type TableState } from '../core/schema.js';
import { accountTables } from '../store/accounts/tables.js';
import type { Database } from '../store/database.js';
import { schemaDifferences } from '../store/schema/drift.js';
import type { AppDefinition } from './app.js';
import { User } from './users/model.js';

const frameworkTables: readonly Table[] = [User, ...accountTables];

function stateOf(tables: readonly Table[], extraIndexes: Readonly<Record<string, IndexState>> = {}): SchemaState {
  const states: Record<string, TableState> = {};
  const indexes: Record<string, IndexState> = {};
  for (const table of tables) {
    states[table.table] = tableState(table);
    Object.assign(indexes, tableIndexes(table));
  }
  return { tables: states, indexes: { ...indexes, ...extraIndexes } };
}

/** The framework's own tables, as its migrations (store/accounts/migrations/) must lead to. */
export const frameworkState = (): SchemaState => stateOf(frameworkTables);

/** The app's tables and indexes, as its migrations must lead to: the framework's are not its own. */
export function appState(definition: AppDefinition): SchemaState {
  const framework = frameworkState();
  const models = new Map<string, Table>();
  const joins = definition.collections.flatMap(({ serializer }) => Object.values(serializer.relations).flatMap((relation) => (relation.through ? [relation.through.declaration] : [])));
  for (const model of [...definition.collections.map((collection) => collection.serializer.model), ...joins, ...(definition.models ?? [])]) {
    if (framework.tables[model.table]) continue;
    const known = models.get(model.table);
    if (known && known !== model) throw new Error(`Two models declare the table "${model.table}".`);
    models.set(model.table, model);
  }
  const contributed: Record<string, IndexState> = {};
  for (const { serializer, indexes } of definition.collections) {
    const table = serializer.model.table;
    for (const index of indexes) {
      const name = indexName(table, index);
      if (!framework.indexes[name]) contributed[name] = indexState(table, index);
    }
  }
  const own = stateOf([...models.values()]);
  return { tables: own.tables, indexes: { ...contributed, ...own.indexes } };
}

/** How the live database differs from the framework's and the app's declarations: one line each. */
export async function declaredSchemaDifferences(database: Database, definition: AppDefinition): Promise<string[]> {
  const framework = frameworkState();
  const app = appState(definition);
  return schemaDifferences(database, { tables: { ...framework.tables, ...app.tables }, indexes: { ...framework.indexes, ...app.indexes } });
}

/** Refuses to serve a database that differs from the declarations, naming table and column. */
export async function assertSchemaMatches(database: Database, definition: AppDefinition): Promise<void> {
  const differences = await declaredSchemaDifferences(database, definition);
  if (differences.length === 0) return;
  throw new SchemaMismatch(differences);
}

export class SchemaMismatch extends Error {
  constructor(readonly differences: readonly string[]) {
    super(
      `The database differs from the declarations: ${differences.join('; ')}. ` +
        'Generate the missing migration (restfold makemigrations) and migrate, or fix the declarations.',
    );
  }
}
