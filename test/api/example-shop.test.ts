/**
 * examples/shop, in-process on its committed migrations (the CLI serving it is
 * test/cli/examples-ts.test.ts): products by SKU whose stock never goes below zero, orders that
 * are their customer's, lines that take their quantity from the stock. On PostgreSQL the
 * concurrent requests run at once on parallel connections; on SQLite its write transactions run
 * one at a time, and the answers must be the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import shop from '../../examples/shop/app.js';
import migrations from '../../examples/shop/migrations/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { statusCounts } from '../support/replies.js';

let api: TestApi;
let manager: TestUser;
let alice: TestUser;
let bob: TestUser;
let clerk: TestUser;

beforeAll(async () => {
  api = await startApi({}, { ...shop, migrations });
  manager = await api.user('manager', { permissions: ['shop.manage', 'shop.restock'] });
  alice = await api.user('alice');
  bob = await api.user('bob');
  clerk = await api.user('clerk', { permissions: ['shop.view_all_orders'] });
});
afterAll(() => api.close());

const call = (user: TestUser | undefined, method: string, path: string, body?: unknown) =>
  api.request(method, `/api/v1/${path}`, { token: user?.token, body });

let skus = 0;
/** A new product on sale (or `status`), as its manager makes it. */
async function product(stock: number, price = '2.50', status = 'active'): Promise<string> {
  skus += 1;
  const sku = `sku-${skus}`;
  const reply = await call(manager, 'POST', 'products/', { sku, name: `Product ${skus}`, price, stock, status });
  expect(reply.status).toBe(201);
  return sku;
}
const stockOf = async (sku: string): Promise<number> => (await call(alice, 'GET', `products/${sku}/`)).json.stock as number;
const newOrder = async (user: TestUser): Promise<number> => {
  const reply = await call(user, 'POST', 'orders/', {});
  expect(reply.status).toBe(201);
  return reply.json.id as number;
};
const line = (user: TestUser, order: number, sku: string, quantity = 1) => call(user, 'POST', `orders/${order}/lines/`, { product: sku, quantity });

