// A 20-test file as an app's suite writes one: the shop on SQLite in memory, reset before each test,
// each test making its users and a few requests. bench/test-kit.mjs times it.
import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import { expectStatus, testApp, type TestApp } from 'restfold/testing';
import shop from '../../examples/shop/app.js';

let t: TestApp;
before(async () => {
  t = await testApp(shop, { database: 'sqlite', migrations: new URL('../../examples/shop/migrations/', import.meta.url) });
});
after(() => t?.close());
beforeEach(() => t.reset());

for (let test = 1; test <= 20; test++) {
  it(`test ${test}`, async () => {
    const manager = t.client().as(await t.createUser({ username: 'manager', permissions: ['shop.manage'] }));
    const alice = t.client().as(await t.createUser({ username: 'alice' }));
    expectStatus(await manager.post('/api/v1/products/', { sku: `sku-${test}`, name: 'Tea', price: '4.20', stock: 3, status: 'active' }), 201);
    const order = expectStatus(await alice.post('/api/v1/orders/', {}), 201).json;
    expectStatus(await alice.post(`/api/v1/orders/${order.id}/lines/`, { product: `sku-${test}`, quantity: 1 }), 201);
    assert.equal(expectStatus(await alice.get('/api/v1/products/', undefined, { query: { stock: 2 } }), 200).json.count, 1);
  });
}
