/**
 * Value validators on fields, through HTTP on SQLite and PostgreSQL: minValue and maxValue
 * (integers, floats, decimals compared as numbers, dates, timestamps), minLength and pattern
 * (searched, as DRF's RegexValidator does), and custom validators (a message, several, a Promise,
 * or a thrown FieldError). Every failure of every field is reported in one 400, in DRF's words;
 * only bodies are held to them (a PATCH to the fields it sends), never filters; the bounds are in
 * the OpenAPI document and in the browsable form's inputs.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { collection, defineApp, FieldError, fields, model, serializer } from '../../src/framework/index.js';
import { servedWithUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { lintProblems } from '../support/openapi-lint.js';

/** The values each custom validator of `note` saw, to tell which writes ran them. */
const seen: unknown[] = [];

const Product = model('checked_products', {
  id: fields.id(),
  sku: fields.string({ maxLength: 12, minLength: 3, pattern: /^[A-Z]{3}-\d+$/ }),
  name: fields.string({ maxLength: 40, minLength: 2, nullable: true }),
  price: fields.decimal({ digits: 10, places: 2, minValue: 0, maxValue: '99999.99' }),
  discount: fields.decimal({ digits: 4, places: 2, minValue: '-5', maxValue: 10, nullable: true }),
  stock: fields.integer({ minValue: 0, default: 0 }),
  weight: fields.float({ minValue: 0.5, maxValue: 100, nullable: true }),
  launch: fields.date({ minValue: '2020-01-01', maxValue: '2099-12-31', nullable: true }),
  expires: fields.timestamp({ minValue: new Date('2020-01-01T00:00:00Z'), nullable: true }),
  code: fields.string({ maxLength: 20, pattern: 'x\\d', nullable: true }),
  note: fields.text({
    nullable: true,
    validators: [
      (value) => {
        seen.push(value);
        return value.includes('spam') ? 'No spam.' : undefined;
      },
      async (value) => {
        await sleep(1);
        return value.startsWith('!') ? ['No shouting.', 'Be kind.'] : undefined;
      },
      (value) => {
        if (value.endsWith('boom')) throw new FieldError('It went boom.');
      },
    ],
  }),
});

const served = servedWithUser(
  withGeneratedMigrations(
    defineApp({
      collections: [
        collection('products', {
          serializer: serializer(Product, { fields: Object.keys(Product.fields) }),
          filterFields: ['price', 'stock', 'launch'],
          actions: {
            restock: {
              detail: true,
              method: 'POST',
              body: { quantity: fields.integer({ minValue: 1 }) },
              handler: ({ body }) => body,
            },
          },
        }),
      ],
    }),
  ),
  'alice',
);
const request = (method: string, url: string, body?: unknown) => served.api.request(method, url, { token: served.user.token, body });
const create = (body: Record<string, unknown>) => request('POST', '/api/v1/products/', body);
const valid = { sku: 'ABC-1', price: '10.00' };
let skus = 0;
/** A valid product of a SKU of its own, created, and its URL. */
async function created(body: Record<string, unknown> = {}): Promise<string> {
  const reply = await create({ ...valid, sku: `NEW-${++skus}`, ...body });
  expect(reply.status, JSON.stringify(reply.json)).toBe(201);
  return `/api/v1/products/${reply.json.id}/`;
}

/** The 400's details of `body`, created. */
async function refused(body: Record<string, unknown>): Promise<Record<string, string[]>> {
  const reply = await create({ ...valid, ...body });
  expect([reply.status, reply.json.code], JSON.stringify(reply.json)).toEqual([400, 'validation_failed']);
  return reply.json.details;
}

