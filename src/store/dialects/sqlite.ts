/** SQLite's answers to the store's questions (see capabilities.ts). */
import { sql } from 'kysely';
import type { DialectCapabilities } from './capabilities.js';

export const sqliteCapabilities: DialectCapabilities = {
  name: 'sqlite',
  types: {
    idColumn: (column) => column.primaryKey().autoIncrement(),
    booleanValue: (value) => (value ? 1 : 0),
    caseFolded: (column) => sql`${sql.ref(column)} collate nocase`,
    // No pattern index: a search is a scan (docs/performance.md).
    supportsTrigramIndexes: false,
    // Timestamps are Date#toISOString text, booleans 1 or 0.
    columnTypes: { id: 'integer', bigint: 'integer', integer: 'integer', varchar: 'varchar', text: 'text', boolean: 'integer', timestamp: 'text' },
    altersColumnsInPlace: false,
  },
  mergesRoundTrips: false,
  supportsModifyingCte: false,
  supportsRowLocks: false,
  estimatesRowCounts: false,
  hasSchemas: false,
  async liveColumns(db) {
    const { rows } = await sql<{ table: string; column: string; type: string; notnull: number }>`
      SELECT m.name AS "table", p.name AS "column", p.type AS type, p."notnull" AS "notnull"
      FROM sqlite_master m JOIN pragma_table_info(m.name) p
      WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`.execute(db);
    return rows.map((row) => ({ table: row.table, column: row.column, type: row.type.toLowerCase(), nullable: row.notnull === 0 }));
  },
};
