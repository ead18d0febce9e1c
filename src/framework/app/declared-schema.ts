/**
 * The schema the declarations make: the framework's tables (the User model and the store's account
 * tables), and an app's (its collections' models, its other models, and the indexes its collections
 * need). Migrations are generated from these states; `check` and start-up compare them with the database.
 */
import { tableIndexes, tableState, type Table } from '../../core/model.js';
import { indexName, indexState, type IndexState, type SchemaState, type TableState } from '../../core/schema.js';
import { accountTables } from '../../store/accounts/tables.js';
import type { Database } from '../../store/connection/database.js';
import { schemaDifferences } from '../../store/schema/drift.js';
import type { AppDefinition } from './definition.js';
import type { Relation } from '../declare/serializer.js';
import type { Serializer } from '../declare/serializer.js';
import { User } from '../declare/users/user-model.js';
import { groupModels } from '../declare/users/group-models.js';

const frameworkTables: readonly Table[] = [User, ...groupModels, ...accountTables];

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

/** The app's own tables by name: its collections' models, their join tables and its other models. */
function appTables(definition: AppDefinition): Map<string, Table> {
  const framework = frameworkState();
  const models = new Map<string, Table>();
  const joins = definition.collections.flatMap(({ serializers }) =>
    serializers.flatMap((serializer) => Object.values(serializer.relations).flatMap((relation) => (relation.through ? [relation.through.declaration] : []))),
  );
  for (const model of [...definition.collections.map((collection) => collection.serializer.model), ...joins, ...(definition.models ?? [])]) {
    if (framework.tables[model.table]) continue;
    const known = models.get(model.table);
    if (known && known !== model) throw new Error(`Two models declare the table "${model.table}".`);
    models.set(model.table, model);
  }
  // The app's own user model alters the framework's table: its migrations start from the framework's (appBaseline).
  if (definition.userModel && definition.userModel !== User) models.set(User.table, definition.userModel);
  return models;
}

/** The tables an app's named filters may reach: its own, and the users (never the store's account tables of tokens and sessions). */
export const filterableTables = (definition: AppDefinition): ReadonlyMap<string, Table> => new Map([[User.table, User], ...appTables(definition)]);

/** The app's tables and indexes, as its migrations must lead to: the framework's are not its own. */
export function appState(definition: AppDefinition): SchemaState {
  const framework = frameworkState();
  const models = appTables(definition);
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

/**
 * What the app's migrations start from besides their own tables: the framework's tables the app
 * redeclares (the `users` table of its own user model), which the framework's migrations made.
 */
export function appBaseline(definition: AppDefinition): SchemaState {
  const framework = frameworkState();
  if (!definition.userModel || definition.userModel === User) return { tables: {}, indexes: {} };
  const indexes = Object.fromEntries(Object.entries(framework.indexes).filter(([, index]) => index.table === User.table));
  return { tables: { [User.table]: framework.tables[User.table]! }, indexes };
}

/** The tables a relation reads besides the record's own. */
function tablesRead(relation: Relation): string[] {
  if (relation.slug) return [relation.slug.target.table];
  if (relation.through) return [relation.through.table, relation.through.target];
  return [relation.across.table];
}

/**
 * Refuses, at start-up, a relation the app's schema cannot serve, which the first read showing it
 * would otherwise fail on (a 500): one reading a table that no model of the app (nor the
 * framework) declares, so no migration makes it, or a reverse relation whose key is no foreign key
 * of the related table to the record's own. Relations of nested lists are checked too.
 */
export function assertRelationsDeclared(definition: AppDefinition): void {
  const tables = { ...frameworkState().tables, ...appState(definition).tables };
  const check = (serializer: Serializer): void => {
    for (const [name, relation] of Object.entries(serializer.relations)) {
      const where = `${serializer.model.table}: relation "${name}"`;
      for (const table of tablesRead(relation)) {
        if (!tables[table]) throw new Error(`${where} reads the table "${table}", which no model of the app declares: add its model to a collection, or to defineApp's \`models\`.`);
      }
      const { table, link } = relation.across;
      if (relation.kind === 'reverse' && tables[table]!.columns[link]?.references?.table !== serializer.model.table) {
        throw new Error(`${where}: ${table}.${link} is no foreign key to ${serializer.model.table}.`);
      }
      if (relation.serializer) check(relation.serializer);
    }
  };
  for (const { serializers } of definition.collections) serializers.forEach(check);
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

/** The database differs from the declarations (what `restfold check` and start-up report). */
export class SchemaMismatch extends Error {
  constructor(readonly differences: readonly string[]) {
    super(
      `The database differs from the declarations: ${differences.join('; ')}. ` +
        'Generate the missing migration (restfold makemigrations) and migrate, or fix the declarations.',
    );
  }
}
