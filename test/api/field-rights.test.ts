/**
 * Fields only some users may write (issue 46): a serializer's `writableBy` names the permission
 * that lets a request write a field. Another's body setting it is refused whole with 403 and
 * `details.<field>` (401 when anonymous), on create, bulk create, PUT and PATCH, and nothing is
 * stored; a body without it, or an update sending the value the record has, passes for everyone;
 * the OpenAPI document says who may write it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowAny, collection, defineApp, fields, hasPermission, isOwner, model, serializer } from '../../src/framework/index.js';
import { startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Event = model('events', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  price: fields.decimal({ digits: 8, places: 2, nullable: true }),
  owner_id: fields.foreignKey('users', { nullable: true, default: ({ userId }) => userId }),
  note: fields.string({ maxLength: 100, nullable: true }),
});

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('events', {
        serializer: serializer(Event, {
          fields: ['id', 'title', 'price', 'owner_id', 'note'],
          readOnly: ['owner_id'],
          rename: { note: 'ownerNote' },
          // Only the record's owner may change the note (asked of the stored record on an update).
          writableBy: { price: hasPermission('events.set_price'), note: isOwner('owner_id') },
        }),
        permissions: [allowAny],
        bulkCreate: { max: 10 },
      }),
    ],
  }),
);

const PRICE_REFUSED = ['You may not set this field: it needs the permission "events.set_price".'];

let api: TestApi;
let manager: TestUser;
let clerk: TestUser;

beforeAll(async () => {
  api = await startApi({}, app);
  manager = await api.user('manager', { permissions: ['events.set_price'] });
  clerk = await api.user('clerk');
});
afterAll(() => api.close());

const send = (method: string, path: string, user: TestUser | undefined, body: unknown): Promise<Reply> =>
  api.request(method, `/api/v1/events/${path}`, { token: user?.token, body });
const stored = async (): Promise<unknown[]> =>
  (await api.database.db.selectFrom('events').select(['title', 'price']).orderBy('id').execute()).map((row) => [row.title, row.price === null ? null : Number(row.price)]);
const expectRefused = (reply: Reply, status: number, code: string, details: Record<string, string[]>): void => {
  expect(reply.status, JSON.stringify(reply.json)).toBe(status);
  expect(reply.json.code).toBe(code);
  expect(reply.json.details).toEqual(details);
};

describe('a field only some users may write', () => {
  it('refuses a create setting it without the permission (403, details.price), storing nothing; takes it from a holder', async () => {
    const before = await stored();
    expectRefused(await send('POST', '', clerk, { title: 'Gala', price: '10.00' }), 403, 'permission_denied', { price: PRICE_REFUSED });
    expect(await stored()).toEqual(before);
    // Even a price of null is a write of it.
    expectRefused(await send('POST', '', clerk, { title: 'Gala', price: null }), 403, 'permission_denied', { price: PRICE_REFUSED });
    // The refusal comes before the values are judged: an invalid price is still a 403.
    expectRefused(await send('POST', '', clerk, { title: 'Gala', price: 'free' }), 403, 'permission_denied', { price: PRICE_REFUSED });
    const made = await send('POST', '', manager, { title: 'Opera', price: '45.50' });
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ title: 'Opera', price: '45.50' });
  });

  it('answers an anonymous body setting it with 401 and the same details', async () => {
    const reply = await send('POST', '', undefined, { title: 'Gala', price: '10.00' });
    expectRefused(reply, 401, 'not_authenticated', { price: PRICE_REFUSED });
    expect(reply.headers['www-authenticate']).toBe('Bearer');
  });

  it('lets everyone create and PATCH without it', async () => {
    const made = await send('POST', '', clerk, { title: 'Matinee' });
    expect(made.status).toBe(201);
    expect(made.json.price).toBeNull();
    const patched = await send('PATCH', `${made.json.id}/`, clerk, { title: 'Matinée' });
    expect(patched.status).toBe(200);
    expect(patched.json.title).toBe('Matinée');
  });

  it('refuses a PATCH or PUT changing it without the permission, and keeps the record as it was', async () => {
    const { id } = (await send('POST', '', manager, { title: 'Ballet', price: '30.00' })).json;
    expectRefused(await send('PATCH', `${id}/`, clerk, { title: 'Cheap ballet', price: '1.00' }), 403, 'permission_denied', { price: PRICE_REFUSED });
    expectRefused(await send('PUT', `${id}/`, clerk, { title: 'Cheap ballet', price: '1.00' }), 403, 'permission_denied', { price: PRICE_REFUSED });
    expect((await send('GET', `${id}/`, clerk, undefined)).json).toMatchObject({ title: 'Ballet', price: '30.00' });
    const raised = await send('PATCH', `${id}/`, manager, { price: '35.00' });
    expect(raised.status).toBe(200);
    expect(raised.json.price).toBe('35.00');
  });

  it('lets an update send the value the record already has (a GET result PUT back)', async () => {
    const { id } = (await send('POST', '', manager, { title: 'Recital', price: '12.00' })).json;
    const record = (await send('GET', `${id}/`, clerk, undefined)).json;
    const put = await send('PUT', `${id}/`, clerk, { ...record, title: 'Evening recital' });
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    expect(put.json).toMatchObject({ title: 'Evening recital', price: '12.00' });
    // The same value written otherwise (a number for the decimal's text) is the same value.
    expect((await send('PATCH', `${id}/`, clerk, { price: 12 })).status).toBe(200);
  });

  it('refuses a bulk create whole when one record sets it, naming the record', async () => {
    const before = await stored();
    const reply = await send('POST', 'bulk/', clerk, [{ title: 'One' }, { title: 'Two', price: '5.00' }, { title: 'Three', price: '6.00' }]);
    expectRefused(reply, 403, 'permission_denied', { '1.price': PRICE_REFUSED, '2.price': PRICE_REFUSED });
    expect(reply.json.error).toBe('You do not have permission to set price.');
    // The array form on the list path too.
    expectRefused(await send('POST', '', clerk, [{ title: 'Two', price: '5.00' }]), 403, 'permission_denied', { '0.price': PRICE_REFUSED });
    expect(await stored()).toEqual(before);
    const made = await send('POST', 'bulk/', manager, [{ title: 'One' }, { title: 'Two', price: '5.00' }]);
    expect(made.status).toBe(201);
    expect(made.json.map((record: { price: unknown }) => record.price)).toEqual([null, '5.00']);
  });

  it('asks an object permission of the stored record on an update, and names the field as clients see it', async () => {
    const { id } = (await send('POST', '', manager, { title: 'Opening', ownerNote: 'bring flowers' })).json;
    expectRefused(await send('PATCH', `${id}/`, clerk, { ownerNote: 'no flowers' }), 403, 'permission_denied', {
      ownerNote: ['You may not set this field: it needs the user named by "owner_id".'],
    });
    const own = await send('PATCH', `${id}/`, manager, { ownerNote: 'no flowers' });
    expect(own.status).toBe(200);
    expect(own.json.ownerNote).toBe('no flowers');
  });

  it('is said in the OpenAPI document, on the body fields it restricts', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    const { schemas } = document.components;
    for (const name of ['EventCreate', 'EventUpdate', 'EventPartialUpdate']) {
      const { price, title } = schemas[name].properties;
      expect(price['x-restfold-writable-by']).toBe('the permission "events.set_price"');
      expect(price.description).toContain('403');
      expect(title['x-restfold-writable-by']).toBeUndefined();
    }
    expect(schemas.EventCreate.properties.ownerNote['x-restfold-writable-by']).toBe('the user named by "owner_id"');
    // The record itself is shown to everyone as before.
    expect(schemas.Event.properties.price['x-restfold-writable-by']).toBeUndefined();
  });
});

describe('declaring it', () => {
  it('refuses a field no body may write', () => {
    expect(() => serializer(Event, { fields: ['id', 'title', 'price'], readOnly: ['price'], writableBy: { price: hasPermission('x') } })).toThrow(
      'events: writableBy price must be writable fields of `fields`.',
    );
    expect(() => serializer(Event, { fields: ['id', 'title'], writableBy: { price: hasPermission('x') } })).toThrow('writableBy price');
  });
});
