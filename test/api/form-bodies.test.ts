/**
 * HTML forms' bodies (`application/x-www-form-urlencoded`) on create, update and partial update:
 * each value read by its field's kind as DRF's FormParser and fields read them, then validated as a
 * JSON body is, with the same errors and limits.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, isAuthenticated, joinTable, model, relations, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Label = model('form_labels', { id: fields.id(), name: fields.string({ maxLength: 20 }) });
const Item = model('form_items', {
  id: fields.id(),
  name: fields.string({ maxLength: 20 }),
  count: fields.integer({ minValue: 0 }),
  big: fields.bigint({ nullable: true }),
  price: fields.decimal({ digits: 8, places: 2 }),
  ratio: fields.float({ nullable: true }),
  active: fields.boolean({ default: true }),
  due: fields.date({ nullable: true }),
  note: fields.string({ maxLength: 20, nullable: true }),
  data: fields.json({ nullable: true }),
});
const itemLabels = joinTable('form_items', 'form_labels');

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('labels', { serializer: serializer(Label, { fields: ['id', 'name'] }), permissions: [isAuthenticated] }),
      collection('items', {
        serializer: serializer(Item, {
          fields: ['id', 'name', 'count', 'big', 'price', 'ratio', 'active', 'due', 'note', 'data', 'labels'],
          relations: { labels: relations.manyToMany(itemLabels) },
        }),
        permissions: [isAuthenticated],
      }),
    ],
  }),
);

let api: TestApi;
let user: TestUser;
let labels: number[];

beforeAll(async () => {
  api = await startApi({ MAX_BODY_BYTES: '2000' }, app);
  user = await api.user('formuser');
  labels = [];
  for (const name of ['red', 'blue']) labels.push((await api.request('POST', '/api/v1/labels/', { token: user.token, body: { name } })).json.id);
});
afterAll(() => api.close());

const FORM = 'application/x-www-form-urlencoded';
const send = (method: string, url: string, form: string | Buffer, headers: Record<string, string> = {}) =>
  api.app
    .inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${user.token}`, 'content-type': FORM, ...headers }, payload: form })
    .then((response) => ({ status: response.statusCode, json: response.json() as Record<string, unknown> }));

describe('form bodies', () => {
  it('creates a record, each value read by its kind', async () => {
    const form = new URLSearchParams([
      ['name', 'café & co'],
      ['count', '7'],
      ['big', '9007199254740993'],
      ['price', '12.50'],
      ['ratio', '0.25'],
      ['active', 'on'],
      ['due', '2024-02-29'],
      ['note', ''],
      ['data', '{"a":[1,2]}'],
      ['labels', String(labels[0])],
      ['labels', String(labels[1])],
    ]);
    const created = await send('POST', '/api/v1/items/', form.toString());
    expect(created).toMatchObject({
      status: 201,
      json: { name: 'café & co', count: 7, big: '9007199254740993', price: '12.50', ratio: 0.25, active: true, due: '2024-02-29', note: null, data: { a: [1, 2] } },
    });
    expect(created.json.labels).toEqual(labels);
  });

  it('takes an unticked checkbox for false on a whole form, and leaves it alone on a partial one', async () => {
    const created = await send('POST', '/api/v1/items/', 'name=a&count=1&price=1');
    expect(created.json).toMatchObject({ active: false, note: null, labels: [] });
    const id = created.json.id as number;
    expect((await send('PATCH', `/api/v1/items/${id}/`, 'active=true')).json).toMatchObject({ active: true, name: 'a' });
    expect((await send('PATCH', `/api/v1/items/${id}/`, 'name=b')).json).toMatchObject({ active: true, name: 'b' });
    expect((await send('PUT', `/api/v1/items/${id}/`, 'name=c&count=2&price=3&active=0')).json).toMatchObject({ active: false, name: 'c', count: 2, price: '3.00' });
  });

  it('answers the errors a JSON body gets, by field', async () => {
    const refused = await send('POST', '/api/v1/items/', 'name=&count=x&price=abc&active=maybe&due=tomorrow&data=%7Bno&ratio=&unknown=1');
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'validation_failed' });
    expect(Object.keys((refused.json as { details: object }).details)).toEqual(['data']);
    const fields = await send('POST', '/api/v1/items/', 'count=-1&price=abc&active=maybe&due=tomorrow&unknown=1');
    expect(fields.status).toBe(400);
    expect((fields.json as { details: Record<string, string[]> }).details).toMatchObject({
      name: ['This field is required.'],
      count: [expect.any(String)],
      price: [expect.any(String)],
      active: [expect.any(String)],
      due: [expect.any(String)],
      unknown: ['Unknown field.'],
    });
    const json = await api.request('POST', '/api/v1/items/', { token: user.token, body: { count: -1, price: 'abc', active: 'maybe', due: 'tomorrow', unknown: 1 } });
    expect(json.json).toEqual(fields.json);
  });

  it('holds the limits a JSON body is held to: size, encoding, UTF-8, NUL', async () => {
    expect((await send('POST', '/api/v1/items/', `name=${'x'.repeat(3000)}`)).status).toBe(413);
    expect((await send('POST', '/api/v1/items/', gzipSync(`name=${'x'.repeat(3000)}`), { 'content-encoding': 'gzip' })).status).toBe(413);
    expect((await send('POST', '/api/v1/items/', Buffer.from([0x6e, 0x3d, 0xff]))).json).toMatchObject({ code: 'parse_error' });
    expect((await send('POST', '/api/v1/items/', 'name=a%00b&count=1&price=1')).json).toMatchObject({ code: 'validation_failed', details: { name: [expect.any(String)] } });
    expect((await send('POST', '/api/v1/items/', 'name=a', { 'content-type': `${FORM}; charset=latin-1` })).status).toBe(415);
    expect((await send('POST', '/api/v1/items/', 'name=a', { 'content-type': 'text/plain' })).json).toMatchObject({ code: 'unsupported_media_type' });
  });
});
