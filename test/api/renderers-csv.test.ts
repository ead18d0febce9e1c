/**
 * A collection's renderers beside JSON and the browsable page: the built-in CSV one (`csvRenderer`,
 * as DRF's rest_framework_csv) and an app's own, negotiated by Accept or `?format=`; a list as CSV
 * streams every record the request selects, within its scope, filters, search and ordering.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, csvRenderer, defineApp, fields, isAuthenticated, model, serializer, type Renderer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Gadget = model('gadgets', {
  id: fields.id(),
  name: fields.string({ maxLength: 100 }),
  price: fields.decimal({ digits: 8, places: 2 }),
  stock: fields.integer(),
  active: fields.boolean({ default: true }),
  meta: fields.json({ nullable: true }),
  note: fields.string({ maxLength: 50, nullable: true }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});

const gadgets = serializer(Gadget, { fields: ['id', 'name', 'price', 'stock', 'active', 'meta', 'note'], search: ['name'] });

/** An app's own renderer: a record per line, every record of a list. */
const ndjson: Renderer = {
  mediaType: 'application/x-ndjson',
  format: 'ndjson',
  lists: 'all',
  async *render({ body, records }) {
    if (!records) {
      yield `${JSON.stringify(body)}\n`;
      return;
    }
    for await (const record of records) yield `${JSON.stringify(record)}\n`;
  },
};

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('gadgets', {
        serializer: gadgets,
        permissions: [isAuthenticated],
        scope: ({ user }) => ({ owner_id: user?.id ?? null }),
        filterFields: ['stock', 'active'],
        orderingFields: ['stock', 'name', 'note'],
        pageSize: 5,
        renderers: [csvRenderer, ndjson],
      }),
      collection('plain', { serializer: gadgets, permissions: [isAuthenticated] }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
const COUNT = 1234;

beforeAll(async () => {
  api = await startApi({}, app);
  alice = await api.user('alice');
  bob = await api.user('bob');
  const rows = Array.from({ length: COUNT }, (_, index) => ({
    name: `g${String(index).padStart(4, '0')}`,
    price: index % 2 === 0 ? '1.50' : '-2.25',
    stock: index % 10,
    active: index % 3 === 0 ? 1 : 0,
    meta: index === 0 ? JSON.stringify({ a: [1, 'x,y'] }) : null,
    note: index % 7 === 0 ? null : `n${index}`,
    owner_id: alice.id,
  }));
  for (let start = 0; start < rows.length; start += 200) await api.database.db.insertInto('gadgets').values(rows.slice(start, start + 200)).execute();
  await api.database.db.insertInto('gadgets').values({ name: 'bobs', price: '1', stock: 1, active: 1, meta: null, note: null, owner_id: bob.id }).execute();
});
afterAll(() => api.close());

const get = (url: string, accept?: string, token = alice.token) => api.request('GET', url, { token, headers: accept ? { accept } : {} });
const lines = (body: string): string[] => body.split('\r\n').slice(0, -1);

describe('CSV', () => {
  it('answers a list, by Accept or ?format=csv, as every record the scope allows, a header row first, streamed', async () => {
    for (const reply of [await get('/api/v1/gadgets/', 'text/csv'), await get('/api/v1/gadgets/?format=csv')]) {
      expect(reply.status).toBe(200);
      expect(reply.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(reply.headers['transfer-encoding']).toBe('chunked');
      expect(reply.headers.etag).toBeUndefined();
      const rows = lines(reply.body);
      expect(rows[0]).toBe('id,name,price,stock,active,meta,note');
      // Every one of Alice's records, past any page size and the store's batches; none of Bob's.
      expect(rows).toHaveLength(COUNT + 1);
      expect(rows[1]).toMatch(/^\d+,g0000,1\.50,0,true,"{""a"":\[1,""x,y""\]}",$/);
      expect(reply.body).not.toContain('bobs');
    }
  });

  it('honours filters, search, ordering (by keyset, and by a nullable field) and fields=', async () => {
    const filtered = lines((await get('/api/v1/gadgets/?format=csv&stock=3&active=false&ordering=-name&fields=name,stock')).body);
    const expected = Array.from({ length: COUNT }, (_, index) => index).filter((index) => index % 10 === 3 && index % 3 !== 0).reverse();
    expect(filtered).toEqual(['name,stock', ...expected.map((index) => `g${String(index).padStart(4, '0')},3`)]);
    const searched = lines((await get('/api/v1/gadgets/?format=csv&search=g012&fields=name')).body);
    expect(searched).toEqual(['name', ...Array.from({ length: 10 }, (_, digit) => `g012${digit}`)]);
    // A nullable ordering field cannot bound a keyset: read by page number, still every record, once each.
    const byNote = lines((await get('/api/v1/gadgets/?format=csv&ordering=note&fields=id')).body);
    expect(byNote).toHaveLength(COUNT + 1);
    expect(new Set(byNote).size).toBe(COUNT + 1);
  });

  it('answers the page a request names, and a header alone for an empty list', async () => {
    const page = lines((await get('/api/v1/gadgets/?format=csv&page=2&fields=name')).body);
    expect(page).toEqual(['name', 'g0005', 'g0006', 'g0007', 'g0008', 'g0009']);
    expect((await get('/api/v1/gadgets/?format=csv&stock=99&fields=name,stock')).body).toBe('name,stock\r\n');
  });

  it('makes a cell a spreadsheet would run as a formula text, and leaves numbers alone', async () => {
    const created = await api.request('POST', '/api/v1/gadgets/', { token: bob.token, body: { name: '=HYPERLINK("http://x")', price: '-3.00', stock: -4, note: '@SUM(A1)' } });
    expect(created.status).toBe(201);
    const reply = await get(`/api/v1/gadgets/${created.json.id}/?fields=name,price,stock,note`, 'text/csv', bob.token);
    expect(reply.status).toBe(200);
    expect(lines(reply.body)).toEqual(['name,price,stock,note', `"'=HYPERLINK(""http://x"")",'-3.00,-4,'@SUM(A1)`]);
  });

  it('renders a record as retrieve shows it, and errors as JSON', async () => {
    const missing = await get('/api/v1/gadgets/999999/?format=csv');
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ code: 'not_found' });
    const bad = await get('/api/v1/gadgets/?format=csv&stock=x');
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toBe('application/json; charset=utf-8');
    expect((await get('/api/v1/gadgets/?format=csv', undefined, '')).status).toBe(401);
  });

  it('is refused (406) by a collection that does not name it, as by the example service', async () => {
    expect((await get('/api/v1/plain/?format=csv')).status).toBe(406);
    expect((await get('/api/v1/plain/', 'text/csv')).status).toBe(406);
    expect((await get('/api/v1/plain/', 'text/csv, application/json;q=0.1')).headers['content-type']).toBe('application/json; charset=utf-8');
  });
});

