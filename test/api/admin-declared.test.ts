/**
 * The admin as an app declares it (modelAdmin): columns, filters, search, read-only fields, the
 * related-field lookup, inlines through the nested collection's API and the app's own bulk
 * actions; on the example service and on examples/shop.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import shop from '../../examples/shop/app.js';
import migrations from '../../examples/shop/migrations/index.js';
import service from '../../src/service/app.js';
import { collection, defineApp, fields, model, modelAdmin, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { adminClient, loggedIn, makeStaff, type AdminClient } from '../support/admin-client.js';
import { formOf, pdf, png } from '../support/files.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { posters } from '../support/posters.js';

describe('the example service', () => {
  let api: TestApi;
  let boss: TestUser;
  beforeAll(async () => {
    api = await startApi();
    boss = await api.user('boss', { superuser: true });
    const writer = await api.user('writer', { permissions: ['articles.view', 'articles.add', 'articles.change'] });
    await api.user('editor');
    for (const user of [boss, writer]) await makeStaff(api, user.id);
    await api.request('POST', '/api/v1/articles/', { token: boss.token, body: { title: '<script>alert(1)</script>' } });
  });
  afterAll(() => api.close());

  it('shows the declared columns in their order and only the declared filters', async () => {
    const client = await loggedIn(api, 'boss');
    const list = await client.get('/admin/articles/');
    expect(list.status).toBe(200);
    const headers = [...list.body.matchAll(/<th scope="col"[^>]*>(?:<a [^>]*>)?([A-Za-z_]+)/g)].map((found) => found[1]);
    expect(headers).toEqual(['Select', 'title', 'author_id', 'created_at', 'id']);
    // The author filter: a link per user (few of them), as Django's list_filter on a foreign key.
    expect(list.body).toMatch(/<nav class="filter-links" aria-label="By author_id"><h3>By author_id<\/h3><ul><li class="selected"><a href="\/admin\/articles\/" aria-current="true">All<\/a><\/li><li><a href="\/admin\/articles\/\?author_id=1">boss<\/a>/);
    expect(list.body).not.toContain('id="filter-title"');
    expect(list.body).toContain('name="q"');
    // The title is the first column, so the link to the record, and shown as text.
    expect(list.body).toContain('/change/">&lt;script>alert(1)&lt;/script></a>');
  });

  it("gives a foreign key a text input of its id and a link to the related collection's lookup", async () => {
    const client = await loggedIn(api, 'boss');
    const form = await client.get('/admin/articles/add/');
    expect(form.body).toMatch(/<input type="text" id="field-author_id" name="author_id" value data-kind="string" data-lookup="\/admin\/users\/lookup\/" autocomplete="off"/);
    expect(form.body).toContain('<a class="related-lookup" href="/admin/users/lookup/" target="_blank" rel="noopener" data-for="field-author_id">');
    expect(form.body).toContain('<script src="/api/static/admin.js" defer></script>');
    const script = await api.app.inject({ method: 'GET', url: '/api/static/admin.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toContain('text/javascript');
    const editor = (await api.request('GET', '/api/v1/users/?search=editor', { token: boss.token })).json as { results: { id: number }[] };
    const editorId = String(editor.results[0]!.id);
    const lookup = await client.get('/admin/users/lookup/?q=edi');
    expect(lookup.status).toBe(200);
    expect(lookup.body).toContain(`<tr data-id="${editorId}">`);
    expect(lookup.body).not.toContain('data-id="1"><td><code>1</code></td><td class="label">boss');
    const added = await client.post('/admin/articles/add/', { title: 'picked', author_id: editorId, body: '', _save: '' });
    expect(added.status).toBe(302);
    const stored = (await api.request('GET', '/api/v1/articles/?search=picked', { token: boss.token })).json as { results: { author_id: number }[] };
    expect(stored.results[0]!.author_id).toBe(Number(editorId));
    const wrong = await client.post('/admin/articles/add/', { title: 'unpicked', author_id: 'nobody', body: '', _save: '' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatch(/id="field-author_id"[^>]*value="nobody"[^]*<ul class="errorlist">/);
  });

  it('shows a lookup only to those who may view the related collection, and escapes the search', async () => {
    const client = await loggedIn(api, 'writer');
    const form = await client.get('/admin/articles/add/');
    expect(form.body).not.toContain('data-lookup');
    expect((await client.get('/admin/users/lookup/?q=edi')).status).toBe(403);
    const found = await client.get(`/admin/articles/lookup/?q=${encodeURIComponent('<script>')}`);
    expect(found.status).toBe(200);
    expect(found.body).toContain('value="&lt;script>"');
    expect(found.body).toContain('<td class="label">&lt;script>alert(1)&lt;/script></td>');
    expect(found.body).not.toContain('<script>alert');
    expect((await adminClient(api).get('/admin/articles/lookup/')).status).toBe(302);
  });

  it('refuses a declaration naming what the collection lacks, at startup', async () => {
    const articles = service.collections.find(({ name }) => name === 'articles')!;
    const broken = (options: Parameters<typeof modelAdmin>[1]) => startApi({}, { ...service, admin: { collections: [modelAdmin(articles, options)] } });
    await expect(broken({ columns: ['titel'] })).rejects.toThrow('admin: articles: columns names titel');
    await expect(broken({ filters: ['body'] })).rejects.toThrow('admin: articles: filters names body');
    await expect(broken({ actions: { publish: 'Publish' } })).rejects.toThrow('admin: articles: actions names publish');
    const tags = service.collections.find(({ name }) => name === 'tags')!;
    await expect(broken({ inlines: [tags] })).rejects.toThrow('the inline tags is not nested under it');
    const stray = collection('strays', { serializer: tags.serializer });
    await expect(startApi({}, defineApp({ ...service, admin: { collections: [stray] } }))).rejects.toThrow("admin: strays is not one of the app's collections.");
  });
});

describe('examples/shop', () => {
  let api: TestApi;
  let manager: TestUser;
  beforeAll(async () => {
    api = await startApi({}, { ...shop, migrations });
    manager = await api.user('manager', {
      permissions: ['shop.manage', 'shop.view_all_orders', 'products.view', 'products.add', 'products.change', 'orders.view', 'orders.add', 'orders.change', 'lines.view', 'lines.add'],
    });
    const clerk = await api.user('clerk', { permissions: ['products.view', 'products.change', 'orders.view', 'lines.view', 'shop.view_all_orders'] });
    for (const user of [manager, clerk]) await makeStaff(api, user.id);
    for (const sku of ['tea', 'coffee', 'cocoa']) {
      await api.request('POST', '/api/v1/products/', { token: manager.token, body: { sku, name: sku, price: '2.50', stock: 5, status: 'active' } });
    }
  });
  afterAll(() => api.close());

  const statuses = async () =>
    Object.fromEntries(((await api.request('GET', '/api/v1/products/', { token: manager.token })).json as { results: { sku: string; status: string }[] }).results.map((product) => [product.sku, product.status]));

  it("runs the app's own bulk action on a selection, each through its custom action's permissions", async () => {
    const clerk = await loggedIn(api, 'clerk');
    const list = await clerk.get('/admin/products/');
    expect(list.body).toContain('<option value="retire">Retire selected products</option>');
    expect(list.body).not.toContain('delete_selected');
    // The clerk may change in the admin's terms, but the action itself needs shop.manage: the API refuses each.
    const refused = await clerk.post('/admin/products/', { action: 'retire', _selected_action: ['tea'] });
    expect(refused.status).toBe(302);
    expect((await clerk.get('/admin/products/')).body).toContain('Retire selected products: done for 0 of 1 product. Refused: tea.');
    expect((await clerk.post('/admin/products/', { action: 'retire', _selected_action: ['tea'], csrfmiddlewaretoken: 'forged' })).status).toBe(403);
    const client = await loggedIn(api, 'manager');
    await client.get('/admin/products/');
    expect((await client.post('/admin/products/', { action: 'retire', _selected_action: ['tea', 'cocoa'] })).status).toBe(302);
    expect((await client.get('/admin/products/')).body).toContain('Retire selected products: done for 2 of 2 products.');
    expect(await statuses()).toEqual({ cocoa: 'retired', coffee: 'active', tea: 'retired' });
  });

  it('shows a declared read-only field as text on the change form and ignores it when posted', async () => {
    const client = await loggedIn(api, 'manager');
    const form = await client.get('/admin/products/coffee/change/');
    expect(form.body).toContain('<dt>sku</dt><dd>coffee</dd>');
    expect(form.body).not.toContain('id="field-sku"');
    expect(form.body).toMatch(/<select id="field-status" name="status" data-kind="choice">/);
    expect(form.body).toMatch(/<input type="number" step="0.01" id="field-price"/);
    const saved = await client.post('/admin/products/coffee/change/', { sku: 'renamed', name: 'Coffee', price: '3.00', stock: '5', status: 'active', _continue: '' });
    expect(saved.location).toBe('/admin/products/coffee/change/');
    expect((await api.request('GET', '/api/v1/products/coffee/', { token: manager.token })).json).toMatchObject({ sku: 'coffee', price: '3.00' });
    // On the add form the key is set, once.
    expect((await client.get('/admin/products/add/')).body).toContain('id="field-sku"');
  });

  it("lists an order's lines inline and adds one through the lines' API, its refusal shown beside the field", async () => {
    const client = await loggedIn(api, 'manager');
    await client.get('/admin/orders/');
    const order = (await api.request('POST', '/api/v1/orders/', { token: manager.token, body: {} })).json as { id: number };
    const change = `/admin/orders/${order.id}/change/`;
    const form = await client.get(change);
    expect(form.status).toBe(200);
    expect(form.body).toContain('<section class="inline-group" aria-label="lines"><h2>lines</h2>');
    expect(form.body).toContain(`action="/admin/orders/${order.id}/inline/lines/"`);
    // The line's product is a slug relation: its picker searches the products.
    expect(form.body).toContain('data-lookup="/admin/products/lookup/"');
    const added = await client.post(`/admin/orders/${order.id}/inline/lines/`, { product: 'coffee', quantity: '2' });
    expect(added.status).toBe(302);
    expect(added.location).toBe(change);
    const shown = await client.get(change);
    expect(shown.body).toMatch(/The line “\d+” was added successfully\./);
    expect(shown.body).toMatch(/<td>coffee<\/td><td>2<\/td><td>3\.00<\/td>/);
    expect((await api.request('GET', '/api/v1/products/coffee/', { token: manager.token })).json).toMatchObject({ stock: 3 });
    const refused = await client.post(`/admin/orders/${order.id}/inline/lines/`, { product: 'coffee', quantity: '9' });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('Only 3 in stock.');
    expect(refused.body).toMatch(/id="field-quantity"[^>]*value="9"[^]*Only 3 in stock\./);
    expect((await client.post(`/admin/orders/${order.id}/inline/lines/`, { product: 'coffee', quantity: '1', csrfmiddlewaretoken: 'forged' })).status).toBe(403);
    // Without lines.add: the lines are listed, with no form to add one.
    const clerk = await loggedIn(api, 'clerk');
    const viewed = await clerk.get(change);
    expect(viewed.body).toContain('aria-label="lines"');
    expect(viewed.body).not.toContain('/inline/lines/');
    expect((await clerk.post(`/admin/orders/${order.id}/inline/lines/`, { product: 'coffee', quantity: '1' })).status).toBe(403);
  });
});

describe('every field kind on the forms', () => {
  const Event = model('events', {
    id: fields.id(),
    title: fields.string({ maxLength: 100 }),
    kind: fields.choice(['talk', 'party']),
    day: fields.date({ nullable: true }),
    starts_at: fields.timestamp({ nullable: true }),
    fee: fields.decimal({ digits: 6, places: 2, default: '0' }),
    public: fields.boolean({ default: false }),
    extra: fields.json({ nullable: true }),
  });
  const events = collection('events', { serializer: serializer(Event, { fields: ['id', 'title', 'kind', 'day', 'starts_at', 'fee', 'public', 'extra'], readOnly: ['id'] }) });
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({}, withGeneratedMigrations(defineApp({ collections: [events], admin: { collections: [modelAdmin(events, { columns: ['title', 'kind', 'starts_at'] })] } })));
    await makeStaff(api, (await api.user('boss', { superuser: true })).id);
  });
  afterAll(() => api.close());

  it('renders each kind with its control, reads the pickers in UTC, and shows refusals beside each field', async () => {
    const client = await loggedIn(api, 'boss');
    const form = await client.get('/admin/events/add/');
    expect(form.body).toContain('<select id="field-kind" name="kind" data-kind="choice"><option value>---------</option><option value="talk">talk</option>');
    expect(form.body).toContain('<input type="date" id="field-day" name="day" data-kind="date" value/>');
    expect(form.body).toContain('<input type="datetime-local" step="0.001" id="field-starts_at" name="starts_at" data-kind="timestamp" value aria-describedby="field-starts_at-zone"/>');
    expect(form.body).toContain('<input type="number" step="0.01" id="field-fee" name="fee"');
    expect(form.body).toContain('<input type="checkbox" id="field-public" name="public" data-kind="boolean"/>');
    expect(form.body).toContain('<textarea id="field-extra" name="extra" data-kind="json" rows="4"></textarea>');
    const refused = await client.post('/admin/events/add/', { title: '', kind: 'dance', day: '', starts_at: '2026-03-01T18:30', fee: '1.234', extra: '{"a": 1}', _save: '' });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('<p class="errornote">Please correct the errors below.</p>');
    for (const field of ['title', 'kind', 'fee']) expect(refused.body).toMatch(new RegExp(`<label class="field" for="field-${field}">[^]*?<ul class="errorlist"><li>`));
    // The posted time is shown again as picked.
    expect(refused.body).toContain('id="field-starts_at" name="starts_at" data-kind="timestamp" value="2026-03-01T18:30:00.000"');
    const saved = await client.post('/admin/events/add/', { title: 'Launch', kind: 'party', day: '2026-03-01', starts_at: '2026-03-01T18:30', fee: '12.50', public: 'on', extra: '{"a": 1}', _continue: '' });
    expect(saved.status).toBe(302);
    const stored = (await api.request('GET', '/api/v1/events/1/', { token: (await api.user('reader')).token })).json;
    expect(stored).toMatchObject({ title: 'Launch', kind: 'party', day: '2026-03-01', fee: '12.50', public: true, extra: { a: 1 } });
    expect(new Date(stored.starts_at as string).toISOString()).toBe('2026-03-01T18:30:00.000Z');
    const change = await client.get(saved.location!);
    expect(change.body).toContain('value="2026-03-01T18:30:00.000"');
    expect(change.body).toContain('<input type="checkbox" id="field-public" name="public" data-kind="boolean" checked/>');
  });
});

describe('file and image fields on the forms', () => {
  let api: TestApi;
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'restfold-admin-files-'));
    api = await startApi({ FILES_STORAGE: `file:${folder}`, FILES_MAX_PARTS: '10', FILES_MAX_BODY_BYTES: String(256 * 1024) }, withGeneratedMigrations(defineApp({ collections: [posters] })));
    await makeStaff(api, (await api.user('boss', { superuser: true })).id);
  });
  afterAll(async () => {
    await api.close();
    await rm(folder, { recursive: true, force: true });
  });

  /** Posts `form` as a browser posts a form with files, with the client's cookies. */
  async function postFiles(client: AdminClient, url: string, form: FormData) {
    const encoded = new Response(form);
    const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const headers = { cookie, 'content-type': encoded.headers.get('content-type')!, accept: 'text/html' };
    return api.app.inject({ method: 'POST', url, headers, payload: Buffer.from(await encoded.arrayBuffer()) });
  }

  it('uploads through the API, shows the current file and an image preview, and refuses a wrong file beside its field', async () => {
    const client = await loggedIn(api, 'boss');
    const form = await client.get('/admin/posters/add/');
    expect(form.body).toContain('enctype="multipart/form-data"');
    expect(form.body).toContain('<input type="file" id="field-picture" name="picture" data-kind="image" accept="image/*"/>');
    expect(form.body).toContain('<input type="file" id="field-leaflet" name="leaflet" data-kind="file" accept="application/pdf"/>');
    const added = await postFiles(client, '/admin/posters/add/', formOf({ csrfmiddlewaretoken: client.csrf, title: 'Spring', _continue: '' }, { picture: [png(8, 8), 'spring.png', 'image/png'], leaflet: [pdf(), 'spring.pdf', 'application/pdf'] }));
    expect(added.statusCode).toBe(302);
    const change = await client.get(added.headers.location as string);
    expect(change.body).toMatch(/Currently: <a href="http:\/\/[^"]+">spring\.png<\/a> \(\d+ bytes\)<img class="file-preview" src="http:\/\/[^"]+" alt="spring.png"\/>/);
    expect(change.body).toMatch(/Currently: <a href="[^"]+">spring\.pdf<\/a> \(\d+ bytes\)<\/span>/);
    const id = /\/admin\/posters\/(\d+)\/change\//.exec(added.headers.location as string)![1]!;
    // A file input left empty keeps the file; a PNG posted as the PDF is refused beside the field.
    const kept = await postFiles(client, `/admin/posters/${id}/change/`, formOf({ csrfmiddlewaretoken: client.csrf, title: 'Spring!', _save: '' }, { picture: [Buffer.alloc(0), '', 'application/octet-stream'] }));
    expect(kept.statusCode).toBe(302);
    expect((await client.get(`/admin/posters/${id}/change/`)).body).toContain('>spring.png</a>');
    const wrong = await postFiles(client, `/admin/posters/${id}/change/`, formOf({ csrfmiddlewaretoken: client.csrf, title: 'Spring', _save: '' }, { leaflet: [png(2, 2), 'fake.pdf', 'application/pdf'] }));
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toMatch(/<input type="file" id="field-leaflet"[^>]*\/>[^]*?<ul class="errorlist"><li>/);
    // Without the CSRF field, or past the body limit: refused, nothing stored.
    expect((await postFiles(client, '/admin/posters/add/', formOf({ title: 'Forged' }, { picture: [png(8, 8), 'x.png', 'image/png'] }))).statusCode).toBe(403);
    expect((await postFiles(client, '/admin/posters/add/', formOf({ csrfmiddlewaretoken: client.csrf, title: 'Huge' }, { leaflet: [Buffer.alloc(300 * 1024), 'big.pdf'] }))).statusCode).toBe(413);
    const titles = ((await api.request('GET', '/api/v1/posters/', { token: (await api.user('reader')).token })).json as { results: { title: string }[] }).results.map(({ title }) => title);
    expect(titles).toEqual(['Spring!']);
  });
});
