/** SQLite's answers to the store's questions (see capabilities.ts). */
import { sql, type SqlBool } from 'kysely';
import type { OnDelete } from '../../../core/schema.js';
import type { DialectCapabilities, LiveColumn } from '../capabilities.js';
import { sqliteMovedRows } from './moved-rows-mirror.js';

interface ColumnRow {
  table: string;
  column: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  unique: number;
  referenced: string | null;
  on_delete: string | null;
}

/** A dflt_value (`''`, `0`, `'text'`) → the value. */
function defaultValue(text: string | null): LiveColumn['default'] {
  if (text === null) return undefined;
  const quoted = /^'((?:[^']|'')*)'$/.exec(text);
  if (quoted) return quoted[1]!.replaceAll("''", "'");
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : undefined;
}

export const sqliteCapabilities: DialectCapabilities = {
  name: 'sqlite',
  types: {
    idColumn: (column) => column.primaryKey().autoIncrement(),
    booleanValue: (value) => (value ? 1 : 0),
    caseFolded: (column) => sql`${sql.ref(column)} collate nocase`,
    // No pattern index: a search is a scan (docs/performance.md).
    supportsTrigramIndexes: false,
    supportsHashIndexes: false,
    // Timestamps are Date#toISOString text, booleans 1 or 0. Dates and times are ISO text, which
    // sorts as they do; a duration is its seconds (real). A decimal column has NUMERIC affinity: each
    // value is held as a double, bound text is compared numerically, and a double keeps every decimal
    // of at most 15 significant digits apart (fields.decimal allows no more), so comparisons and
    // ordering are exact and rendering to the declared places gives the stored digits back.
    columnTypes: {
      id: 'integer',
      bigint: 'integer',
      integer: 'integer',
      varchar: 'varchar',
      text: 'text',
      boolean: 'integer',
      timestamp: 'text',
      date: 'text',
      time: 'text',
      duration: 'real',
      decimal: 'numeric',
      float: 'real',
      uuid: 'text', // its lower-case text
      json: 'text',
    },
    altersColumnsInPlace: false,
    movedRows: sqliteMovedRows,
  },
  mergesRoundTrips: false,
  notifies: false,
  supportsModifyingCte: false,
  supportsRowLocks: false,
  // In-process: a transaction is no round trip, and SQLite's already excludes other writers.
  rowVersion: undefined,
  // better-sqlite3 reads every integer as a double (unless a statement asks for BigInts, which would
  // make every integer of its rows one): beyond 2^53 the column's own text is read instead, and as
  // SQLite's values are typed one by one, the rest stay integers with no work per row in JavaScript.
  exactArithmetic: (value) => sql<SqlBool>`typeof(${value}) = 'integer'`,
  // Registered by the store (store/sqlite-functions.ts): each row's factors multiplied and added up as decimals.
  decimalSum: (factors) => sql`decimal_sum(${sql.join(factors)})`,
  exactInteger: (column) =>
    sql`case when ${column} between ${sql.lit(Number.MIN_SAFE_INTEGER)} and ${sql.lit(Number.MAX_SAFE_INTEGER)} then ${column} else cast(${column} as text) end`,
  estimatesRowCounts: false,
  hasSchemas: false,
  migrationLock: undefined,
  namedLock: undefined,
  async liveColumns(db) {
    const { rows } = await sql<ColumnRow>`
      SELECT m.name AS "table", p.name AS "column", p.type AS type, p."notnull" AS "notnull", p.dflt_value,
             EXISTS (SELECT 1 FROM pragma_index_list(m.name) l WHERE l."unique" = 1 AND l.origin = 'u'
                       AND (SELECT count(*) FROM pragma_index_info(l.name)) = 1
                       AND (SELECT name FROM pragma_index_info(l.name)) = p.name) AS "unique",
             f."table" AS referenced, f.on_delete
      FROM sqlite_master m
      JOIN pragma_table_info(m.name) p
      LEFT JOIN pragma_foreign_key_list(m.name) f ON f."from" = p.name
      WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`.execute(db);
    return rows.map((row) => ({
      table: row.table,
      column: row.column,
      type: row.type.toLowerCase(),
      nullable: row.notnull === 0,
      default: defaultValue(row.dflt_value),
      unique: row.unique === 1,
      ...(row.referenced && { references: { table: row.referenced, onDelete: row.on_delete!.toLowerCase() as OnDelete | 'no action' } }),
    }));
  },
  async liveIndexes(db) {
    const { rows } = await sql<{ table: string; name: string }>`
      SELECT tbl_name AS "table", name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`.execute(db);
    return rows;
  },
  // SQLite keeps no catalogue of checks: they are read from each table's CREATE TABLE, as compile.ts writes them.
  async liveChecks(db) {
    const { rows } = await sql<{ table: string; sql: string }>`SELECT name AS "table", sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL`.execute(db);
    return rows.flatMap(({ table, sql: definition }) => [...definition.matchAll(/\bconstraint\s+"?(\w+)"?\s+check\b/gi)].map((match) => ({ table, name: match[1]! })));
  },
  // In one transaction whose foreign keys are checked at its end only, when every row is gone: any order works.
  async emptyTables(db, kept) {
    const { rows } = await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`.execute(db);
    const tables = rows.map(({ name }) => name).filter((table) => !kept.includes(table));
    await db.transaction().execute(async (transaction) => {
      await sql`PRAGMA defer_foreign_keys = ON`.execute(transaction);
      for (const table of tables) await sql`DELETE FROM ${sql.table(table)}`.execute(transaction);
      const counters = await sql<{ found: number }>`SELECT count(*) AS found FROM sqlite_master WHERE name = 'sqlite_sequence'`.execute(transaction);
      if (counters.rows[0]?.found) await sql`DELETE FROM sqlite_sequence`.execute(transaction);
    });
  },
};
