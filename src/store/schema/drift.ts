/**
 * The live database against the declarations: each declared table, column, index and check must exist,
 * each column with the declared type, nullability, default, uniqueness and foreign key. What the
 * database has beyond them is its own affair.
 */
import type { Column, SchemaState } from '../../core/schema.js';
import { storeDatabase, type Database } from '../connection/database.js';
import type { LiveColumn, SqlTypes } from '../dialects/capabilities.js';
import { sqlType } from './compile.js';

/** A column's facts as introspection reads them back from what `compile.ts` made of `column`. */
export function expectedColumn(types: SqlTypes, table: string, name: string, column: Column): LiveColumn {
  const { default: fallback, references } = column;
  return {
    table,
    column: name,
    type: sqlType(types, column),
    nullable: column.nullable,
    ...(fallback !== undefined && { default: column.type === 'boolean' ? types.booleanValue(Boolean(fallback)) : fallback }),
    unique: column.unique ?? false,
    ...(references && { references }),
  };
}

const described = (value: unknown): string => (value === undefined ? 'none' : JSON.stringify(value));

const NUMERIC_TYPES: ReadonlySet<Column['type']> = new Set(['id', 'integer', 'bigint', 'decimal', 'float']);
const NUMBER_TEXT = /^-?\d+(?:\.\d+)?$/;
const numberOf = (value: LiveColumn['default']): number => (typeof value === 'number' ? value : typeof value === 'string' && NUMBER_TEXT.test(value) ? Number(value) : NaN);

/**
 * Whether a live default is the declared one. A number column's compare as numbers, however the
 * database spells them: PostgreSQL keeps a decimal's `'1.50'` as `1.50` and `'0.00'` as `0.00`
 * (numbers, read back as 1.5 and 0), and a negative one as text cast to the type (`'-1'::integer`).
 */
function sameDefault(type: Column['type'], live: LiveColumn['default'], expected: LiveColumn['default']): boolean {
  return live === expected || (NUMERIC_TYPES.has(type) && numberOf(live) === numberOf(expected));
}

/** How a live column differs from the expected one (declared as `type`), naming table and column; a key's nullability is the key's affair. */
function columnDifferences(type: Column['type'], expected: LiveColumn, live: LiveColumn, isKey: boolean): string[] {
  const where = `column "${expected.table}.${expected.column}"`;
  const differences: string[] = [];
  if (live.type !== expected.type) differences.push(`${where} is ${live.type}, declared ${expected.type}`);
  if (!isKey && live.nullable !== expected.nullable) {
    differences.push(`${where} is ${live.nullable ? 'nullable' : 'NOT NULL'}, declared ${expected.nullable ? 'nullable' : 'NOT NULL'}`);
  }
  if (!sameDefault(type, live.default, expected.default)) differences.push(`${where} defaults to ${described(live.default)}, declared ${described(expected.default)}`);
  if (live.unique !== expected.unique) differences.push(`${where} is ${live.unique ? '' : 'not '}unique, declared ${expected.unique ? '' : 'not '}unique`);
  if (described(live.references) !== described(expected.references)) {
    differences.push(`${where} references ${described(live.references)}, declared ${described(expected.references)}`);
  }
  return differences;
}

/** One line per difference, naming table and column (or index); empty when the database matches. */
export async function schemaDifferences(database: Database, state: SchemaState): Promise<string[]> {
  const { capabilities, db } = storeDatabase(database);
  const live = new Map<string, Map<string, LiveColumn>>();
  for (const column of await capabilities.liveColumns(db)) {
    if (!live.has(column.table)) live.set(column.table, new Map());
    live.get(column.table)!.set(column.column, column);
  }
  const differences: string[] = [];
  for (const [table, declared] of Object.entries(state.tables)) {
    const columns = live.get(table);
    if (!columns) {
      differences.push(`table "${table}" is missing`);
      continue;
    }
    for (const [name, column] of Object.entries(declared.columns)) {
      const found = columns.get(name);
      if (!found) differences.push(`column "${table}.${name}" is missing`);
      else differences.push(...columnDifferences(column.type, expectedColumn(capabilities.types, table, name, column), found, declared.primaryKey.includes(name)));
    }
  }
  const indexes = new Set((await capabilities.liveIndexes(db)).map((index) => index.name));
  for (const [name, index] of Object.entries(state.indexes)) {
    if (index.trigram && !capabilities.types.supportsTrigramIndexes) continue;
    if (live.has(index.table) && !indexes.has(name)) differences.push(`index "${name}" on "${index.table}" is missing`);
  }
  const checks = new Set((await capabilities.liveChecks(db)).map(({ table, name }) => `${table}.${name}`));
  for (const [table, declared] of Object.entries(state.tables)) {
    for (const name of Object.keys(declared.checks ?? {})) {
      if (live.has(table) && !checks.has(`${table}.${name}`)) differences.push(`check "${name}" on "${table}" is missing`);
    }
  }
  return differences;
}
