/**
 * A sum of decimals (computed.sum) is exact on both databases: PostgreSQL's numeric sums them; on
 * SQLite, whose sum() adds doubles, the store's own decimal_sum does, its text exact however many
 * digits the sum has.
 */
import { describe, expect, it } from 'vitest';
import { collection, computed, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { servedWithUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Order = model('orders', { id: fields.id(), name: fields.string({ maxLength: 100 }) });
const Line = model('lines', {
  id: fields.id(),
  order_id: fields.foreignKey('orders'),
  quantity: fields.bigint(),
  unit_price: fields.decimal({ digits: 15, places: 2 }),
});

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('orders', {
        serializer: serializer(Order, {
          fields: ['id', 'name', 'total', 'prices'],
          computed: {
            total: computed.sum(Line, 'order_id', { of: ['quantity', 'unit_price'], default: 0 }),
            prices: computed.sum(Line, 'order_id', { of: 'unit_price' }),
          },
        }),
        orderingFields: ['prices'],
      }),
      collection('lines', { serializer: serializer(Line, { fields: ['id', 'order_id', 'quantity', 'unit_price'] }) }),
    ],
  }),
);

const served = servedWithUser(app, 'alice');
const post = async (path: string, body: unknown) => {
  const reply = await served.api.request('POST', path, { token: served.user.token, body });
  expect(reply.status).toBe(201);
  return reply.json.id as number;
};

describe('a sum of decimals', () => {
  it('is exact past a double’s digits, and a sum of tenths is exact too', async () => {
    const big = await post('/api/v1/orders/', { name: 'big' });
    const lines = [
      ['270215977615', '9999999999999.99'],
      ['1', '0.01'],
      ['-3', '1234567890123.45'],
    ] as const;
    for (const [quantity, unit_price] of lines) await post('/api/v1/lines/', { order_id: big, quantity, unit_price });
    const small = await post('/api/v1/orders/', { name: 'small' });
    for (let line = 0; line < 10; line++) await post('/api/v1/lines/', { order_id: small, quantity: 1, unit_price: '0.10' });

    const exact = lines.reduce((sum, [quantity, price]) => sum + BigInt(quantity) * BigInt(price.replace('.', '')), 0n);
    const cents = (value: bigint) => `${value / 100n}.${String(value % 100n).padStart(2, '0')}`;
    const read = async (id: number) => (await served.api.request('GET', `/api/v1/orders/${id}/`, { token: served.user.token })).json;
    expect(await read(big)).toMatchObject({ total: cents(exact), prices: '11234567890123.45' });
    expect(await read(small)).toMatchObject({ total: '1.00', prices: '1.00' });

    const ordered = await served.api.request('GET', '/api/v1/orders/?ordering=prices', { token: served.user.token });
    expect(ordered.json.results.map((order: { name: string }) => order.name)).toEqual(['small', 'big']);
  });
});
