/**
 * Atomic writes and locked reads through a record store, from hooks and custom actions, in the
 * request's transaction: an order line takes its quantity from the product's stock by one
 * conditional `UPDATE … SET stock = stock - q WHERE id = … AND stock >= q`, so concurrent lines
 * never oversell; restocks add up; a read-check-write under a locked read is as safe. On
 * PostgreSQL the requests run at once on parallel connections; on SQLite its write transactions
 * run one at a time, and the answers must be the same.
 */
import { describe, expect, it } from 'vitest';
import {
  collection,
  defineApp,
  F,
  fields,
  inTransaction,
  increment,
  model,
  recordStore,
  serializer,
  validationFailed,
  type ConstraintFacts,
  type Database,
  type RecordStore,
} from '../../src/framework/index.js';
import { servedWithUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { statusCounts } from '../support/replies.js';

const STOCK: ConstraintFacts = { name: 'products_stock_not_negative', check: { stock__gte: 0 }, field: 'stock', message: 'Stock cannot go below zero.' };

const Product = model(
  'products',
  { id: fields.id(), sku: fields.string({ maxLength: 20 }), stock: fields.integer({ default: 0 }), sold: fields.integer({ default: 0 }) },
  { constraints: [STOCK] },
);
const productSerializer = serializer(Product, { fields: ['id', 'sku', 'stock', 'sold'] });
const products = (database: Database): RecordStore => recordStore(database, productSerializer, { name: 'product' });

/** A model with rules of its own: creates refuse a reserved code; updates run per record. */
const Gadget = model(
  'gadgets',
  { id: fields.id(), code: fields.string({ maxLength: 20 }), count: fields.integer({ default: 0 }) },
  {
    creates: (values) => {
      if (values.code === 'reserved') throw validationFailed({ code: ['This code is reserved.'] });
    },
    updates: { inputs: {}, check: () => undefined, beforeStore: async () => undefined },
  },
);
const gadgets = (database: Database): RecordStore => recordStore(database, serializer(Gadget, { fields: ['id', 'code', 'count'] }), { name: 'gadget' });

const lineFields = { id: fields.id(), product_id: fields.foreignKey('products'), quantity: fields.integer({ minValue: 1 }) };
const Line = model('lines', { ...lineFields, note: fields.string({ maxLength: 20, nullable: true, unique: true }) });
const Reservation = model('reservations', lineFields);

const app = withGeneratedMigrations(
  defineApp({
    models: [Gadget],
    collections: [
      collection('products', {
        serializer: productSerializer,
        actions: {
          restock: {
            detail: true,
            method: 'POST',
            body: { quantity: fields.integer({ minValue: 1 }) },
            handler: async ({ database, record, body }) => {
              const store = products(database);
              await store.updateMatching({ id: record!.id }, { stock: increment((body as { quantity: number }).quantity) });
              return store.get(record!.id as number);
            },
          },
        },
      }),
      collection('lines', {
        serializer: serializer(Line, { fields: ['id', 'product_id', 'quantity', 'note'] }),
        hooks: {
          // The decrement commits or rolls back with the line.
          inTransaction: true,
          async beforeCreate({ database, values }) {
            const quantity = values.quantity as number;
            const taken = await products(database).updateMatching(
              { id: values.product_id, stock__gte: quantity },
              { stock: increment(-quantity), sold: F('sold').plus(quantity) },
            );
            if (taken === 0) throw validationFailed({ quantity: ['Not enough stock.'] });
          },
        },
      }),
      collection('reservations', {
        serializer: serializer(Reservation, { fields: ['id', 'product_id', 'quantity'] }),
        hooks: {
          inTransaction: true,
          // Read, check, write: safe only because the read locks the product until the line is stored.
          async beforeCreate({ database, values }) {
            const store = products(database);
            const product = await store.get(values.product_id as number, { lock: true });
            const quantity = values.quantity as number;
            if ((product.stock as number) < quantity) throw validationFailed({ quantity: ['Not enough stock.'] });
            await store.updateMatching({ id: product.id }, { stock: (product.stock as number) - quantity });
          },
        },
      }),
    ],
  }),
);

const served = servedWithUser(app, 'alice');

const newProduct = async (sku: string, stock: number): Promise<number> => {
  const reply = await served.api.request('POST', '/api/v1/products/', { token: served.user.token, body: { sku, stock } });
  expect(reply.status).toBe(201);
  return reply.json.id as number;
};
const stored = async (id: number) => (await served.api.request('GET', `/api/v1/products/${id}/`, { token: served.user.token })).json;

describe('atomic updates from a hook', () => {
  it('30 concurrent lines against a stock of 5: 5 created, 25 refused naming the quantity, stock 0', async () => {
    const id = await newProduct('A1', 5);
    const replies = await Promise.all(
      Array.from({ length: 30 }, () => served.api.request('POST', '/api/v1/lines/', { token: served.user.token, body: { product_id: id, quantity: 1 } })),
    );

    expect(statusCounts(replies)).toEqual({ 201: 5, 400: 25 });
    for (const reply of replies.filter(({ status }) => status === 400)) {
      expect(reply.json).toMatchObject({ code: 'validation_failed', details: { quantity: ['Not enough stock.'] } });
    }
    expect(await stored(id)).toMatchObject({ stock: 0, sold: 5 });
    const lines = await served.api.database.db.selectFrom('lines').select('id').where('product_id', '=', id).execute();
    expect(lines).toHaveLength(5);
  });

  it('takes a larger quantity whole or not at all', async () => {
    const id = await newProduct('A2', 5);
    const take = (quantity: number) => served.api.request('POST', '/api/v1/lines/', { token: served.user.token, body: { product_id: id, quantity } });
    expect((await take(3)).status).toBe(201);
    expect((await take(3)).status).toBe(400);
    expect((await take(2)).status).toBe(201);
    expect(await stored(id)).toMatchObject({ stock: 0, sold: 5 });
  });

  it('rolls the decrement back with the line when the line is refused after it, and refuses a product that does not exist', async () => {
    const id = await newProduct('A3', 5);
    const take = (note: string) => served.api.request('POST', '/api/v1/lines/', { token: served.user.token, body: { product_id: id, quantity: 2, note } });
    expect((await take('first')).status).toBe(201);
    // The hook takes the stock, then the line's INSERT clashes on its note: both are undone.
    const clash = await take('first');
    expect(clash.status).toBe(400);
    expect(clash.json.details).toHaveProperty('note');
    expect(await stored(id)).toMatchObject({ stock: 3, sold: 2 });
    const missing = await served.api.request('POST', '/api/v1/lines/', { token: served.user.token, body: { product_id: id + 1000, quantity: 1 } });
    expect(missing.status).toBe(400);
    expect(missing.json.details).toHaveProperty('quantity');
  });
});

describe('atomic updates from a custom action', () => {
  it('20 concurrent restocks of 1 add 20', async () => {
    const id = await newProduct('B1', 3);
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => served.api.request('POST', `/api/v1/products/${id}/restock/`, { token: served.user.token, body: { quantity: 1 } })),
    );
    expect(statusCounts(replies)).toEqual({ 200: 20 });
    expect(await stored(id)).toMatchObject({ stock: 23 });
  });
});

