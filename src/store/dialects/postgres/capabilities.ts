/** PostgreSQL's answers to the store's questions (see capabilities.ts). */
import { sql, type SqlBool } from 'kysely';
import type { OnDelete } from '../../../core/schema.js';
import type { DialectCapabilities, LiveColumn } from '../capabilities.js';
import { postgresMovedRows } from './moved-rows-view.js';

interface ColumnRow {
  table: string;
  column: string;
  udt_name: string;
  length: number | null;
  precision: number | null;
  digits: number | null;
  places: number | null;
  nullable: string;
  default: string | null;
  unique: boolean;
  referenced: string | null;
  on_delete: string | null;
}

/** information_schema's type names → the SQL names `columnTypes` uses. */
const TYPE_NAMES: Readonly<Record<string, string>> = { int8: 'bigint', int4: 'integer', bool: 'boolean', float8: 'double precision' };
/** pg_constraint.confdeltype → the action. */
const ON_DELETE: Readonly<Record<string, OnDelete | 'no action'>> = { c: 'cascade', r: 'restrict', n: 'set null', a: 'no action' };

function typeName({ udt_name, length, precision, digits, places }: ColumnRow): string {
  if (udt_name === 'numeric' && digits !== null) return `numeric(${digits},${places ?? 0})`;
  if (udt_name === 'varchar' && length !== null) return `varchar(${length})`;
  if (udt_name === 'timestamptz' && precision !== null) return `timestamptz(${precision})`;
  return TYPE_NAMES[udt_name] ?? udt_name;
}

/** A column_default (`''::character varying`, `0`, `true`) → the value; a sequence's or a function's → undefined. */
function defaultValue(text: string | null): LiveColumn['default'] {
  if (text === null) return undefined;
  const quoted = /^'((?:[^']|'')*)'(?:::[\w\s]+)?$/.exec(text);
  if (quoted) return quoted[1]!.replaceAll("''", "'");
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  return undefined;
}

/**
 * The tables in an order a DELETE of each can go in: every table before those it refers to (a table
 * referring to itself is emptied by one statement). Undefined when tables refer to each other in a cycle.
 */
function referringFirst(refers: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const order: string[] = [];
  // Each round places the tables no table still unplaced refers to.
  for (let unplaced = [...refers.keys()]; unplaced.length > 0; ) {
    const referred = new Set(unplaced.flatMap((table) => refers.get(table)!.filter((target) => target !== table)));
    const ready = unplaced.filter((table) => !referred.has(table));
    if (ready.length === 0) return undefined;
    order.push(...ready);
    unplaced = unplaced.filter((table) => referred.has(table));
  }
  return order;
}

