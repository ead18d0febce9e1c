/**
 * The live database against the declarations: each declared table and column must exist, with the
 * declared type and nullability. What the database has beyond them is its own affair.
 */
import type { SchemaState } from '../../core/schema.js';
import type { Database } from '../database.js';
import { sqlType } from './compile.js';

/** One line per difference, naming table and column; empty when the database matches. */
export async function schemaDifferences(database: Database, state: SchemaState): Promise<string[]> {
  const { types } = database.capabilities;
  const live = new Map<string, Map<string, { type: string; nullable: boolean }>>();
  for (const { table, column, type, nullable } of await database.capabilities.liveColumns(database.db)) {
    if (!live.has(table)) live.set(table, new Map());
    live.get(table)!.set(column, { type, nullable });
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
      const expected = sqlType(types, column);
      if (!found) differences.push(`column "${table}.${name}" is missing`);
      else if (found.type !== expected) differences.push(`column "${table}.${name}" is ${found.type}, declared ${expected}`);
      // A key's nullability is the key's affair (SQLite reports its key columns as nullable).
      else if (!declared.primaryKey.includes(name) && found.nullable !== column.nullable) {
        differences.push(`column "${table}.${name}" is ${found.nullable ? 'nullable' : 'NOT NULL'}, declared ${column.nullable ? 'nullable' : 'NOT NULL'}`);
      }
    }
  }
  return differences;
}