describe('locked reads', () => {
  it('makes a read-check-write safe: 12 concurrent reservations against a stock of 4 leave 4 stored and stock 0', async () => {
    const id = await newProduct('C1', 4);
    const replies = await Promise.all(
      Array.from({ length: 12 }, () => served.api.request('POST', '/api/v1/reservations/', { token: served.user.token, body: { product_id: id, quantity: 1 } })),
    );
    expect(statusCounts(replies)).toEqual({ 201: 4, 400: 8 });
    expect(await stored(id)).toMatchObject({ stock: 0 });
  });

  it('is refused outside a transaction, and allowed in one inTransaction opens', async () => {
    const id = await newProduct('C2', 1);
    await expect(products(served.api.database).get(id, { lock: true })).rejects.toThrow(/transaction/);
    const read = await inTransaction(served.api.database, (transaction) => products(transaction).get(id, { lock: true }));
    expect(read).toMatchObject({ id, stock: 1 });
  });
});

describe('recordStore with the filter vocabulary', () => {
  it('lists and updates by lookups, and counts what it changed', async () => {
    const store = products(served.api.database);
    for (const [sku, stock] of [['D1', 1], ['D2', 4], ['D3', 9]] as const) await store.create({ sku, stock });
    const low = await store.list({ sku__startswith: 'D', stock__lt: 5 }, ['sku']);
    expect(low.map((row) => row.sku)).toEqual(['D1', 'D2']);
    expect(await store.updateMatching({ sku__in: ['D1', 'D2', 'D3'], stock__lte: 4 }, { stock: F('stock').times(2).plus(1) })).toBe(2);
    expect((await store.list({ sku__startswith: 'D' }, ['sku'])).map((row) => row.stock)).toEqual([3, 9, 9]);
    const each: unknown[] = [];
    for await (const row of store.each({ sku__startswith: 'D', stock__gte: 9 }, ['sku'])) each.push(row.sku);
    expect(each).toEqual(['D2', 'D3']);
  });

  it('refuses a change that breaks a declared constraint as a 400 naming the field, and changes nothing', async () => {
    const store = products(served.api.database);
    const { id } = await store.create({ sku: 'E1', stock: 2 });
    await expect(store.updateMatching({ id }, { stock: increment(-3) })).rejects.toMatchObject({ status: 400, details: { stock: ['Stock cannot go below zero.'] } });
    expect(await store.get(id as number)).toMatchObject({ stock: 2 });
  });

  it('checks plain values as a PATCH body, and refuses expressions over what is not a numeric field', async () => {
    const store = products(served.api.database);
    const { id } = await store.create({ sku: 'F1', stock: 2 });
    await expect(store.updateMatching({ id }, { sku: 'x'.repeat(30) })).rejects.toMatchObject({ status: 400, details: { sku: [expect.any(String)] } });
    expect(await store.updateMatching({ id }, { sku: 'F2' })).toBe(1);
    await expect(store.updateMatching({ id }, { stock: F('sku').plus(1) })).rejects.toThrow(/numeric fields/);
    await expect(store.updateMatching({ id }, { stock: F('stock').plus('1; drop table products') })).rejects.toThrow(/must be a number/);
    // An integer field's expression stays integral: 1.5 would be refused by PostgreSQL and stored by SQLite.
    await expect(store.updateMatching({ id }, { stock: F('stock').plus(1.5) })).rejects.toThrow(/integers only/);
    await expect(store.updateMatching({ id }, { stock: increment('0.5') })).rejects.toThrow(/integers only/);
    await expect(store.updateMatching({ id, stock__contains: 1 }, { stock: 1 })).rejects.toThrow(/lookup "contains"/);
    expect(await store.get(id as number)).toMatchObject({ sku: 'F2', stock: 2 });
  });
});

describe("recordStore and the model's rules", () => {
  it("applies the model's create rules, and refuses an atomic update of a model whose update rules run per record", async () => {
    const store = gadgets(served.api.database);
    await expect(store.create({ code: 'reserved' })).rejects.toMatchObject({ status: 400, details: { code: ['This code is reserved.'] } });
    const { id } = await store.create({ code: 'free' });
    await expect(store.updateMatching({ id }, { count: increment(1) })).rejects.toThrow(/update rules/);
    expect(await store.get(id as number)).toMatchObject({ count: 0 });
  });
});
