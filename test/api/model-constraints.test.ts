/**
 * Constraints a model declares (checks over its row, unique constraints with a condition) are made
 * by generated migrations, found by `check`, and a write that breaks one is a 400 naming the
 * declared field with the declared message, storing nothing: on SQLite and PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appState,
  collection,
  declaredSchemaDifferences,
  defineApp,
  fields,
  migrateApp,
  model,
  planMigration,
  serializer,
  type AppDefinition,
  type ConstraintFacts,
  type Migrations,
} from '../../src/framework/index.js';
import { openStoreDatabase, type StoreDatabase } from '../../src/store/connection/database.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { servedRelease } from '../support/served-release.js';

let testDatabase: TestDatabase;
let database: StoreDatabase;

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  // In a file, so that a server's own connection opens the same database.
  if (testDatabase.url === 'sqlite::memory:') {
    const folder = mkdtempSync(join(tmpdir(), 'restfold-constraints-'));
    testDatabase = { url: `sqlite:${join(folder, 'db.sqlite3')}`, drop: async () => rmSync(folder, { recursive: true, force: true }) };
  }
  database = openStoreDatabase(testDatabase.url);
});
afterAll(async () => {
  await database.close();
  await testDatabase.drop();
});

const STOCK: ConstraintFacts = { name: 'products_stock_not_negative', check: { stock__gte: 0 }, field: 'stock', message: 'Stock cannot go below zero.' };
const WINDOW: ConstraintFacts = { name: 'products_window_in_order', check: { available_from__lte: { field: 'available_until' } }, message: 'The window ends before it starts.' };
const LIVE_SKU: ConstraintFacts = {
  name: 'products_live_sku_key',
  unique: ['sku'],
  condition: { not: { status: 'retired' } },
  message: 'A live product with this SKU already exists.',
};

const productFields = {
  id: fields.id(),
  sku: fields.string({ maxLength: 20 }),
  name: fields.string({ maxLength: 60, default: "it's" }),
  status: fields.choice(['draft', 'active', 'retired'], { default: 'draft' }),
  stock: fields.integer({ default: 0 }),
  available_from: fields.timestamp({ nullable: true }),
  available_until: fields.timestamp({ nullable: true }),
};
const shop = (constraints: readonly ConstraintFacts[]): AppDefinition =>
  defineApp({
    collections: [collection('products', { serializer: serializer(model('products', productFields, { constraints }), { fields: Object.keys(productFields) }) })],
  });

let migrations: Migrations = {};

/** Generates the next migration for `definition` and migrates: its changes, one line each. */
async function evolve(definition: AppDefinition): Promise<readonly string[]> {
  const state = appState(definition);
  const plan = planMigration(state, migrations);
  migrations = { ...migrations, [`${String(Object.keys(migrations).length + 1).padStart(4, '0')}_generated`]: { operations: plan.operations, state } };
  await migrateApp(database, { ...definition, migrations });
  expect(await declaredSchemaDifferences(database, { ...definition, migrations })).toEqual([]);
  expect(planMigration(appState(definition), migrations).changes).toEqual([]);
  return plan.changes;
}

/** Requests to `definition` served by a server of its own (on connections opened after the migration), as a signed-in user. */
const served = (definition: AppDefinition) => servedRelease(testDatabase.url, database, { ...definition, migrations });

const stored = async (): Promise<Record<string, unknown>[]> => database.db.selectFrom('products').select(['sku', 'status', 'stock']).orderBy('id').execute();

