// The shop's orders under Vitest: the same kit, with Vitest's hooks and expect.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectStatus, testApp, type TestApp } from 'restfold/testing';
import shop from '../../examples/shop/app.js';

describe('orders', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(shop, { migrations: new URL('../../examples/shop/migrations/', import.meta.url) });
  });
  afterAll(() => t?.close());
  beforeEach(() => t.reset());

  it('total their lines, and belong to their customer', async () => {
    const manager = t.client().as(await t.createUser({ username: 'manager', permissions: ['shop.manage'] }));
    expectStatus(await manager.post('/api/v1/products/', { sku: 'tea', name: 'Green tea', price: '4.20', stock: 9, status: 'active' }), 201);
    const alice = t.client().as(await t.createUser({ username: 'alice' }));
    const order = expectStatus(await alice.post('/api/v1/orders/', {}), 201).json;
    expectStatus(await alice.post(`/api/v1/orders/${order.id}/lines/`, { product: 'tea', quantity: 2 }), 201);

    expect(await alice.get(`/api/v1/orders/${order.id}/`)).toMatchObject({ status: 200, json: { total: '8.40' } });
    expect(await manager.get(`/api/v1/orders/${order.id}/`)).toMatchObject({ status: 404 });
  });
});
