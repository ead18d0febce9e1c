/**
 * PostgreSQL introspection limited to the connection's current schema, which
 * is where our tables live. Kysely's own introspector (used by the Migrator
 * to find its tables) reads every table of every schema, calling
 * has_schema_privilege() by name. That is slow in a database with many
 * schemas, and it fails outright ("schema … does not exist") when another
 * session drops a schema while the query runs.
 */
import { PostgresDialect, sql, type DatabaseIntrospector, type Kysely, type TableMetadata } from 'kysely';

interface ColumnRow {
  table_name: string;
  table_type: string;
  column_name: string;
  udt_name: string;
  udt_schema: string;
  is_nullable: string;
  column_default: string | null;
  is_identity: string;
}

function currentSchemaIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
  const getTables = async (): Promise<TableMetadata[]> => {
    const { rows } = await sql<ColumnRow>`
      SELECT c.table_name, t.table_type, c.column_name, c.udt_name, c.udt_schema, c.is_nullable, c.column_default, c.is_identity
      FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema()
      ORDER BY c.table_name, c.ordinal_position`.execute(db);
    const schema = await currentSchema(db);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      let table = tables.get(row.table_name);
      if (!table) {
        table = { name: row.table_name, schema, isView: row.table_type === 'VIEW', columns: [] };
        tables.set(row.table_name, table);
      }
      const autoIncrementing = row.is_identity === 'YES' || (row.column_default ?? '').startsWith('nextval(');
      table.columns.push({
        name: row.column_name,
        dataType: row.udt_name,
        dataTypeSchema: row.udt_schema,
        isNullable: row.is_nullable === 'YES',
        hasDefaultValue: row.column_default !== null || autoIncrementing,
        isAutoIncrementing: autoIncrementing,
      });
    }
    return [...tables.values()];
  };
  return {
    getSchemas: async () => {
      const { rows } = await sql<{ name: string }>`SELECT nspname AS name FROM pg_catalog.pg_namespace`.execute(db);
      return rows;
    },
    getTables,
    getMetadata: async () => ({ tables: await getTables() }),
  };
}

/** The schema unqualified names resolve to (the first on search_path that exists). */
export async function currentSchema<DB>(db: Kysely<DB>): Promise<string> {
  const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db);
  return rows[0]!.schema;
}

/** Kysely's PostgreSQL dialect with introspection limited to the current schema. */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return currentSchemaIntrospector(db);
  }
}