describe('constraints declared on a model', () => {
  const v1 = shop([STOCK, WINDOW, LIVE_SKU]);

  it('are generated into the migration that creates the table, and a second makemigrations finds nothing', async () => {
    const plan = planMigration(appState(v1), {});
    expect(plan.operations).toContainEqual(
      expect.objectContaining({ op: 'createTable', table: 'products', checks: { products_stock_not_negative: STOCK.check, products_window_in_order: WINDOW.check } }),
    );
    expect(plan.operations).toContainEqual({ op: 'createIndex', name: 'products_live_sku_key', index: { table: 'products', columns: ['sku'], unique: true, where: LIVE_SKU.condition } });
    expect(await evolve(v1)).toEqual(['create table products', 'create index products_live_sku_key on products']);
  });

  it('refuse a create that breaks a check: 400 under the declared field, with its message, nothing stored', async () => {
    const api = await served(v1);
    try {
      const refused = await api.request('POST', '/api/v1/products/', { sku: 'A-1', stock: -1 });
      expect(refused).toEqual({ status: 400, json: expect.objectContaining({ code: 'validation_failed', details: { stock: ['Stock cannot go below zero.'] } }) });
      const backwards = await api.request('POST', '/api/v1/products/', { sku: 'A-1', available_from: '2026-02-01T00:00:00Z', available_until: '2026-01-01T00:00:00Z' });
      expect(backwards).toMatchObject({ status: 400, json: { details: { non_field_errors: ['The window ends before it starts.'] } } });
      expect(await stored()).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it('refuse a PATCH that breaks a check, leaving the record as it was', async () => {
    const api = await served(v1);
    try {
      const created = await api.request('POST', '/api/v1/products/', { sku: 'B-1', stock: 3, available_from: '2026-01-01T00:00:00Z' });
      expect(created.status).toBe(201);
      const patched = await api.request('PATCH', `/api/v1/products/${created.json.id}/`, { stock: -2 });
      expect(patched).toMatchObject({ status: 400, json: { code: 'validation_failed', details: { stock: ['Stock cannot go below zero.'] } } });
      const backwards = await api.request('PATCH', `/api/v1/products/${created.json.id}/`, { available_until: '2025-12-31T00:00:00Z' });
      expect(backwards).toMatchObject({ status: 400, json: { details: { non_field_errors: ['The window ends before it starts.'] } } });
      expect((await api.request('GET', `/api/v1/products/${created.json.id}/`)).json).toMatchObject({ stock: 3, available_until: null });
      expect((await api.request('PATCH', `/api/v1/products/${created.json.id}/`, { stock: 0, available_until: '2026-01-01T00:00:00Z' })).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('keep a conditional unique within its condition: duplicates outside it are allowed', async () => {
    const api = await served(v1);
    try {
      expect((await api.request('POST', '/api/v1/products/', { sku: 'C-1', status: 'retired' })).status).toBe(201);
      expect((await api.request('POST', '/api/v1/products/', { sku: 'C-1', status: 'retired' })).status).toBe(201);
      const live = await api.request('POST', '/api/v1/products/', { sku: 'C-1', status: 'active' });
      expect(live.status).toBe(201);
      const clash = await api.request('POST', '/api/v1/products/', { sku: 'C-1', status: 'draft' });
      expect(clash).toMatchObject({ status: 400, json: { code: 'validation_failed', details: { sku: ['A live product with this SKU already exists.'] } } });
      const before = await stored();
      const revived = (await api.request('GET', '/api/v1/products/')).json.results.find((product: { sku: string; status: string }) => product.sku === 'C-1' && product.status === 'retired');
      const patched = await api.request('PATCH', `/api/v1/products/${revived.id}/`, { status: 'active' });
      expect(patched).toMatchObject({ status: 400, json: { details: { sku: ['A live product with this SKU already exists.'] } } });
      expect(await stored()).toEqual(before);
      // Retiring the live one frees its SKU.
      expect((await api.request('PATCH', `/api/v1/products/${live.json.id}/`, { status: 'retired' })).status).toBe(200);
      expect((await api.request('PATCH', `/api/v1/products/${revived.id}/`, { status: 'active' })).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('are changed by later migrations, keeping the rows (a table rebuild on SQLite)', async () => {
    const rows = await stored();
    // A check added to the table, one dropped, and the unique's condition changed.
    const named: ConstraintFacts = { name: 'products_named', check: { not: { name: "it's gone" } } };
    const v2 = shop([STOCK, named, { ...LIVE_SKU, condition: { status__in: ['draft', 'active'] }, field: undefined, message: undefined }]);
    expect(await evolve(v2)).toEqual([
      'drop index products_live_sku_key on products',
      'drop check products_window_in_order on products',
      'add check products_named on products',
      'create index products_live_sku_key on products',
    ]);
    expect(await stored()).toEqual(rows);
    const api = await served(v2);
    try {
      expect(await api.request('POST', '/api/v1/products/', { sku: 'D-1', name: "it's gone" })).toMatchObject({
        status: 400,
        json: { details: { non_field_errors: ['Constraint "products_named" is violated.'] } },
      });
      // Without a message of its own, a unique constraint's clash is reported as a unique field's.
      expect(await api.request('POST', '/api/v1/products/', { sku: 'C-1', status: 'draft' })).toMatchObject({
        status: 400,
        json: { details: { sku: ['A record with this sku already exists.'] } },
      });
      // The dropped check holds no more.
      expect((await api.request('POST', '/api/v1/products/', { sku: 'D-2', available_from: '2026-02-01T00:00:00Z', available_until: '2026-01-01T00:00:00Z' })).status).toBe(201);
    } finally {
      await api.close();
    }
  });

  it("hold against a server of the release before them: a write breaking a check it does not know is a 400, not a 500", async () => {
    const liveSku = { ...LIVE_SKU, condition: { status__in: ['draft', 'active'] }, field: undefined, message: undefined };
    const named: ConstraintFacts = { name: 'products_named', check: { not: { name: "it's gone" } } };
    const before = shop([STOCK, liveSku]);
    expect(await evolve(before)).toEqual(['drop check products_named on products']);
    const old = await served(before);
    try {
      // The next release adds the check back, migrating while the old release serves.
      expect(await evolve(shop([STOCK, named, liveSku]))).toEqual(['add check products_named on products']);
      const rows = await stored();
      expect(await old.request('POST', '/api/v1/products/', { sku: 'E-1', name: "it's gone" })).toMatchObject({
        status: 400,
        json: { code: 'validation_failed', details: { non_field_errors: ['Constraint "products_named" is violated.'] } },
      });
      expect(await stored()).toEqual(rows);
      expect((await old.request('POST', '/api/v1/products/', { sku: 'E-1', name: 'kept' })).status).toBe(201);
    } finally {
      await old.close();
    }
  });

  it('are not added while rows break them: the migration fails, the table stays as it was, and check says so', async () => {
    const rows = await stored();
    const named: ConstraintFacts = { name: 'products_named', check: { not: { name: "it's gone" } } };
    const stocked: ConstraintFacts = { name: 'products_stocked', check: { stock__gt: 0 } };
    const v3 = shop([STOCK, named, stocked, { ...LIVE_SKU, condition: { status__in: ['draft', 'active'] }, field: undefined, message: undefined }]);
    const state = appState(v3);
    const plan = planMigration(state, migrations);
    expect(plan.changes).toEqual(['add check products_stocked on products']);
    expect(plan.warnings).toEqual(['products gets the check products_stocked: migrating fails while a row breaks it. Fix those rows in a step (op.run) before this migration.']);
    const tried = { ...migrations, '9999_stocked': { operations: plan.operations, state } };
    await expect(migrateApp(database, { ...v3, migrations: tried })).rejects.toThrow();
    expect(await stored()).toEqual(rows);
    expect(new Set((await database.capabilities.liveColumns(database.db)).map((column) => column.table))).not.toContain('products__rebuilt');
    expect(await declaredSchemaDifferences(database, { ...v3, migrations: tried })).toEqual(['check "products_stocked" on "products" is missing']);
  });

  it('are refused at declaration when the database could not make them', () => {
    const declare = (constraint: ConstraintFacts) => () => model('things', { id: fields.id(), count: fields.integer(), data: fields.json() }, { constraints: [constraint] });
    expect(declare({ name: 'things_x', check: { counts__gte: 0 } })).toThrow('"counts__gte" names no field');
    expect(declare({ name: 'things_x', check: { count__gte: '0; drop table things' } })).not.toThrow();
    expect(declare({ name: 'things_x', check: { count__gte: null } })).toThrow('cannot compare with null');
    expect(declare({ name: 'things_x', check: { count__gte: true } })).toThrow('cannot compare with true');
    expect(declare({ name: 'things_x', check: { count__lte: { field: 'counts' } } })).toThrow('names no field');
    expect(declare({ name: 'things_x', check: { data__isnull: false } })).toThrow('a JSON field cannot be constrained');
    expect(declare({ name: 'things_x', check: {} })).toThrow('at least one term');
    expect(declare({ name: 'Things x', check: { count: 1 } })).toThrow('identifier');
    expect(declare({ name: 'things_x', unique: ['nothing'] })).toThrow('`unique` lists fields');
    expect(declare({ name: 'things_x', check: { count: 1 }, field: 'counted' })).toThrow('reports under counted');
  });
});
