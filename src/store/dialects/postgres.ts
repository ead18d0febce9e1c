/** PostgreSQL's answers to the store's questions (see capabilities.ts). */
import { sql } from 'kysely';
import type { DialectCapabilities } from './capabilities.js';

interface ColumnRow {
  table: string;
  column: string;
  udt_name: string;
  length: number | null;
  precision: number | null;
  nullable: string;
}

/** information_schema's type names → the SQL names `columnTypes` uses. */
const TYPE_NAMES: Readonly<Record<string, string>> = { int8: 'bigint', int4: 'integer', bool: 'boolean' };

function typeName({ udt_name, length, precision }: ColumnRow): string {
  if (udt_name === 'varchar' && length !== null) return `varchar(${length})`;
  if (udt_name === 'timestamptz' && precision !== null) return `timestamptz(${precision})`;
  return TYPE_NAMES[udt_name] ?? udt_name;
}

export const postgresCapabilities: DialectCapabilities = {
  name: 'postgres',
  types: {
    idColumn: (column) => column.primaryKey().generatedByDefaultAsIdentity(),
    booleanValue: (value) => value,
    caseFolded: (column) => sql`lower(${sql.ref(column)})`,
    supportsTrigramIndexes: true,
    columnTypes: { id: 'bigint', bigint: 'bigint', integer: 'integer', varchar: 'varchar', text: 'text', boolean: 'boolean', timestamp: 'timestamptz(3)' },
    altersColumnsInPlace: true,
  },
  mergesRoundTrips: true,
  supportsModifyingCte: true,
  supportsRowLocks: true,
  estimatesRowCounts: true,
  hasSchemas: true,
  async liveColumns(db) {
    const { rows } = await sql<ColumnRow>`
      SELECT table_name AS "table", column_name AS "column", udt_name, character_maximum_length AS length,
             datetime_precision AS precision, is_nullable AS nullable
      FROM information_schema.columns WHERE table_schema = current_schema()`.execute(db);
    return rows.map((row) => ({ table: row.table, column: row.column, type: typeName(row), nullable: row.nullable === 'YES' }));
  },
};
