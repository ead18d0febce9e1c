/**
 * An atomic update (`increment`, `F()`) keeps its field in range as a body's value is kept: a
 * result outside its kind's range (32-bit, a number's exact integers, 64-bit, a decimal's digits)
 * or its declared minValue/maxValue is refused with 400 naming the field, and nothing is stored; a
 * result exactly at the bound is stored exactly, on both databases.
 */
import { describe, expect, it } from 'vitest';
import { collection, defineApp, F, fields, increment, model, recordStore, serializer } from '../../src/framework/index.js';
import { servedWithUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Counter = model('counters', {
  id: fields.id(),
  small: fields.integer({ bits: 32, default: 0 }),
  wide: fields.integer({ default: 0 }),
  huge: fields.bigint({ default: 0 }),
  price: fields.decimal({ digits: 5, places: 2, default: '0' }),
  capped: fields.integer({ minValue: 0, maxValue: 10, default: 0 }),
});
const counterSerializer = serializer(Counter, { fields: ['id', 'small', 'wide', 'huge', 'price', 'capped'] });

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('counters', {
        serializer: counterSerializer,
        actions: {
          bump: {
            detail: true,
            method: 'POST',
            body: { field: fields.string({ maxLength: 20 }), by: fields.string({ maxLength: 30 }), times: fields.string({ maxLength: 30, required: false }) },
            handler: async ({ database, record, body }) => {
              const { field, by, times } = body as { field: string; by: string; times?: string };
              const store = recordStore(database, counterSerializer, { name: 'counter' });
              await store.updateMatching({ id: record!.id }, { [field]: times === undefined ? increment(by) : F(field).times(times).plus(by) });
              return store.get(record!.id as number);
            },
          },
        },
      }),
    ],
  }),
);

const served = servedWithUser(app, 'alice');
const request = (method: string, path: string, body?: unknown) => served.api.request(method, path, { token: served.user.token, body });

async function counter(values: Record<string, unknown>): Promise<number> {
  const reply = await request('POST', '/api/v1/counters/', values);
  expect(reply.status).toBe(201);
  return reply.json.id as number;
}
const bump = (id: number, field: string, by: string, times?: string) => request('POST', `/api/v1/counters/${id}/bump/`, { field, by, ...(times && { times }) });
const stored = async (id: number) => (await request('GET', `/api/v1/counters/${id}/`)).json;

describe('an atomic update past its field range', () => {
  it.each([
    ['small', 2147483646, '1', 2147483647, 'Ensure this value fits in 32 bits.'],
    ['small', -2147483647, '-1', -2147483648, 'Ensure this value fits in 32 bits.'],
    ['wide', 9007199254740990, '1', 9007199254740991, 'Ensure this value is between -9007199254740991 and 9007199254740991.'],
    ['huge', '9223372036854775806', '1', '9223372036854775807', 'Ensure this value fits in 64 bits.'],
    ['huge', '-9223372036854775807', '-1', '-9223372036854775808', 'Ensure this value fits in 64 bits.'],
    ['price', '999.98', '0.01', '999.99', 'Ensure that there are no more than 3 digits before the decimal point.'],
    ['capped', 9, '1', 10, 'Ensure this value is less than or equal to 10.'],
    ['capped', 1, '-1', 0, 'Ensure this value is greater than or equal to 0.'],
  ])('%s from %s by %s: exactly at the bound stored, one step past refused with 400, nothing stored', async (field, start, by, bound, message) => {
    const id = await counter({ [field]: start });
    const atBound = await bump(id, field, by);
    expect(atBound.status).toBe(200);
    expect(atBound.json[field]).toEqual(bound);

    const past = await bump(id, field, by);
    expect(past.status).toBe(400);
    expect(past.json).toMatchObject({ code: 'validation_failed', details: { [field]: [message] } });
    expect((await stored(id))[field]).toEqual(bound);
  });

  it('refuses a result far past 64 bits (no float stored in an integer column), and an expression whose middle overflows', async () => {
    const id = await counter({ huge: '9223372036854775807', small: 2 });
    const far = await bump(id, 'huge', '9223372036854775807');
    expect(far.status).toBe(400);
    expect(far.json.details).toEqual({ huge: ['Ensure this value fits in 64 bits.'] });
    // 2 × 2^30 passes 32 bits midway; minus 2^30 brings it back: the result is what counts, exactly.
    const middle = await bump(id, 'small', '-1073741824', '1073741824');
    expect(middle.status).toBe(200);
    expect(middle.json).toMatchObject({ small: 1073741824, huge: '9223372036854775807' });
  });

  it('refuses the whole update when one of the records it selects would leave the range, and stores nothing', async () => {
    const low = await counter({ capped: 3 });
    const high = await counter({ capped: 10 });
    const store = recordStore(served.api.database, counterSerializer, { name: 'counter' });
    await expect(store.updateMatching({ id__in: [low, high] }, { capped: increment(1) })).rejects.toMatchObject({
      status: 400,
      details: { capped: ['Ensure this value is less than or equal to 10.'] },
    });
    expect([(await stored(low)).capped, (await stored(high)).capped]).toEqual([3, 10]);
    expect(await store.updateMatching({ id__in: [low, high] }, { capped: increment(-1) })).toBe(2);
    expect([(await stored(low)).capped, (await stored(high)).capped]).toEqual([2, 9]);
  });

  it('adds decimals exactly, as PostgreSQL does', async () => {
    const id = await counter({ price: '0.10' });
    for (let step = 0; step < 10; step++) expect((await bump(id, 'price', '0.20')).status).toBe(200);
    expect((await stored(id)).price).toBe('2.10');
  });
});
