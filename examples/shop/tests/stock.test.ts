// The order line's hook takes the stock: it refuses what the stock cannot give, and holds under
// concurrent clients (on PostgreSQL, each request on a connection of its own).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { expectStatus, testApp, type TestApp, type TestClient } from 'restfold/testing';
import shop from '../app.js';

describe('the shop: stock taken by order lines', () => {
  let t: TestApp;
  let manager: TestClient;
  before(async () => {
    t = await testApp(shop, { migrations: new URL('../migrations/', import.meta.url) });
  });
  after(() => t?.close());
  beforeEach(async () => {
    await t.reset();
    manager = t.client().as(await t.createUser({ username: 'manager', permissions: ['shop.manage', 'shop.restock'] }));
    const tea = { sku: 'tea', name: 'Green tea', price: '4.20', stock: 5, status: 'active' };
    expectStatus(await manager.post('/api/v1/products/', tea), 201);
  });

  it('refuses a line the stock cannot give, naming the quantity, and keeps the stock', async () => {
    const alice = t.client().as(await t.createUser({ username: 'alice' }));
    const order = expectStatus(await alice.post('/api/v1/orders/', {}), 201).json;

    const refused = expectStatus(await alice.post(`/api/v1/orders/${order.id}/lines/`, { product: 'tea', quantity: 6 }), 400);
    assert.deepEqual(refused.json.details, { quantity: ['Only 5 in stock.'] });
    expectStatus(await alice.post(`/api/v1/orders/${order.id}/lines/`, { product: 'tea', quantity: 4 }), 201);

    assert.equal(expectStatus(await alice.get('/api/v1/products/tea/'), 200).json.stock, 1);
    assert.equal(expectStatus(await alice.get(`/api/v1/orders/${order.id}/`), 200).json.total, '16.80');
  });

  it('never oversells to customers ordering at once', async () => {
    const customers = await Promise.all(['ann', 'ben', 'cat', 'dan', 'eve', 'fay', 'gus', 'hal'].map((username) => t.createUser({ username })));
    const answers = await Promise.all(
      customers.map(async (customer) => {
        const client = t.client().as(customer);
        const order = expectStatus(await client.post('/api/v1/orders/', {}), 201).json;
        return client.post(`/api/v1/orders/${order.id}/lines/`, { product: 'tea', quantity: 1 });
      }),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    assert.deepEqual(statuses, [201, 201, 201, 201, 201, 400, 400, 400]);
    assert.equal(expectStatus(await manager.get('/api/v1/products/tea/'), 200).json.stock, 0);
  });

  it('adds up restocks sent at once', async () => {
    await Promise.all(Array.from({ length: 10 }, () => manager.post('/api/v1/products/tea/restock/', { quantity: 1 })));
    assert.equal(expectStatus(await manager.get('/api/v1/products/tea/'), 200).json.stock, 15);
  });
});