export const postgresCapabilities: DialectCapabilities = {
  name: 'postgres',
  types: {
    idColumn: (column) => column.primaryKey().generatedByDefaultAsIdentity(),
    booleanValue: (value) => value,
    caseFolded: (column) => sql`lower(${sql.ref(column)})`,
    supportsTrigramIndexes: true,
    supportsHashIndexes: true,
    columnTypes: {
      id: 'bigint',
      bigint: 'bigint',
      integer: 'integer',
      varchar: 'varchar',
      text: 'text',
      boolean: 'boolean',
      timestamp: 'timestamptz(3)',
      date: 'date',
      time: 'time',
      duration: 'interval',
      decimal: 'numeric',
      float: 'double precision',
      uuid: 'uuid',
      json: 'jsonb',
    },
    altersColumnsInPlace: true,
    movedRows: postgresMovedRows,
  },
  mergesRoundTrips: true,
  notifies: true,
  supportsModifyingCte: true,
  supportsRowLocks: true,
  // The int8 type parser (database.ts) reads text beyond 2^53 already.
  exactInteger: (column) => sql`${column}`,
  exactArithmetic: () => sql<SqlBool>`true`,
  decimalSum: (factors) => sql`sum(${sql.join(factors, sql` * `)})`,
  rowVersion: (table) => sql<string>`${sql.ref(`${table}.xmin`)}::text`,
  estimatesRowCounts: true,
  hasSchemas: true,
  // Scoped to the transaction, not the session: behind a transaction pooler a session's lock can be
  // taken on one server connection and released (in vain) on another. The key is the one Kysely's
  // Migrator locks (a session lock, which earlier releases took), so the two wait for each other.
  migrationLock: sql`SELECT pg_advisory_xact_lock(3853314791062309107)`,
  // Transaction-scoped for the same reason; hashtextextended gives the key's 64 bits of the lock space.
  namedLock: (key) => sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`,
  async liveColumns(db) {
    const { rows } = await sql<ColumnRow>`
      SELECT c.table_name AS "table", c.column_name AS "column", c.udt_name, c.character_maximum_length AS length,
             c.datetime_precision AS precision,
             c.numeric_precision AS digits, c.numeric_scale AS places, c.is_nullable AS nullable, c.column_default AS "default",
             EXISTS (SELECT 1 FROM pg_constraint u WHERE u.conrelid = a.attrelid AND u.contype = 'u' AND u.conkey = ARRAY[a.attnum]) AS "unique",
             f.confrelid::regclass::text AS referenced, f.confdeltype::text AS on_delete
      FROM information_schema.columns c
      JOIN pg_attribute a ON a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass AND a.attname = c.column_name
      LEFT JOIN pg_constraint f ON f.conrelid = a.attrelid AND f.contype = 'f' AND f.conkey = ARRAY[a.attnum]
      WHERE c.table_schema = current_schema()`.execute(db);
    return rows.map((row) => ({
      table: row.table,
      column: row.column,
      type: typeName(row),
      nullable: row.nullable === 'YES',
      default: defaultValue(row.default),
      unique: row.unique,
      ...(row.referenced && { references: { table: row.referenced.replace(/^.*\./, '').replaceAll('"', ''), onDelete: ON_DELETE[row.on_delete!]! } }),
    }));
  },
  async liveIndexes(db) {
    const { rows } = await sql<{ table: string; name: string }>`
      SELECT i.tablename AS "table", i.indexname AS name FROM pg_indexes i
      WHERE i.schemaname = current_schema()
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = format('%I.%I', i.schemaname, i.indexname)::regclass AND k.contype IN ('p', 'u'))`.execute(db);
    return rows;
  },
  async liveChecks(db) {
    const { rows } = await sql<{ table: string; name: string }>`
      SELECT t.relname AS "table", c.conname AS name FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
      WHERE c.contype = 'c' AND t.relnamespace = current_schema()::regnamespace`.execute(db);
    return rows;
  },
  // DELETE, not TRUNCATE: TRUNCATE gives each table new files, which costs far more than deleting
  // the few rows a test leaves (docs/performance.md). Foreign keys here are checked at each
  // statement's end, so the tables go those that refer to others first; tables that refer to each
  // other in a cycle are emptied together by TRUNCATE, which alone can. The deletes and the
  // sequences' restart are one DO block: one round trip, one transaction.
  async emptyTables(db, kept) {
    const { rows } = await sql<{ table: string; refers: string[] }>`
      SELECT t.relname AS "table", ARRAY(SELECT r.relname::text FROM pg_constraint c JOIN pg_class r ON r.oid = c.confrelid WHERE c.conrelid = t.oid AND c.contype = 'f') AS refers
      FROM pg_class t
      WHERE t.relkind IN ('r', 'p') AND t.relnamespace = current_schema()::regnamespace AND NOT t.relname = ANY(${kept})`.execute(db);
    const tables = rows.map(({ table }) => table);
    if (tables.length === 0) return;
    const order = referringFirst(new Map(rows.map(({ table, refers }) => [table, refers])));
    if (!order) {
      await sql`TRUNCATE ${sql.join(tables.map((table) => sql.table(table)))} RESTART IDENTITY CASCADE`.execute(db);
      return;
    }
    // Names from the catalogue, quoted: a DO block takes no parameters. Each identity (or serial)
    // column's sequence goes back to its start, as RESTART IDENTITY does.
    await sql`DO $restfold$ BEGIN
      ${sql.join(order.map((table) => sql`DELETE FROM ${sql.table(table)};`), sql` `)}
      PERFORM setval(s.seqrelid, s.seqstart, false) FROM pg_sequence s
        JOIN pg_depend d ON d.objid = s.seqrelid AND d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
        JOIN pg_class t ON t.oid = d.refobjid
        WHERE t.relnamespace = current_schema()::regnamespace AND t.relname IN (${sql.join(tables.map((table) => sql.lit(table)))});
    END $restfold$`.execute(db);
  },
};