describe('bounds', () => {
  it('accept values on and within them', async () => {
    const reply = await create({ ...valid, price: 0, discount: '-5', stock: 0, weight: 100, launch: '2020-01-01', expires: '2020-01-01T00:00:00Z' });
    expect(reply.status, JSON.stringify(reply.json)).toBe(201);
    expect(reply.json).toMatchObject({ price: '0.00', discount: '-5.00', stock: 0, weight: 100, launch: '2020-01-01', expires: '2020-01-01T00:00:00.000Z' });
  });

  it.each([
    ['stock', -1, 'Ensure this value is greater than or equal to 0.'],
    ['stock', '-1', 'Ensure this value is greater than or equal to 0.'],
    ['price', '-0.01', 'Ensure this value is greater than or equal to 0.'],
    ['price', '100000', 'Ensure this value is less than or equal to 99999.99.'],
    ['weight', 0.49, 'Ensure this value is greater than or equal to 0.5.'],
    ['weight', 100.5, 'Ensure this value is less than or equal to 100.'],
    ['launch', '2019-12-31', 'Ensure this value is greater than or equal to 2020-01-01.'],
    ['launch', '2100-01-01', 'Ensure this value is less than or equal to 2099-12-31.'],
    ['expires', '2019-12-31T23:59:59.999Z', 'Ensure this value is greater than or equal to 2020-01-01T00:00:00.000Z.'],
    ['expires', '2020-01-01T00:30:00+01:00', 'Ensure this value is greater than or equal to 2020-01-01T00:00:00.000Z.'],
  ])('refuse %s = %j in DRF’s words', async (field, sent, message) => {
    expect(await refused({ [field]: sent })).toEqual({ [field]: [message] });
  });

  it('compare decimals as numbers, not as their text', async () => {
    // As text, "9.99" sorts after "10.00" and "-4.99" before "-5.00".
    for (const accepted of ['9.99', 9.5, '10', '-4.99', '-0.5']) {
      const reply = await create({ ...valid, sku: `DEC-${String(accepted).replace(/\D/g, '')}`, discount: accepted });
      expect(reply.status, `${accepted}: ${JSON.stringify(reply.json)}`).toBe(201);
    }
    expect(await refused({ discount: '10.01' })).toEqual({ discount: ['Ensure this value is less than or equal to 10.'] });
    expect(await refused({ discount: -5.01 })).toEqual({ discount: ['Ensure this value is greater than or equal to -5.'] });
  });

  it('hold a body to its kind first: what does not parse is refused for that alone', async () => {
    expect(await refused({ stock: 'many', price: '1.005' })).toEqual({
      stock: ['A valid integer is required.'],
      price: ['Ensure that there are no more than 2 decimal places.'],
    });
  });

  it('let null through a nullable field', async () => {
    await created({ weight: null, launch: null, discount: null });
  });
});

describe('lengths and patterns', () => {
  it('report every failure of a field, and of every field, at once', async () => {
    expect(await refused({ sku: 'ab', name: 'x', stock: -3 })).toEqual({
      sku: ['Ensure this field has at least 3 characters.', 'This value does not match the required pattern.'],
      name: ['Ensure this field has at least 2 characters.'],
      stock: ['Ensure this value is greater than or equal to 0.'],
    });
  });

  it('count characters, not UTF-16 units', async () => {
    expect(await refused({ name: '😀' })).toEqual({ name: ['Ensure this field has at least 2 characters.'] });
    await created({ name: '😀😀' });
  });

  it('search for a pattern unless it is anchored, as DRF’s RegexValidator does', async () => {
    await created({ code: 'abx1yz' });
    expect(await refused({ code: 'abc' })).toEqual({ code: ['This value does not match the required pattern.'] });
    // Anchored at both ends: the whole SKU.
    expect(await refused({ sku: 'xABC-1' })).toEqual({ sku: ['This value does not match the required pattern.'] });
  });

  it('refuse an over-long value for its length alone: the pattern never runs on it', async () => {
    expect(await refused({ sku: 'a'.repeat(13) })).toEqual({ sku: ['Ensure this field has no more than 12 characters.'] });
  });

  it('store a blank string on a nullable field with a minimum length as null', async () => {
    const url = await created({ name: '' });
    expect((await request('GET', url)).json.name).toBeNull();
  });
});

describe('custom validators', () => {
  it('report their messages in their order, sync or async, returned or thrown, with the built-in ones', async () => {
    expect(await refused({ note: '!spam boom', stock: -1 })).toEqual({
      note: ['No spam.', 'No shouting.', 'Be kind.', 'It went boom.'],
      stock: ['Ensure this value is greater than or equal to 0.'],
    });
    expect(await refused({ note: 'boom' })).toEqual({ note: ['It went boom.'] });
    await created({ note: 'fine' });
  });

  it('store nothing when any field fails', async () => {
    const before = (await request('GET', '/api/v1/products/?page_size=1')).json.count as number;
    await refused({ sku: 'ZZZ-9', note: 'spam' });
    expect((await request('GET', '/api/v1/products/?page_size=1')).json.count).toBe(before);
  });

  it('never see a null', async () => {
    seen.length = 0;
    await created({ note: null });
    expect(seen).toEqual([]);
  });
});

describe('updates', () => {
  it('hold a PUT to every field and a PATCH to the fields it sends', async () => {
    const url = await created({ note: 'first' });
    seen.length = 0;
    const patched = await request('PATCH', url, { stock: 4 });
    expect([patched.status, patched.json.stock]).toEqual([200, 4]);
    expect(seen).toEqual([]);
    const refusedPatch = await request('PATCH', url, { stock: -4, note: 'spam' });
    expect([refusedPatch.status, refusedPatch.json.details]).toEqual([400, { stock: ['Ensure this value is greater than or equal to 0.'], note: ['No spam.'] }]);
    const put = await request('PUT', url, { ...valid, sku: 'PUT-1', price: '-1', note: 'second' });
    expect([put.status, put.json.details]).toEqual([400, { price: ['Ensure this value is greater than or equal to 0.'] }]);
    expect(seen).toEqual(['spam', 'second']);
    const stored = (await request('GET', url)).json;
    expect([stored.stock, stored.note]).toEqual([4, 'first']);
  });

  it('hold a custom action’s declared body to its fields’ rules', async () => {
    const url = await created();
    const refusedAction = await request('POST', `${url}restock/`, { quantity: 0 });
    expect([refusedAction.status, refusedAction.json.details]).toEqual([400, { quantity: ['Ensure this value is greater than or equal to 1.'] }]);
    const accepted = await request('POST', `${url}restock/`, { quantity: 2 });
    expect([accepted.status, accepted.json]).toEqual([200, { quantity: 2 }]);
  });
});

