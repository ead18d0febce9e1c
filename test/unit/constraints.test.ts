/**
 * Declared constraints as migrations: the operations makemigrations diffs from the states, the
 * files it writes, and the SQL a condition compiles to on each dialect (constants as quoted literals).
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import { fields, model } from '../../src/framework/index.js';
import { tableIndexes, tableState } from '../../src/core/model.js';
import { constraintRefusal } from '../../src/core/constraints.js';
import type { ConstraintFacts, RowCondition, SchemaState } from '../../src/core/schema.js';
import { postgresCapabilities } from '../../src/store/dialects/postgres/capabilities.js';
import { sqliteCapabilities } from '../../src/store/dialects/sqlite/capabilities.js';
import { conditionSql } from '../../src/store/schema/condition.js';
import { describe as described, diffStates } from '../../src/store/schema/diff.js';
import { renderMigration } from '../../src/store/schema/render.js';

const compilers = {
  postgres: new Kysely<unknown>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }),
  sqlite: new Kysely<unknown>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  }),
};
const compiled = (dialect: 'postgres' | 'sqlite', condition: RowCondition) => {
  const query = conditionSql((dialect === 'postgres' ? postgresCapabilities : sqliteCapabilities).types, condition).compile(compilers[dialect]);
  expect(query.parameters).toEqual([]);
  return query.sql;
};

const productFields = { id: fields.id(), sku: fields.string({ maxLength: 20 }), status: fields.string({ maxLength: 10 }), stock: fields.integer(), hidden: fields.boolean() };
const stateOf = (constraints: Parameters<typeof model>[2]): SchemaState => {
  const declared = model('products', productFields, constraints);
  return { tables: { products: tableState(declared) }, indexes: tableIndexes(declared) };
};

describe('a row condition in DDL', () => {
  it('compiles lookups, negation, alternatives and field comparisons with no parameters', () => {
    const condition: RowCondition = { stock__gte: 0, or: [{ status__in: ['a', 'b'] }, { sku__isnull: true }], not: { status: 'retired' }, sku__lt: { field: 'status' } };
    expect(compiled('postgres', condition)).toBe(`("stock" >= 0 and (("status" in ('a', 'b')) or ("sku" is null)) and not ("status" = 'retired') and "sku" < "status")`);
    expect(compiled('sqlite', { hidden: true, status: null })).toBe(`("hidden" = 1 and "status" is null)`);
    expect(compiled('postgres', { hidden: true, status__isnull: false })).toBe(`("hidden" = true and "status" is not null)`);
  });

  it('writes a constant as a literal, quotes doubled, never as SQL', () => {
    expect(compiled('postgres', { status: "x'); drop table products; --" })).toBe(`("status" = 'x''); drop table products; --')`);
  });
});

describe('constraints in makemigrations', () => {
  const stock = { name: 'products_stock_not_negative', check: { stock__gte: 0 }, field: 'stock', message: 'No negative stock.' };
  const liveSku = { name: 'products_live_sku_key', unique: ['sku'], condition: { not: { status: 'retired' } } };

  it('creates a table with its checks and a partial unique index, and writes them into the file', () => {
    const operations = diffStates({ tables: {}, indexes: {} }, stateOf({ constraints: [stock, liveSku] }));
    expect(operations).toEqual([
      { op: 'createTable', table: 'products', columns: expect.any(Object), primaryKey: ['id'], checks: { products_stock_not_negative: { stock__gte: 0 } } },
      { op: 'createIndex', name: 'products_live_sku_key', index: { table: 'products', columns: ['sku'], unique: true, where: { not: { status: 'retired' } } } },
    ]);
    const file = renderMigration({ importFrom: 'restfold', operations, state: stateOf({ constraints: [stock, liveSku] }), generatedBy: 'test' });
    expect(file).toContain("['id'], { products_stock_not_negative: { stock__gte: 0 } }),");
    expect(file).toContain("op.createIndex('products_live_sku_key', { table: 'products', columns: ['sku'], unique: true, where: { not: { status: 'retired' } } }),");
  });

  it('adds, drops and changes checks and conditions, and finds nothing when none changed', () => {
    const before = stateOf({ constraints: [stock, liveSku] });
    expect(diffStates(before, stateOf({ constraints: [stock, liveSku] }))).toEqual([]);
    const changed = stateOf({ constraints: [{ ...stock, check: { stock__gt: -1 } }, { ...liveSku, condition: { status: 'active' } }] });
    expect(diffStates(before, changed).map(described)).toEqual([
      'drop index products_live_sku_key on products',
      'drop check products_stock_not_negative on products',
      'add check products_stock_not_negative on products',
      'create index products_live_sku_key on products',
    ]);
    expect(diffStates(before, stateOf({ constraints: [liveSku] })).map(described)).toEqual(['drop check products_stock_not_negative on products']);
    // A message or the field it is reported under is no part of the schema.
    expect(diffStates(before, stateOf({ constraints: [{ ...stock, message: 'Other.' }, liveSku] }))).toEqual([]);
  });

  it('renames a column inside the conditions that name it', () => {
    const before = stateOf({ constraints: [{ ...stock, check: { stock__lte: { field: 'id' }, not: { stock: 5 } } }, liveSku] });
    const renamedFields = { ...productFields, state: productFields.status } as Record<string, (typeof productFields)['status']>;
    delete renamedFields.status;
    const declared = model('products', renamedFields, { constraints: [{ ...stock, check: { stock__lte: { field: 'id' }, not: { stock: 5 } } }, { ...liveSku, condition: { not: { state: 'retired' } } }] });
    const after: SchemaState = { tables: { products: tableState(declared) }, indexes: tableIndexes(declared) };
    expect(diffStates(before, after, { products: { status: 'state' } }).map(described)).toEqual(['rename column products.status to state']);
  });
});

describe('a broken constraint as a refusal', () => {
  const constraints: ConstraintFacts[] = [
    { name: 'products_stock_not_negative', check: { stock__gte: 0 }, field: 'stock', message: 'No negative stock.' },
    { name: 'products_live_sku_key', unique: ['sku'], condition: { hidden: false }, message: 'Taken.' },
    { name: 'products_plain', check: { stock__lt: 100 } },
  ];

  it('reports the declared message under the declared field, by name or (SQLite) by the unique clash columns', () => {
    expect(constraintRefusal(constraints, 'products_stock_not_negative', undefined)?.details).toEqual({ stock: ['No negative stock.'] });
    expect(constraintRefusal(constraints, undefined, ['sku'])?.details).toEqual({ sku: ['Taken.'] });
    expect(constraintRefusal(constraints, 'products_plain', undefined)?.details).toEqual({ non_field_errors: ['Constraint "products_plain" is violated.'] });
    // A clash of another unique constraint (a field's own, named by the database) is not a declared one's.
    expect(constraintRefusal(constraints, 'products_sku_key', ['sku'])).toBeUndefined();
  });
});