describe("an app's own renderer", () => {
  it('is negotiated as the built-ins are, and streams a list whole when it asks to', async () => {
    const reply = await get('/api/v1/gadgets/?stock=5&fields=name', 'application/x-ndjson');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/x-ndjson');
    const records = reply.body.trim().split('\n').map((line) => JSON.parse(line) as unknown);
    expect(records).toHaveLength(Math.floor((COUNT - 6) / 10) + 1);
    expect(records[0]).toEqual({ name: 'g0005' });
    const one = await get('/api/v1/gadgets/?format=ndjson&page=1&fields=name');
    expect(JSON.parse(one.body)).toMatchObject({ count: COUNT, results: [{ name: 'g0000' }, { name: 'g0001' }, { name: 'g0002' }, { name: 'g0003' }, { name: 'g0004' }] });
  });

  it('is refused at start-up where its media type or format clashes', () => {
    expect(() => collection('x', { serializer: gadgets, renderers: [{ ...ndjson, format: 'json' }] })).toThrow(/clashes with application\/json/);
    expect(() => collection('x', { serializer: gadgets, renderers: [csvRenderer, { ...ndjson, mediaType: 'text/csv' }] })).toThrow(/clashes with text\/csv/);
    expect(() => collection('x', { serializer: gadgets, renderers: [{ ...ndjson, mediaType: 'application/x-ndjson; charset=utf-8' }] })).toThrow(/type\/subtype/);
  });
});
