// A product's image: uploaded with the product as multipart/form-data, judged by its bytes, shown
// as an object with a signed link that downloads it without credentials, and cleared with null.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { expectStatus, testApp, type TestApp, type TestClient } from 'restfold/testing';
import shop from '../app.js';

// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/** A product's fields and its image, as a browser's FormData would send them. */
function productForm(fields: Record<string, string>, image?: { bytes: Buffer; name: string }): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (image) form.append('image', new Blob([new Uint8Array(image.bytes)], { type: 'image/png' }), image.name);
  return form;
}

describe('the shop: product images', () => {
  let t: TestApp;
  let manager: TestClient;
  before(async () => {
    t = await testApp(shop, { migrations: new URL('../migrations/', import.meta.url) });
  });
  after(() => t?.close());
  beforeEach(async () => {
    await t.reset();
    manager = t.client().as(await t.createUser({ username: 'manager', permissions: ['shop.manage'] }));
  });

  it('uploads an image with the product and downloads it through its link', async () => {
    const tea = { sku: 'tea', name: 'Green tea', price: '4.20', stock: '3', status: 'active' };
    const created = expectStatus(await manager.post('/api/v1/products/', productForm(tea, { bytes: PNG, name: 'tea.png' })), 201).json;
    assert.deepEqual({ ...created.image, url: undefined }, { url: undefined, name: 'tea.png', size: PNG.length, content_type: 'image/png', width: 1, height: 1 });
    assert.equal(created.stock, 3);

    // Any signed-in customer reads the product; its link downloads the bytes without credentials.
    const alice = t.client().as(await t.createUser({ username: 'alice' }));
    const { image } = expectStatus(await alice.get('/api/v1/products/tea/'), 200).json;
    const download = expectStatus(await t.client().get(image.url), 200);
    assert.equal(download.headers['content-type'], 'image/png');
    assert.deepEqual(download.bytes, PNG);

    // Cleared with null in a JSON body: the product has no image, and the old link is gone.
    assert.equal(expectStatus(await manager.patch('/api/v1/products/tea/', { image: null }), 200).json.image, null);
    expectStatus(await t.client().get(image.url), 404);
  });

  it('refuses a file that is no image, naming the field, and keeps the product unmade', async () => {
    const fake = { bytes: Buffer.from('<html><script>alert(1)</script></html>'), name: 'tea.png' };
    const refused = expectStatus(await manager.post('/api/v1/products/', productForm({ sku: 'tea', name: 'Green tea', price: '4.20' }, fake)), 400);
    assert.ok(refused.json.details.image, 'the image field is named');
    assert.equal(expectStatus(await manager.get('/api/v1/products/'), 200).json.count, 0);
  });
});
