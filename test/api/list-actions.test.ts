/**
 * A custom list action with `where` (DRF's `@action(detail=False)` answering
 * `paginate_queryset(filter_queryset(queryset.filter(...)))`): it answers exactly what the
 * collection's list answers, narrowed by its conditions, within the scope; its document is the
 * list's; declarations that could never answer are refused at start-up.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, hasPermission, model, serializer, type CustomAction } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { lintProblems } from '../support/openapi-lint.js';

const Product = model('products', {
  id: fields.id(),
  name: fields.string({ maxLength: 50 }),
  stock: fields.integer(),
  status: fields.string({ maxLength: 20, default: 'active' }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const products = serializer(Product, { fields: ['id', 'name', 'stock', 'status', 'owner_id'], readOnly: ['owner_id'], search: ['name'] });
const lowStock = { detail: false, method: 'GET', where: { stock__lt: 5 }, summary: 'Products running out' } as const;

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('products', {
        serializer: products,
        filterFields: ['status', 'stock'],
        orderingFields: ['stock', 'name'],
        actions: {
          'low-stock': lowStock,
          // Conditions that depend on the caller, answered later.
          owned: { detail: false, method: 'GET', where: async ({ user }) => ({ owner_id: user?.id ?? null, status__in: ['active', 'archived'] }) },
          archived: { detail: false, method: 'GET', where: { status: 'archived' }, permissions: [hasPermission('products.audit')] },
          // The app's bug: a field the model does not have.
          misspelt: { detail: false, method: 'GET', where: () => ({ stok__lt: 5 }) },
          // No conditions at all: never taken for none (every record).
          dated: { detail: false, method: 'GET', where: () => new Date() as never },
        },
      }),
      // The same records, each user seeing their own, in an envelope.
      collection('mine', {
        serializer: products,
        scope: ({ user }) => ({ owner_id: user?.id ?? null }),
        envelope: { record: 'product', list: 'products', count: 'count' },
        actions: { 'low-stock': lowStock },
      }),
      collection('window', {
        serializer: products,
        pagination: 'limit_offset',
        defaultOrdering: ['stock'],
        countModes: ['none'],
        actions: { 'low-stock': lowStock },
      }),
      collection('by-stock', {
        serializer: products,
        pagination: 'cursor',
        pageSize: 2,
        defaultOrdering: ['stock'],
        actions: { 'low-stock': lowStock },
      }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
const logged: string[] = [];

const get = (path: string, user: TestUser = alice, headers?: Record<string, string>) => api.request('GET', `/api/v1/${path}`, { token: user.token, headers });
const names = (reply: { json: { results: { name: string }[] } }) => reply.json.results.map(({ name }) => name);

beforeAll(async () => {
  const logStream = new Writable({ write: (chunk, _encoding, done) => done(void logged.push(String(chunk))) });
  api = await startApi({ LOG_LEVEL: 'error' }, app, { logStream });
  alice = await api.user('alice');
  bob = await api.user('bob');
  const stock: [TestUser, string, number, string][] = [
    [alice, 'anvil', 0, 'active'],
    [alice, 'bolt', 2, 'active'],
    [alice, 'chain', 4, 'archived'],
    [alice, 'drill', 5, 'active'],
    [alice, 'engine', 9, 'active'],
    [bob, 'file', 1, 'active'],
    [bob, 'gear', 7, 'active'],
  ];
  for (const [user, name, count, status] of stock) {
    const created = await api.request('POST', '/api/v1/products/', { token: user.token, body: { name, stock: count, status } });
    expect(created.status).toBe(201);
  }
});
afterAll(() => api.close());

describe('a list action with where', () => {
  it('answers a page of only the records meeting it, counted', async () => {
    const reply = await get('products/low-stock/?ordering=name');
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ count: 4, next: null, previous: null });
    expect(names(reply)).toEqual(['anvil', 'bolt', 'chain', 'file']);
  });

  it('takes the list’s filters, search, ordering, fields and page, its links at its own URL', async () => {
    const first = await get('products/low-stock/?status=active&ordering=-stock&page_size=2');
    expect(first.json).toMatchObject({ count: 3, previous: null });
    expect(names(first)).toEqual(['bolt', 'file']);
    const next = new URL(first.json.next as string);
    expect(next.pathname).toBe('/api/v1/products/low-stock/');
    const second = await get(`products/low-stock/${next.search}`);
    expect(names(second)).toEqual(['anvil']);
    expect(second.json).toMatchObject({ count: 3, next: null });
    // Its conditions AND the query string's: it never widens to what the filters alone select.
    expect(names(await get('products/low-stock/?stock__gte=4'))).toEqual(['chain']);
    expect(names(await get('products/low-stock/?search=ai'))).toEqual(['chain']);
    expect((await get('products/low-stock/?fields=name&ordering=stock')).json.results).toEqual([{ name: 'anvil' }, { name: 'file' }, { name: 'bolt' }, { name: 'chain' }]);
    expect((await get('products/low-stock/?ordering=owner_id')).status).toBe(400);
    expect((await get('products/low-stock/?page=9')).status).toBe(404);
  });

  it('answers 304 to the ETag it gave', async () => {
    const reply = await get('products/low-stock/');
    const again = await get('products/low-stock/', alice, { 'if-none-match': String(reply.headers.etag) });
    expect(again.status).toBe(304);
  });

  it('keeps to the scope: another user’s records never appear; in the collection’s envelope', async () => {
    const hers = await get('mine/low-stock/');
    expect(hers.json.count).toBe(3);
    expect(hers.json.products.map(({ name }: { name: string }) => name).sort()).toEqual(['anvil', 'bolt', 'chain']);
    const his = await get('mine/low-stock/', bob);
    expect(his.json).toMatchObject({ count: 1, products: [{ name: 'file' }] });
  });

  it('takes its conditions from a function of the request', async () => {
    const hers = await get('products/owned/?ordering=name');
    expect(names(hers)).toEqual(['anvil', 'bolt', 'chain', 'drill', 'engine']);
    expect(names(await get('products/owned/?stock__lt=5&status=active&ordering=name', bob))).toEqual(['file']);
  });

  it('checks its own permissions in place of the list’s', async () => {
    expect((await get('products/archived/')).status).toBe(403);
    const auditor = await api.user('auditor', { permissions: ['products.audit'] });
    expect(names(await get('products/archived/', auditor))).toEqual(['chain']);
    expect((await api.request('GET', '/api/v1/products/low-stock/')).status).toBe(401);
  });

  it('pages by limit and offset where the collection does, counting as the client prefers', async () => {
    const reply = await get('window/low-stock/?limit=2&offset=1');
    expect(reply.json).toMatchObject({ count: 4, previous: expect.stringContaining('/api/v1/window/low-stock/?limit=2') });
    expect(names(reply)).toEqual(['file', 'bolt']);
    expect(new URL(reply.json.next as string).pathname).toBe('/api/v1/window/low-stock/');
    const uncounted = await get('window/low-stock/?limit=2', alice, { prefer: 'count=none' });
    expect(uncounted.json.count).toBeNull();
    expect(uncounted.headers['preference-applied']).toBe('count=none');
  });

  it('pages by cursor where the collection does, its next link working at its own URL', async () => {
    const first = await get('by-stock/low-stock/');
    expect(first.json).toMatchObject({ count: null, previous: null });
    expect(names(first)).toEqual(['anvil', 'file']);
    const next = new URL(first.json.next as string);
    expect(next.pathname).toBe('/api/v1/by-stock/low-stock/');
    const second = await get(`by-stock/low-stock/${next.search}`);
    expect(names(second)).toEqual(['bolt', 'chain']);
    expect(second.json.next).toBeNull();
    const back = await get(`by-stock/low-stock/${new URL(second.json.previous as string).search}`);
    expect(names(back)).toEqual(['anvil', 'file']);
  });

  it('fails closed when its function answers no conditions it can apply: a 500 whose log says why', async () => {
    for (const [name, message] of [
      ['misspelt', 'products: action "misspelt": its where answered: "stok__lt": Unknown filter field "stok". Allowed: id, name, stock, status, owner_id.'],
      ['dated', 'products: action "dated": its where answered an object ([object Date]), not conditions (an object of field or field__lookup → value).'],
    ]) {
      logged.length = 0;
      const reply = await get(`products/${name}/`);
      expect([reply.status, reply.json.code]).toEqual([500, 'server_error']);
      expect(reply.body).not.toContain('stok');
      expect(reply.body).not.toContain('Date');
      const [line] = logged.map((text) => JSON.parse(text) as { err?: { message: string } }).filter(({ err }) => err);
      expect(line!.err!.message).toBe(message);
    }
  });

  it('is the list on the browsable page: its records, the list’s controls, and no form or link of the list’s path', async () => {
    const page = await get('products/low-stock/', alice, { accept: 'text/html' });
    expect(page.status).toBe(200);
    expect(page.body).toContain('&quot;name&quot;: &quot;chain&quot;');
    expect(page.body).not.toContain('&quot;name&quot;: &quot;drill&quot;');
    expect(page.body).toContain('id="list-controls"');
    expect(page.body).not.toContain('class="record-form"');
    // The collection's extra actions are links from its own paths.
    expect(page.body).not.toContain('href="/api/v1/products/low-stock/owned/"');
  });
});

describe('its OpenAPI operation', () => {
  it('is the list’s: its parameters and page, under its own name and summary', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    const operation = document.paths['/api/v1/products/low-stock/'].get;
    const listed = document.paths['/api/v1/products/'].get;
    expect(operation).toMatchObject({ summary: 'Products running out', operationId: 'productsLowStock', tags: ['products'] });
    const parameterNames = (op: { parameters: { name: string }[] }) => op.parameters.map(({ name }) => name).sort();
    expect(parameterNames(operation)).toEqual(parameterNames(listed));
    expect(parameterNames(operation)).toEqual(expect.arrayContaining(['page', 'page_size', 'status', 'stock__lt', 'ordering', 'search', 'fields']));
    expect(operation.responses['200']).toEqual(listed.responses['200']);
    expect(operation.responses).toHaveProperty('304');
    expect(document.paths['/api/v1/by-stock/low-stock/'].get.parameters.map(({ name }: { name: string }) => name)).toContain('cursor');
    expect(document.paths['/api/v1/mine/low-stock/'].get.responses['200']).toEqual(document.paths['/api/v1/mine/'].get.responses['200']);
    expect(await lintProblems(document)).toEqual([]);
  });
});

describe('its declaration', () => {
  const declare = (actions: Record<string, CustomAction>, options: { singleton?: () => number } = {}) => () =>
    collection('products', { serializer: products, actions, ...options });
  const handler = () => null;

  it('is refused at start-up where it could never answer', () => {
    // @ts-expect-error -- a where action has no handler: the list answers.
    expect(declare({ both: { ...lowStock, handler } })).toThrow('products: action "both": has a where, so it answers the list\'s page itself; handler cannot apply.');
    // @ts-expect-error -- only a list GET action answers a page of the list.
    expect(declare({ one: { ...lowStock, detail: true } })).toThrow('only a list GET action (detail: false, method: \'GET\')');
    // @ts-expect-error -- nor a POST.
    expect(declare({ post: { ...lowStock, method: 'POST' } })).toThrow('only a list GET action');
    // @ts-expect-error -- its answer is the list's page, in JSON or the browsable page.
    expect(declare({ csv: { ...lowStock, mediaType: 'text/csv' } })).toThrow('mediaType cannot apply');
    // @ts-expect-error -- neither a handler nor a where.
    expect(declare({ idle: { detail: false, method: 'GET' } })).toThrow('products: action "idle" needs a handler, or a where');
    expect(declare({ typo: { ...lowStock, where: { stok__lt: 5 } } })).toThrow('products: action "typo": where: "stok__lt": Unknown filter field "stok". Allowed: id, name, stock, status, owner_id.');
    expect(declare({ unfit: { ...lowStock, where: { owner_id__icontains: 'a' } } })).toThrow('"owner_id__icontains": Unknown lookup "icontains" for "owner_id". Allowed: exact, gt, gte, lt, lte, in, isnull, range.');
    expect(declare({ unset: { ...lowStock, where: { status: undefined } } })).toThrow('where: "status": undefined is no value (null means "is null").');
    // @ts-expect-error -- conditions are an object.
    expect(declare({ listed: { ...lowStock, where: [{ field: 'stock', lookup: 'lt', value: 5 }] } })).toThrow('where an array, not conditions');
    expect(declare({ own: { ...lowStock } }, { singleton: () => 1 })).toThrow('actions with where (a page of the list)');
    expect(declare({ fine: { ...lowStock, where: { stock__lt: 5, status: 'active' } }, own: { detail: false, method: 'GET', handler } })).not.toThrow();
  });
});