describe('filters', () => {
  it('take any value of the kind: validators hold bodies only', async () => {
    await created({ price: '12.50', stock: 3, launch: '2021-06-01' });
    const below = await request('GET', '/api/v1/products/?stock__lt=-1');
    expect([below.status, below.json.count]).toEqual([200, 0]);
    const priced = await request('GET', '/api/v1/products/?price__gte=12.5&price__lte=12.5&stock__gte=3&launch__lt=2030-01-01');
    expect(priced.status, JSON.stringify(priced.json)).toBe(200);
    expect(priced.json.results.map((product: { price: string }) => product.price)).toEqual(['12.50']);
    const early = await request('GET', '/api/v1/products/?launch__lt=1999-01-01&price__lt=-100');
    expect([early.status, early.json.count]).toEqual([200, 0]);
  });
});

describe('the OpenAPI document', () => {
  it('carries the bounds, lengths and patterns, and passes the linter', async () => {
    const document = (await request('GET', '/api/v1/schema/')).json;
    const { properties } = document.components.schemas.CheckedProduct;
    expect(properties.stock).toMatchObject({ type: 'integer', minimum: 0 });
    expect(properties.price).toMatchObject({ type: 'string', format: 'decimal', minimum: 0, maximum: 99999.99 });
    expect(properties.discount).toMatchObject({ minimum: -5, maximum: 10 });
    expect(properties.weight).toMatchObject({ type: ['number', 'null'], minimum: 0.5, maximum: 100 });
    expect(properties.sku).toEqual({ type: 'string', maxLength: 12, minLength: 3, pattern: '^[A-Z]{3}-\\d+$' });
    // A blank string is accepted beside the values the rules allow.
    expect(properties.name).toEqual({ type: ['string', 'null'], maxLength: 40, anyOf: [{ type: 'string', minLength: 2 }, { type: 'string', maxLength: 0 }, { type: 'null' }] });
    expect(properties.code).toMatchObject({ anyOf: [{ type: 'string', pattern: 'x\\d' }, { type: 'string', maxLength: 0 }, { type: 'null' }] });
    // JSON Schema bounds numbers only: a date's and a timestamp's bounds are an extension's.
    expect(properties.launch).toMatchObject({ format: 'date', 'x-minimum': '2020-01-01', 'x-maximum': '2099-12-31' });
    expect(properties.expires).toMatchObject({ format: 'date-time', 'x-minimum': '2020-01-01T00:00:00.000Z' });
    expect(JSON.stringify(document)).toContain('"quantity":{"type":"integer","format":"int64","minimum":1}');
    expect(await lintProblems(document)).toEqual([]);
  });
});

describe('the browsable form', () => {
  it('gives the inputs the bounds, lengths and patterns the browser checks', async () => {
    const page = await served.api.request('GET', '/api/v1/products/', { token: served.user.token, headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const input = (name: string): string => new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(page.body)?.[0] ?? '';
    expect(input('stock')).toMatch(/type="number".*min="0"/);
    expect(input('price')).toMatch(/min="0".*max="99999.99"/);
    expect(input('launch')).toMatch(/type="date".*min="2020-01-01".*max="2099-12-31"/);
    expect(input('sku')).toContain('minlength="3"');
    expect(input('sku')).toContain('pattern=".*(?:^[A-Z]{3}-\\d+$).*"');
    expect(input('code')).toContain('pattern=".*(?:x\\d).*"');
  });
});

describe('declarations', () => {
  it.each([
    ['a minimum above the maximum', () => fields.integer({ minValue: 5, maxValue: 1 })],
    ['a bound that is no value of the kind', () => fields.decimal({ digits: 4, places: 2, minValue: '0.001' })],
    ['a bound beyond a date', () => fields.date({ minValue: '2020-02-30' })],
    ['a pattern that is no RegExp or text', () => fields.string({ pattern: 5 as never })],
    ['a pattern that does not compile', () => fields.string({ pattern: '(' })],
    ['a sticky pattern', () => fields.string({ pattern: /a/y })],
    ['a minimum length above the maximum', () => fields.string({ maxLength: 2, minLength: 3 })],
    ['a validator that is no function', () => fields.string({ validators: ['nope' as never] })],
  ])('refuse %s', (_, declare) => {
    expect(declare).toThrow(Error);
  });
});
