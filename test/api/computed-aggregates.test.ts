/**
 * Aggregates as computed fields (Django's `annotate(total=Sum(…))`): sum, average, least and
 * greatest of related rows' values, or of a product of two of them (an order's total: its lines'
 * quantity × unit price), over a reverse foreign key or a many-to-many, with a filter on the
 * related rows. Read in the page's own statement; a decimal stays a decimal's text, an integer an
 * integer; no related row is null unless a default says otherwise; orderable; and a related row
 * the request may not see is not aggregated.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, computed, defineApp, fields, joinTable, model, relations, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const Order = model('orders', { id: fields.id(), name: fields.string({ maxLength: 100 }) });
const Tag = model('tags', {
  id: fields.id(),
  name: fields.string({ maxLength: 100 }),
  weight: fields.integer(),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const Line = model('lines', {
  id: fields.id(),
  order_id: fields.foreignKey('orders'),
  quantity: fields.integer(),
  unit_price: fields.decimal({ digits: 10, places: 2 }),
  status: fields.string({ maxLength: 20, default: 'active' }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const orderTags = joinTable('orders', 'tags');
const total = computed.sum(Line, 'order_id', { of: ['quantity', 'unit_price'], default: 0 });

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('orders', {
        serializer: serializer(Order, {
          fields: ['id', 'name', 'tags', 'total', 'active_total', 'quantity', 'avg_quantity', 'avg_price', 'cheapest', 'dearest', 'big_lines', 'tag_weight'],
          relations: { tags: relations.manyToMany(orderTags) },
          computed: {
            total,
            active_total: computed.sum(Line, 'order_id', { of: ['quantity', 'unit_price'], where: { status: 'active' }, default: 0 }),
            quantity: computed.sum(Line, 'order_id', { of: 'quantity' }),
            avg_quantity: computed.avg(Line, 'order_id', { of: 'quantity' }),
            avg_price: computed.avg(Line, 'order_id', { of: 'unit_price' }),
            cheapest: computed.min(Line, 'order_id', { of: 'unit_price' }),
            dearest: computed.max(Line, 'order_id', { of: 'unit_price' }),
            big_lines: computed.max(Line, 'order_id', { of: 'quantity', where: [{ field: 'quantity', lookup: 'gte', value: 5 }] }),
            tag_weight: computed.sum(Tag, orderTags, { of: 'weight' }),
          },
        }),
        orderingFields: ['total', 'quantity'],
      }),
      // Each user sees their own lines only: another's are no part of what they see aggregated.
      collection('lines', {
        serializer: serializer(Line, {
          fields: ['id', 'order_id', 'quantity', 'unit_price', 'status', 'owner_id', 'order'],
          nested: { order: { source: 'order_id', serializer: serializer(Order, { name: 'OrderTotal', fields: ['id', 'total'], computed: { total } }) } },
        }),
        scope: ({ user }) => ({ owner_id: user?.id ?? null }),
      }),
      // And their own tags.
      collection('tags', { serializer: serializer(Tag, { fields: ['id', 'name', 'weight'] }), scope: ({ user }) => ({ owner_id: user?.id ?? null }) }),
    ],
  }),
);

const sent: string[] = [];
let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let full: number;
let empty: number;
let single: number;

const post = async (path: string, user: TestUser, body: unknown) => {
  const reply = await api.request('POST', `/api/v1/${path}/`, { token: user.token, body });
  expect(reply.status, JSON.stringify(reply.json)).toBe(201);
  return reply.json;
};
const get = async (path: string, user: TestUser) => (await api.request('GET', `/api/v1/${path}`, { token: user.token })).json;

beforeAll(async () => {
  api = await startApi({}, app, { appDatabase: recording(sent) });
  alice = await api.user('alice');
  bob = await api.user('bob');
  const heavy = (await post('tags', alice, { name: 'heavy', weight: 3 })).id;
  const fragile = (await post('tags', alice, { name: 'fragile', weight: 4 })).id;
  full = (await post('orders', alice, { name: 'full', tags: [heavy, fragile] })).id;
  empty = (await post('orders', alice, { name: 'empty' })).id;
  single = (await post('orders', alice, { name: 'single' })).id;
  await post('lines', alice, { order_id: full, quantity: 2, unit_price: '10.50' });
  await post('lines', alice, { order_id: full, quantity: 3, unit_price: '1.25', status: 'cancelled' });
  await post('lines', alice, { order_id: full, quantity: 1, unit_price: '0.20' });
  await post('lines', alice, { order_id: single, quantity: 1, unit_price: '30.00' });
  await post('lines', bob, { order_id: full, quantity: 10, unit_price: '100.00' });
});
afterAll(() => api.close());

describe('sum, avg, min and max over related rows', () => {
  it('aggregate the related rows’ values, a product of two fields, and those a filter keeps', async () => {
    expect(await get(`orders/${full}/`, alice)).toEqual({
      id: full,
      name: 'full',
      tags: expect.any(Array),
      // 2 × 10.50 + 3 × 1.25 + 1 × 0.20, a decimal's text at the product's places.
      total: '24.95',
      // The cancelled line left out.
      active_total: '21.20',
      quantity: 6,
      avg_quantity: 2,
      // (10.50 + 1.25 + 0.20) / 3, rounded to the field's places.
      avg_price: '3.98',
      cheapest: '0.20',
      dearest: '10.50',
      // No line of 5 or more.
      big_lines: null,
      tag_weight: 7,
    });
  });

  it('are null over no related row, or the default', async () => {
    expect(await get(`orders/${empty}/`, alice)).toMatchObject({
      total: '0.00',
      active_total: '0.00',
      quantity: null,
      avg_quantity: null,
      avg_price: null,
      cheapest: null,
      dearest: null,
      big_lines: null,
      tag_weight: null,
    });
  });

  it('are computed on the record a write answers with', async () => {
    const created = await post('orders', alice, { name: 'new' });
    expect(created).toMatchObject({ total: '0.00', quantity: null, tag_weight: null });
  });

  it('aggregate only the related rows the request may see', async () => {
    expect(await get(`orders/${full}/`, bob)).toMatchObject({
      total: '1000.00',
      active_total: '1000.00',
      quantity: 10,
      avg_quantity: 10,
      avg_price: '100.00',
      cheapest: '100.00',
      dearest: '100.00',
      big_lines: 10,
      // Alice's tags, which bob does not see, through a join table's links he does not see either.
      tag_weight: null,
    });
    expect(await get(`orders/${single}/`, bob)).toMatchObject({ total: '0.00', quantity: null });
  });

  it('are computed for a nested record too, correlated to the joined row', async () => {
    const lines = await get('lines/?ordering=id', alice);
    expect(lines.results[0].order).toEqual({ id: full, total: '24.95' });
    expect((await get('lines/?ordering=id', bob)).results[0].order).toEqual({ id: full, total: '1000.00' });
  });

  it('are read in the page’s own statements', async () => {
    sent.length = 0;
    const page = await get('orders/?ordering=id', alice);
    const statements = sent.length;
    expect(page.results.map((order: { total: string }) => order.total).slice(0, 3)).toEqual(['24.95', '0.00', '30.00']);
    sent.length = 0;
    await get('orders/?ordering=id&fields=id,name', alice);
    expect(statements).toBe(sent.length);
  });
});

describe('ordering by an aggregate', () => {
  it('orders by the value as a number, of the rows the request may see', async () => {
    const names = async (ordering: string, user: TestUser) => (await get(`orders/?ordering=${ordering}&fields=name&page_size=3`, user)).results.map(({ name }: { name: string }) => name);
    // 30.00 above 24.95 (as numbers, not as text), then the empty orders by id.
    expect(await names('-total', alice)).toEqual(['single', 'full', 'empty']);
    expect(await names('-total', bob)).toEqual(['full', 'empty', 'single']);
  });

  it('sorts null (no related row) as the largest value on both databases', async () => {
    const names = async (ordering: string) => (await get(`orders/?ordering=${ordering}&fields=name&page_size=100`, alice)).results.map(({ name }: { name: string }) => name);
    const ascending = await names('quantity');
    expect(ascending.slice(0, 2)).toEqual(['single', 'full']);
    const descending = await names('-quantity');
    expect(descending.slice(-2)).toEqual(['full', 'single']);
  });
});

describe('aggregates in the OpenAPI document', () => {
  it('are typed: a decimal’s text, an integer, a number; nullable without a default', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    const order = document.components.schemas.Order.properties;
    expect(order.total).toMatchObject({ type: 'string', format: 'decimal', readOnly: true });
    expect(order.quantity).toMatchObject({ type: ['integer', 'null'], readOnly: true });
    expect(order.avg_quantity).toMatchObject({ type: ['number', 'null'] });
    expect(order.avg_price).toMatchObject({ type: ['string', 'null'], format: 'decimal' });
    expect(order.tag_weight).toMatchObject({ type: ['integer', 'null'] });
  });
});

describe('aggregate declarations, checked at start-up', () => {
  it('take numeric fields of the related model, and its own fields in a filter', () => {
    expect(() => computed.sum(Line, 'order_id', { of: 'status' })).toThrow(/"status" is no numeric field of lines/);
    expect(() => computed.sum(Line, 'order_id', { of: ['quantity', 'price'] })).toThrow(/"price" is no numeric field of lines/);
    expect(() => computed.sum(Line, 'order', { of: 'quantity' })).toThrow(/"order" is no field of lines/);
    expect(() => computed.sum(Line, 'order_id', { of: 'quantity', where: { colour: 'red' } })).toThrow(/colour/);
    expect(() => computed.sum(Line, orderTags, { of: 'quantity' })).toThrow(/links to tags/);
    expect(() => computed.sum(Line, 'order_id', { of: 'quantity', default: Number.NaN })).toThrow(/default/);
  });
});
