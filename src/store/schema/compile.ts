/**
 * A migration's operations as DDL for the database at hand. Where the dialect cannot alter a
 * column or a table's checks in place (SQLite), the table is rebuilt from the state the migration
 * leads to: a new table (with its checks), the rows copied, the old one dropped, the new one
 * renamed, its indexes made again.
 */
import { sql, type ColumnDefinitionBuilder, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { Column, IndexState, SchemaState, TableState } from '../../core/schema.js';
import type { Tables } from '../connection/database.js';
import type { DialectCapabilities, SqlTypes } from '../dialects/capabilities.js';
import { conditionSql } from './condition.js';
import { withInheritedColumns, type Migration, type Operation } from './operations.js';

type Db = Kysely<Tables>;

/** A column's SQL type in this dialect. */
export function sqlType(types: SqlTypes, column: Pick<Column, 'type' | 'maxLength' | 'digits' | 'places'>): string {
  if (column.maxLength !== undefined && column.type === 'varchar') return `varchar(${column.maxLength})`;
  if (column.type === 'decimal') return `${types.columnTypes.decimal}(${column.digits},${column.places})`;
  return types.columnTypes[column.type];
}

const literal = (types: SqlTypes, column: Column, value: string | number | boolean) =>
  sql.lit(column.type === 'boolean' ? types.booleanValue(Boolean(value)) : value);

/** NOT NULL, the default, UNIQUE and REFERENCES of a column (its key when it is the table's one `id`). */
function constraints(types: SqlTypes, column: Column, inlineKey: boolean): (builder: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  return (builder) => {
    if (column.type === 'id') return types.idColumn(builder);
    let built = inlineKey ? builder.primaryKey() : builder;
    if (!column.nullable && !inlineKey) built = built.notNull();
    if (column.default !== undefined) built = built.defaultTo(literal(types, column, column.default));
    if (column.unique) built = built.unique();
    const { references } = column;
    if (references) built = built.references(`${references.table}.id`).onDelete(references.onDelete);
    return built;
  };
}

async function createTable(db: Db, types: SqlTypes, name: string, table: TableState): Promise<void> {
  const inlineKey = table.primaryKey.length === 1 ? table.primaryKey[0] : undefined;
  let builder = db.schema.createTable(name);
  for (const [column, definition] of Object.entries(table.columns)) {
    builder = builder.addColumn(column, sql.raw(sqlType(types, definition)), constraints(types, definition, column === inlineKey));
  }
  if (!inlineKey) builder = builder.addPrimaryKeyConstraint(`${name}_pk`, table.primaryKey as never[]);
  for (const [check, condition] of Object.entries(table.checks ?? {})) builder = builder.addCheckConstraint(check, conditionSql(types, condition));
  await builder.execute();
}

/** `pg_trgm`'s operator class, the extension made first where it is missing. */
async function trigramOperatorClass(db: Db) {
  // In `public`, not the first schema on the search path: the extension is one per database, and a
  // schema dropped with CASCADE (as the test suites do) would take it and every other schema's indexes along.
  await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`.execute(db);
  const { rows } = await sql<{ schema: string }>`
    SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'pg_trgm'`.execute(db);
  return sql`${sql.id(rows[0]!.schema)}.gin_trgm_ops`;
}

async function createIndex(db: Db, types: SqlTypes, name: string, index: IndexState): Promise<void> {
  if (index.trigram) {
    // Where the dialect has none, no index is made, and a search stays a scan (docs/performance.md).
    if (!types.supportsTrigramIndexes) return;
    const operatorClass = await trigramOperatorClass(db);
    await sql`CREATE INDEX IF NOT EXISTS ${sql.id(name)} ON ${sql.table(index.table)} USING gin (${sql.ref(index.columns[0]!)} ${operatorClass})`.execute(db);
    return;
  }
  // A table rebuilt in the same migration has its declared indexes already.
  let builder = db.schema.createIndex(name).ifNotExists().on(index.table);
  if (index.unique) builder = builder.unique();
  if (index.hash && types.supportsHashIndexes) builder = builder.using('hash');
  builder = index.ignoreCase ? builder.expression(types.caseFolded(index.columns[0]!)) : builder.columns(index.columns as string[]);
  if (index.where) builder = builder.where(conditionSql(types, index.where) as Expression<SqlBool>);
  await builder.execute();
}

async function dropIndex(db: Db, types: SqlTypes, name: string, index: IndexState): Promise<void> {
  if (index.trigram && !types.supportsTrigramIndexes) return;
  await db.schema.dropIndex(name).ifExists().execute();
}

/**
 * Rebuilds `name` as `state` declares it, keeping the rows of the columns it still has, and the
 * indexes whose columns it still has (whichever history made them: an app indexes the framework's
 * `users`), as dropping a column does on PostgreSQL. Foreign keys are off meanwhile (outside a
 * transaction, as SQLite requires), so dropping the old table deletes nothing that references it.
 */
async function rebuildTable(db: Db, types: SqlTypes, name: string, state: SchemaState): Promise<void> {
  const table = state.tables[name];
  if (!table) throw new Error(`Cannot rebuild "${name}": the migration's state has no such table.`);
  const { rows } = await sql<{ name: string }>`SELECT name FROM pragma_table_info(${name})`.execute(db);
  const kept = rows.map((row) => row.name).filter((column) => column in table.columns);
  const { rows: indexes } = await sql<{ sql: string; columns: string }>`
    SELECT m.sql, (SELECT json_group_array(i.name) FROM pragma_index_info(m.name) i) AS columns
    FROM sqlite_master m WHERE m.type = 'index' AND m.tbl_name = ${name} AND m.sql IS NOT NULL`.execute(db);
  const surviving = indexes.filter((index) => (JSON.parse(index.columns) as (string | null)[]).every((column) => column !== null && column in table.columns));
  const rebuilt = `${name}__rebuilt`;
  await sql`PRAGMA foreign_keys = OFF`.execute(db);
  try {
    await createTable(db, types, rebuilt, table);
    const columns = sql.join(kept.map((column) => sql.ref(column)));
    try {
      await sql`INSERT INTO ${sql.table(rebuilt)} (${columns}) SELECT ${columns} FROM ${sql.table(name)}`.execute(db);
    } catch (error) {
      // A row the new table refuses (a NULL where NOT NULL comes, a check it breaks): the old table stays as it was.
      await db.schema.dropTable(rebuilt).execute();
      throw error;
    }
    await db.schema.dropTable(name).execute();
    await db.schema.alterTable(rebuilt).renameTo(name).execute();
    for (const index of surviving) await sql.raw(index.sql).execute(db);
    const { rows: broken } = await sql`PRAGMA foreign_key_check`.execute(db);
    if (broken.length > 0) throw new Error(`Rebuilding "${name}" left ${broken.length} row(s) whose foreign key names no row.`);
  } finally {
    await sql`PRAGMA foreign_keys = ON`.execute(db);
  }
}

/** Whether a column can be added with plain ALTER TABLE on a dialect that alters nothing in place. */
const isPlain = (column: Column): boolean => !column.unique && !column.references;

async function alterInPlace(db: Db, types: SqlTypes, table: string, column: string, from: Column, to: Column): Promise<void> {
  const alter = () => db.schema.alterTable(table);
  if (sqlType(types, from) !== sqlType(types, to)) {
    const type = sqlType(types, to);
    await alter().alterColumn(column, (change) => change.setDataType(sql`${sql.raw(type)} USING ${sql.ref(column)}::${sql.raw(type)}`)).execute();
  }
  if (from.nullable !== to.nullable) await alter().alterColumn(column, (change) => (to.nullable ? change.dropNotNull() : change.setNotNull())).execute();
  if (from.default !== to.default) {
    const fallback = to.default;
    await alter().alterColumn(column, (change) => (fallback === undefined ? change.dropDefault() : change.setDefault(literal(types, to, fallback)))).execute();
  }
  if (Boolean(from.unique) !== Boolean(to.unique)) {
    const name = `${table}_${column}_key`;
    await (to.unique ? alter().addUniqueConstraint(name, [column]) : alter().dropConstraint(name)).execute();
  }
  if (JSON.stringify(from.references) !== JSON.stringify(to.references)) {
    const name = `${table}_${column}_fkey`;
    if (from.references) await alter().dropConstraint(name).execute();
    const target = to.references;
    if (target) await alter().addForeignKeyConstraint(name, [column], target.table, ['id'], (key) => key.onDelete(target.onDelete)).execute();
  }
}

async function apply(db: Db, types: SqlTypes, operation: Operation): Promise<void> {
  switch (operation.op) {
    case 'createTable':
      return createTable(db, types, operation.table, operation);
    case 'dropTable':
      return db.schema.dropTable(operation.table).execute();
    case 'addColumn': {
      const { table, column, definition } = operation;
      return db.schema.alterTable(table).addColumn(column, sql.raw(sqlType(types, definition)), constraints(types, definition, false)).execute();
    }
    case 'dropColumn':
      return db.schema.alterTable(operation.table).dropColumn(operation.column).execute();
    case 'alterColumn':
      return alterInPlace(db, types, operation.table, operation.column, operation.from, operation.to);
    case 'renameColumn':
      return db.schema.alterTable(operation.table).renameColumn(operation.from, operation.to).execute();
    case 'addCheck':
      return db.schema.alterTable(operation.table).addCheckConstraint(operation.name, conditionSql(types, operation.check)).execute();
    case 'dropCheck':
      return db.schema.alterTable(operation.table).dropConstraint(operation.name).execute();
    case 'createIndex':
      return createIndex(db, types, operation.name, operation.index);
    case 'dropIndex':
      return dropIndex(db, types, operation.name, operation.index);
    case 'run':
      return operation.step(db, types);
  }
}

type TableChange = Extract<Operation, { op: 'addColumn' | 'dropColumn' | 'alterColumn' | 'addCheck' | 'dropCheck' }>;
const isTableChange = (operation: Operation): operation is TableChange =>
  ['addColumn', 'dropColumn', 'alterColumn', 'addCheck', 'dropCheck'].includes(operation.op);

/**
 * Where the dialect cannot alter columns in place: the tables whose changes need a rebuild (any
 * but adding a plain column). Each is rebuilt once, from the migration's state, where its last
 * change stands: that one rebuild makes all of them.
 */
function rebuilds(operations: readonly Operation[]): Map<string, TableChange> {
  const tables = new Set(
    operations.filter(isTableChange).filter((operation) => operation.op !== 'addColumn' || !isPlain(operation.definition)).map(({ table }) => table),
  );
  const last = new Map<string, TableChange>();
  for (const operation of operations) if (isTableChange(operation) && tables.has(operation.table)) last.set(operation.table, operation);
  return last;
}

/**
 * Runs a migration's operations in order; `before` is the state the previous migrations recorded,
 * `baseline` others' (the framework's), whose later columns a rebuilt table keeps.
 */
export async function applyMigration(db: Db, capabilities: DialectCapabilities, migration: Migration, before: SchemaState, baseline?: SchemaState): Promise<void> {
  const { types } = capabilities;
  const recorded = migration.state ?? before;
  const state = baseline ? withInheritedColumns(recorded, baseline) : recorded;
  const rebuilt = types.altersColumnsInPlace ? new Map<string, TableChange>() : rebuilds(migration.operations);
  for (const operation of migration.operations) {
    if (isTableChange(operation) && rebuilt.has(operation.table)) {
      if (rebuilt.get(operation.table) === operation) await rebuildTable(db, types, operation.table, state);
    } else {
      await apply(db, types, operation);
    }
  }
}
