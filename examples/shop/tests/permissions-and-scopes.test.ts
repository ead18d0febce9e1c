// Who may do what in the shop: permissions on products, and orders scoped to their customer.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { expectStatus, testApp, type TestApp } from 'restfold/testing';
import shop from '../app.js';

describe('the shop: permissions and scopes', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp(shop, { migrations: new URL('../migrations/', import.meta.url) });
  });
  after(() => t?.close());
  beforeEach(() => t.reset());

  const tea = { sku: 'tea', name: 'Green tea', price: '4.20', stock: 3, status: 'active' };

  it('lets a manager add products, and nobody else', async () => {
    const manager = await t.createUser({ username: 'manager', permissions: ['shop.manage'] });
    const alice = await t.createUser({ username: 'alice' });

    expectStatus(await t.client().post('/api/v1/products/', tea), 401);
    expectStatus(await t.client().as(alice).post('/api/v1/products/', tea), 403);
    const created = expectStatus(await t.client().as(manager).post('/api/v1/products/', tea), 201);
    assert.equal(created.json.sku, 'tea');

    const listed = expectStatus(await t.client().as(alice).get('/api/v1/products/', undefined, { query: { status: 'active' } }), 200);
    assert.deepEqual(listed.json.results.map((product: { sku: string }) => product.sku), ['tea']);
  });

  it("keeps each customer's orders their own, but for those who may see every one", async () => {
    const alice = t.client().as(await t.createUser({ username: 'alice' }));
    const bob = t.client().as(await t.createUser({ username: 'bob' }));
    const clerk = t.client().as(await t.createUser({ username: 'clerk', permissions: ['shop.view_all_orders'] }));

    const order = expectStatus(await alice.post('/api/v1/orders/', {}), 201).json;
    expectStatus(await bob.get(`/api/v1/orders/${order.id}/`), 404);
    assert.equal(expectStatus(await bob.get('/api/v1/orders/'), 200).json.count, 0);
    assert.equal(expectStatus(await clerk.get(`/api/v1/orders/${order.id}/`), 200).json.customer, order.customer);
  });

  it('logs in with a password, and sends the CSRF token with the session cookie', async () => {
    await t.createUser({ username: 'carol', password: 'carol-password' });
    const carol = await t.client().login('carol', 'carol-password');
    expectStatus(await carol.post('/api/v1/orders/', {}), 201);
    // The session's cookie with a wrong CSRF token may not write.
    expectStatus(await carol.post('/api/v1/orders/', {}, { headers: { 'x-csrf-token': 'forged' } }), 403);
  });
});