describe('products', () => {
  it('are made and changed by shop.manage, read by any signed-in user, by SKU', async () => {
    const made = await call(manager, 'POST', 'products/', { sku: 'tea-1', name: 'Green tea', price: '4.20' });
    expect(made).toMatchObject({ status: 201, json: { sku: 'tea-1', name: 'Green tea', price: '4.20', stock: 0, status: 'draft' } });
    expect(made.headers.location).toMatch(/\/api\/v1\/products\/tea-1\/$/);
    expect((await call(alice, 'GET', 'products/tea-1/')).json).toEqual(made.json);
    expect((await call(alice, 'POST', 'products/', { sku: 'tea-2', name: 'Black tea', price: '1.00' })).status).toBe(403);
    expect((await call(alice, 'PATCH', 'products/tea-1/', { price: '0.01' })).status).toBe(403);
    expect((await call(undefined, 'GET', 'products/')).status).toBe(401);
    expect((await call(manager, 'PATCH', 'products/tea-1/', { status: 'active' })).json).toMatchObject({ sku: 'tea-1', status: 'active' });
  });

  it('are deleted only while no order line names them', async () => {
    const sold = await product(5);
    await line(alice, await newOrder(alice), sold);
    const refused = await call(manager, 'DELETE', `products/${sold}/`);
    expect(refused.status).toBe(400);
    expect((await call(alice, 'GET', `products/${sold}/`)).status).toBe(200);
    const unsold = await product(5);
    expect((await call(alice, 'DELETE', `products/${unsold}/`)).status).toBe(403);
    expect((await call(manager, 'DELETE', `products/${unsold}/`)).status).toBe(204);
  });

  it('refuses a negative price or stock and an unknown status, naming the field', async () => {
    for (const [field, value] of [['price', '-0.01'], ['stock', -1], ['status', 'sold-out']] as const) {
      const reply = await call(manager, 'POST', 'products/', { sku: `bad-${field}`, name: 'x', price: '1.00', [field]: value });
      expect(reply.status).toBe(400);
      expect(Object.keys(reply.json.details)).toEqual([field]);
    }
  });

  it('filter on price, stock and status with their lookups', async () => {
    await product(1, '0.50', 'retired');
    const cheap = await call(alice, 'GET', 'products/?price__lt=1&status__in=retired,draft&stock__gte=1');
    expect(cheap.json.results.length).toBeGreaterThan(0);
    for (const row of cheap.json.results) {
      expect(Number(row.price)).toBeLessThan(1);
      expect(['retired', 'draft']).toContain(row.status);
      expect(row.stock).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('restock', () => {
  it('adds up under concurrency: 20 restocks of 1 add 20', async () => {
    const sku = await product(3);
    const replies = await Promise.all(Array.from({ length: 20 }, () => call(manager, 'POST', `products/${sku}/restock/`, { quantity: 1 })));
    expect(statusCounts(replies)).toEqual({ 200: 20 });
    expect(replies[0]!.json).toMatchObject({ sku });
    expect(await stockOf(sku)).toBe(23);
  });

  it('needs shop.restock and a quantity of at least 1', async () => {
    const sku = await product(0);
    expect((await call(alice, 'POST', `products/${sku}/restock/`, { quantity: 5 })).status).toBe(403);
    const zero = await call(manager, 'POST', `products/${sku}/restock/`, { quantity: 0 });
    expect(zero.status).toBe(400);
    expect(zero.json.details).toHaveProperty('quantity');
    expect(await stockOf(sku)).toBe(0);
  });
});

describe('low stock', () => {
  it('lists the products with fewer than 5 in stock, as a page of the list its filters narrow', async () => {
    const [low, enough, empty] = [await product(4), await product(5), await product(0, '9.00')];
    const page = await call(alice, 'GET', 'products/low-stock/?ordering=-stock&page_size=100');
    expect(page.status).toBe(200);
    const listed = page.json.results.map((row: { sku: string }) => row.sku);
    expect(listed).toEqual(expect.arrayContaining([low, empty]));
    expect(listed).not.toContain(enough);
    expect(page.json.results.every((row: { stock: number }) => row.stock < 5)).toBe(true);
    expect(page.json.count).toBe(listed.length);
    expect((await call(alice, 'GET', 'products/low-stock/?price__gte=9')).json.results.map((row: { sku: string }) => row.sku)).toEqual([empty]);
    // A query string narrows the page, never widens it.
    expect((await call(alice, 'GET', 'products/low-stock/?stock__gte=5')).json).toMatchObject({ count: 0, results: [] });
    expect((await call(undefined, 'GET', 'products/low-stock/')).status).toBe(401);
  });
});

describe('orders', () => {
  it('are made with {} for the caller, seen by them alone, and by shop.view_all_orders', async () => {
    const made = await call(alice, 'POST', 'orders/', {});
    expect(made).toMatchObject({ status: 201, json: { id: expect.any(Number), customer: alice.id, total: '0.00' } });
    const id = made.json.id as number;
    expect((await call(bob, 'GET', `orders/${id}/`)).status).toBe(404);
    expect((await call(bob, 'GET', 'orders/')).json.results.map((order: { id: number }) => order.id)).not.toContain(id);
    expect((await call(clerk, 'GET', `orders/${id}/`)).json).toMatchObject({ id, customer: alice.id });
    // The customer is the caller's, whatever the body says.
    expect((await call(bob, 'POST', 'orders/', { customer: alice.id })).json).toMatchObject({ customer: bob.id });
  });

  it('total their lines in SQL, ordered by it', async () => {
    const sku = await product(10, '3.25');
    const small = await newOrder(bob);
    const large = await newOrder(bob);
    expect((await line(bob, small, sku, 1)).status).toBe(201);
    expect((await line(bob, large, sku, 3)).status).toBe(201);
    expect((await call(bob, 'GET', `orders/${large}/`)).json).toMatchObject({ total: '9.75' });
    const byTotal = await call(bob, 'GET', 'orders/?ordering=-total');
    const ids = byTotal.json.results.map((order: { id: number }) => order.id);
    expect(ids.indexOf(large)).toBeLessThan(ids.indexOf(small));
  });
});

describe('order lines', () => {
  it('copy the unit price, take the stock, and refuse a short one storing nothing', async () => {
    const sku = await product(4, '1.99');
    const order = await newOrder(alice);
    const made = await line(alice, order, sku, 3);
    expect(made).toMatchObject({ status: 201, json: { id: expect.any(Number), product: sku, quantity: 3, unit_price: '1.99' } });
    expect(await stockOf(sku)).toBe(1);
    // A later price is not the line's.
    await call(manager, 'PATCH', `products/${sku}/`, { price: '5.00' });
    expect((await call(alice, 'GET', `orders/${order}/lines/${made.json.id}/`)).json).toMatchObject({ unit_price: '1.99' });

    const short = await line(alice, order, sku, 2);
    expect(short).toMatchObject({ status: 400, json: { code: 'validation_failed', details: { quantity: ['Only 1 in stock.'] } } });
    expect(await stockOf(sku)).toBe(1);
    expect((await call(alice, 'GET', `orders/${order}/lines/`)).json).toMatchObject({ count: 1 });
    expect((await call(alice, 'GET', `orders/${order}/`)).json).toMatchObject({ total: '5.97' });
  });

  it('refuse a product not for sale, an unknown SKU and a quantity under 1, naming the field', async () => {
    const order = await newOrder(alice);
    const draft = await product(5, '1.00', 'draft');
    expect((await line(alice, order, draft)).json).toMatchObject({ details: { product: ['This product is not for sale.'] } });
    expect(await stockOf(draft)).toBe(5);
    expect((await line(alice, order, 'no-such-sku')).json.details).toHaveProperty('product');
    const sku = await product(5);
    expect((await line(alice, order, sku, 0)).json.details).toHaveProperty('quantity');
    expect(await stockOf(sku)).toBe(5);
  });

  it("are their order's customer's: another's order is 404, even to shop.view_all_orders", async () => {
    const sku = await product(5);
    const order = await newOrder(alice);
    expect((await line(bob, order, sku)).status).toBe(404);
    expect((await line(clerk, order, sku)).status).toBe(404);
    expect((await call(bob, 'GET', `orders/${order}/lines/`)).status).toBe(404);
    expect((await call(clerk, 'GET', `orders/${order}/lines/`)).status).toBe(200);
    expect(await stockOf(sku)).toBe(5);
  });

  it('never oversell: 30 concurrent lines against a stock of 5 make 5 and refuse 25, stock 0', async () => {
    const sku = await product(5);
    const orders = await Promise.all([alice, bob].map(newOrder));
    const replies = await Promise.all(Array.from({ length: 30 }, (_, n) => line(n % 2 ? bob : alice, orders[n % 2]!, sku)));
    expect(statusCounts(replies)).toEqual({ 201: 5, 400: 25 });
    for (const reply of replies.filter(({ status }) => status === 400)) expect(reply.json.details).toHaveProperty('quantity');
    expect(await stockOf(sku)).toBe(0);
    const counts = await Promise.all([alice, bob].map(async (user, n) => (await call(user, 'GET', `orders/${orders[n]}/lines/`)).json.count as number));
    expect(counts[0]! + counts[1]!).toBe(5);
  });

  it('total right under concurrency: 12 concurrent lines on one order total 12 × the unit price', async () => {
    const sku = await product(100, '1.00');
    const order = await newOrder(alice);
    const replies = await Promise.all(Array.from({ length: 12 }, () => line(alice, order, sku)));
    expect(statusCounts(replies)).toEqual({ 201: 12 });
    expect((await call(alice, 'GET', `orders/${order}/`)).json).toMatchObject({ total: '12.00' });
    expect(await stockOf(sku)).toBe(88);
  });
});
