/**
 * The operations that lead from one schema state to another, as `makemigrations` writes them.
 * A rename is never guessed: a column missing on one side and new on the other is a drop and an
 * add unless `renames` says otherwise.
 */
import { renameInCondition } from '../../core/constraints.js';
import type { Column, IndexState, RowCondition, SchemaState, TableState } from '../../core/schema.js';
import { operations as op, type Operation } from './operations.js';

/** `table` → old column name → new column name. */
export type Renames = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** JSON with keys sorted, so facts compare whatever order they were written in. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : inner,
  );
const same = (a: unknown, b: unknown): boolean => canonical(a) === canonical(b);

function renamed(state: SchemaState, renames: Renames, target: SchemaState): { state: SchemaState; operations: Operation[] } {
  const operations: Operation[] = [];
  const tables: Record<string, TableState> = { ...state.tables };
  const indexes: Record<string, IndexState> = { ...state.indexes };
  for (const [table, columns] of Object.entries(renames)) {
    for (const [from, to] of Object.entries(columns)) {
      const current = tables[table];
      if (!current?.columns[from]) throw new Error(`--rename ${table}.${from}=${to}: the migrations have no column ${table}.${from}.`);
      if (!target.tables[table]?.columns[to]) throw new Error(`--rename ${table}.${from}=${to}: the declarations have no field ${table}.${to}.`);
      const entries = Object.entries(current.columns).map(([name, column]) => [name === from ? to : name, column] as const);
      const checks = current.checks && Object.fromEntries(Object.entries(current.checks).map(([name, check]) => [name, renameInCondition(check, from, to)]));
      tables[table] = { columns: Object.fromEntries(entries), primaryKey: current.primaryKey.map((name) => (name === from ? to : name)), ...(checks && { checks }) };
      for (const [name, index] of Object.entries(indexes)) {
        if (index.table !== table) continue;
        const columns = index.columns.map((column) => column.replace(/^(\w+)/, (word) => (word === from ? to : word)));
        indexes[name] = { ...index, columns, ...(index.where && { where: renameInCondition(index.where, from, to) }) };
      }
      operations.push(op.renameColumn(table, from, to));
    }
  }
  return { state: { tables, indexes }, operations };
}

/** Tables in an order where each comes after those it references (among `names`). */
function referencedFirst(names: readonly string[], tables: Readonly<Record<string, TableState>>): string[] {
  const ordered: string[] = [];
  const visit = (name: string, path: readonly string[]): void => {
    if (ordered.includes(name) || path.includes(name)) return;
    for (const column of Object.values(tables[name]!.columns)) {
      const target = column.references?.table;
      if (target && names.includes(target)) visit(target, [...path, name]);
    }
    ordered.push(name);
  };
  for (const name of names) visit(name, []);
  return ordered;
}

export function diffStates(before: SchemaState, after: SchemaState, renames: Renames = {}): Operation[] {
  const start = renamed(before, renames, after);
  const from = start.state;
  const operations = [...start.operations];
  const created = Object.keys(after.tables).filter((table) => !from.tables[table]);
  const dropped = Object.keys(from.tables).filter((table) => !after.tables[table]);
  const kept = Object.keys(after.tables).filter((table) => from.tables[table]);

  for (const [name, index] of Object.entries(from.indexes)) {
    if (dropped.includes(index.table)) continue;
    if (!same(after.indexes[name], index)) operations.push(op.dropIndex(name, index));
  }
  for (const table of referencedFirst(created, after.tables)) {
    const { columns, primaryKey, checks } = after.tables[table]!;
    operations.push(op.createTable(table, columns, primaryKey, checks));
  }
  for (const table of kept) {
    const old = from.tables[table]!;
    const next = after.tables[table]!;
    if (!same(old.primaryKey, next.primaryKey)) {
      throw new Error(`${table}: its primary key changes (${old.primaryKey.join(', ')} → ${next.primaryKey.join(', ')}); write that migration by hand.`);
    }
    const columns: [string, Column | undefined, Column | undefined][] = [
      ...Object.entries(next.columns).map(([name, column]) => [name, old.columns[name], column] as [string, Column | undefined, Column]),
      ...Object.entries(old.columns).filter(([name]) => !next.columns[name]).map(([name, column]) => [name, column, undefined] as [string, Column, undefined]),
    ];
    const checks = (state: TableState): Readonly<Record<string, RowCondition>> => state.checks ?? {};
    // A check is dropped before the columns it names go, and added once they are there.
    for (const [name, check] of Object.entries(checks(old))) if (!same(checks(next)[name], check)) operations.push(op.dropCheck(table, name));
    for (const [name, was, is] of columns) {
      if (!was) operations.push(op.addColumn(table, name, is!));
      else if (!is) operations.push(op.dropColumn(table, name));
      else if (!same(was, is)) operations.push(op.alterColumn(table, name, was, is));
    }
    for (const [name, check] of Object.entries(checks(next))) if (!same(checks(old)[name], check)) operations.push(op.addCheck(table, name, check));
  }
  for (const table of referencedFirst(dropped, from.tables).reverse()) operations.push(op.dropTable(table));
  for (const [name, index] of Object.entries(after.indexes)) {
    if (!same(from.indexes[name], index)) operations.push(op.createIndex(name, index));
  }
  return operations;
}

/** One line per operation, for `makemigrations --check` and the file's name. */
export function describe(operation: Operation): string {
  switch (operation.op) {
    case 'createTable':
      return `create table ${operation.table}`;
    case 'dropTable':
      return `drop table ${operation.table}`;
    case 'addColumn':
      return `add column ${operation.table}.${operation.column}`;
    case 'dropColumn':
      return `drop column ${operation.table}.${operation.column}`;
    case 'alterColumn':
      return `alter column ${operation.table}.${operation.column}`;
    case 'renameColumn':
      return `rename column ${operation.table}.${operation.from} to ${operation.to}`;
    case 'addCheck':
      return `add check ${operation.name} on ${operation.table}`;
    case 'dropCheck':
      return `drop check ${operation.name} on ${operation.table}`;
    case 'createIndex':
      return `create index ${operation.name} on ${operation.index.table}`;
    case 'dropIndex':
      return `drop index ${operation.name} on ${operation.index.table}`;
    case 'run':
      return 'run a hand-written step';
  }
}

/** Columns dropped and added in the same table: candidates for a rename, which only the user may confirm. */
export function renameCandidates(operations: readonly Operation[]): { table: string; from: string; to: string }[] {
  const candidates: { table: string; from: string; to: string }[] = [];
  for (const drop of operations) {
    if (drop.op !== 'dropColumn') continue;
    for (const add of operations) {
      if (add.op === 'addColumn' && add.table === drop.table) candidates.push({ table: drop.table, from: drop.column, to: add.column });
    }
  }
  return candidates;
}
