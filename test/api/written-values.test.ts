/**
 * Values read back as they were written, through HTTP on SQLite and PostgreSQL: integers sent as
 * integral strings (as DRF's IntegerField reads them: "2", " +2 ", "2.0"; never "2.5", "1e3" or a
 * boolean), with each column's range; and the empty string on nullable text, URL, e-mail and slug
 * fields (a user clearing them), kept as "" for text and stored as null where "" is no value of the
 * kind, while `blank` says otherwise when declared.
 */
import { describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { servedWithUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { lintProblems } from '../support/openapi-lint.js';

const Item = model('value_items', {
  id: fields.id(),
  count: fields.integer({ nullable: true }),
  small: fields.integer({ bits: 32, nullable: true }),
  big: fields.bigint({ nullable: true }),
  parent_id: fields.foreignKey('value_items', { nullable: true }),
  title: fields.string({ maxLength: 40, nullable: true }),
  bio: fields.text({ nullable: true }),
  home: fields.url({ nullable: true }),
  mail: fields.email({ nullable: true, unique: true }),
  handle: fields.slug({ nullable: true }),
  code: fields.string({ maxLength: 8, pattern: /^[A-Z]+$/, nullable: true }),
  strict: fields.text({ nullable: true, blank: false }),
  kept_url: fields.url({ nullable: true, blank: true }),
  kept_mail: fields.email({ nullable: true, blank: true }),
  name: fields.string({ maxLength: 40, default: 'x' }),
});
const names = Object.keys(Item.fields);

const served = servedWithUser(
  withGeneratedMigrations(defineApp({ collections: [collection('items', { serializer: serializer(Item, { fields: names }), filterFields: ['id', 'count', 'home', 'mail', 'bio'] })] })),
  'alice',
);
const request = (method: string, url: string, body?: unknown) => served.api.request(method, url, { token: served.user.token, body });
const create = (body: Record<string, unknown>) => request('POST', '/api/v1/items/', body);

describe('integers', () => {
  it.each([
    ['count', '2', 2],
    ['count', ' +2 ', 2],
    ['count', '-7', -7],
    ['count', '2.0', 2],
    ['count', '2.', 2],
    ['count', '007', 7],
    ['count', '-0', 0],
    ['count', 2.0, 2],
    ['count', '9007199254740991', 9007199254740991],
    ['small', '2147483647', 2147483647],
    ['small', '-2147483648', -2147483648],
    ['big', ' 9223372036854775807 ', '9223372036854775807'],
    ['big', '+2.00', 2],
    ['big', '-9223372036854775808', '-9223372036854775808'],
  ])('reads %s = %j as %j, on create and update, and reads it back so', async (field, sent, stored) => {
    const created = await create({ [field]: sent });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect(created.json[field]).toEqual(stored);
    const url = `/api/v1/items/${created.json.id}/`;
    expect((await request('GET', url)).json[field]).toEqual(stored);
    const patched = await request('PATCH', url, { [field]: sent });
    expect([patched.status, patched.json[field]]).toEqual([200, stored]);
  });

  it.each([
    ['count', '2.5', 'A valid integer is required.'],
    ['count', 2.5, 'A valid integer is required.'],
    ['count', '1e3', 'A valid integer is required.'],
    ['count', true, 'A valid integer is required.'],
    ['count', 'true', 'A valid integer is required.'],
    ['count', '', 'A valid integer is required.'],
    ['count', '  ', 'A valid integer is required.'],
    ['count', '0x10', 'A valid integer is required.'],
    ['count', '1_000', 'A valid integer is required.'],
    ['count', '1,000', 'A valid integer is required.'],
    ['count', '٢', 'A valid integer is required.'],
    ['count', '+-2', 'A valid integer is required.'],
    ['count', [2], 'A valid integer is required.'],
    ['count', { value: 2 }, 'A valid integer is required.'],
    ['count', `${'0'.repeat(100)}1`, 'A valid integer is required.'],
    ['count', '9007199254740992', 'Ensure this value is between -9007199254740991 and 9007199254740991.'],
    ['count', '-99999999999999999999999', 'Ensure this value is between -9007199254740991 and 9007199254740991.'],
    ['count', 9007199254740992, 'A valid integer is required.'],
    ['small', '2147483648', 'Ensure this value fits in 32 bits.'],
    ['small', -2147483649, 'Ensure this value fits in 32 bits.'],
    ['big', '9223372036854775808', 'Ensure this value fits in 64 bits.'],
    ['big', false, 'A valid integer is required.'],
    ['big', '1.5', 'A valid integer is required.'],
    ['parent_id', true, 'A valid integer is required.'],
    ['parent_id', '1.5', 'A valid integer is required.'],
  ])('refuses %s = %j with a 400 naming the field', async (field, sent, message) => {
    const reply = await create({ [field]: sent });
    expect([reply.status, reply.json.code, reply.json.details]).toEqual([400, 'validation_failed', { [field]: [message] }]);
  });

  it('reads a foreign key sent as an integral string, and still refuses one naming no record', async () => {
    const parent = (await create({ name: 'parent' })).json.id as number;
    const child = await create({ parent_id: ` ${parent} ` });
    expect([child.status, child.json.parent_id]).toEqual([201, parent]);
    const orphan = await create({ parent_id: '999999' });
    expect([orphan.status, orphan.json.details.parent_id]).toEqual([400, ['Invalid id "999999": object does not exist.']]);
  });

  it('keeps a filter to plain digits: 2.0 in a query string is a 400, as before', async () => {
    expect((await request('GET', '/api/v1/items/?count=2')).status).toBe(200);
    const reply = await request('GET', '/api/v1/items/?count=2.0');
    expect([reply.status, Object.keys(reply.json.details)]).toEqual([400, ['count']]);
  });

  it('still documents integer fields as integers', async () => {
    const { properties } = (await request('GET', '/api/v1/schema/')).json.components.schemas.ValueItem;
    expect(properties.count).toEqual({ type: ['integer', 'null'], format: 'int64' });
    expect(properties.small).toEqual({ type: ['integer', 'null'], format: 'int32' });
    expect(properties.parent_id).toEqual({ type: ['integer', 'null'], format: 'int64' });
  });
});

describe('the empty string on a nullable field', () => {
  it('is kept as "" on text and strings, and stored as null on URLs, e-mails, slugs and patterned strings', async () => {
    const filled = { title: 'Title', bio: 'I skate', home: 'https://example.com/me.png', mail: 'me@example.com', handle: 'me', code: 'ABC' };
    const created = await create(filled);
    expect(created.json).toMatchObject(filled);
    const url = `/api/v1/items/${created.json.id}/`;
    const cleared = await request('PATCH', url, { title: '', bio: '', home: '', mail: '', handle: '', code: '' });
    expect(cleared.status, JSON.stringify(cleared.json)).toBe(200);
    const expected = { title: '', bio: '', home: null, mail: null, handle: null, code: null };
    expect(cleared.json).toMatchObject(expected);
    expect((await request('GET', url)).json).toMatchObject(expected);
    // Stored as they read: "" is found as "", a cleared URL as a null one.
    const found = await request('GET', `/api/v1/items/?bio=&home__isnull=true&id=${created.json.id}`);
    expect(found.json, JSON.stringify(found.json)).toMatchObject({ count: 1 });
    // PUT clears as PATCH does, and a create may send "" too.
    const put = await request('PUT', url, { ...filled, bio: '', home: '' });
    expect(put.json).toMatchObject({ bio: '', home: null, mail: 'me@example.com' });
    expect((await create({ bio: '', home: '', mail: '' })).json).toMatchObject({ bio: '', home: null, mail: null });
  });

  it('lets any number of records clear a unique e-mail: null clashes with nothing', async () => {
    for (let index = 0; index < 2; index++) expect((await create({ mail: '' })).status).toBe(201);
  });

  it('is refused where the field says blank: false, nullable or not, and kept as "" where it says blank: true', async () => {
    const refused = await create({ strict: '' });
    expect([refused.status, refused.json.details]).toEqual([400, { strict: ['This field may not be blank.'] }]);
    const notNullable = await create({ name: '' });
    expect([notNullable.status, notNullable.json.details]).toEqual([400, { name: ['This field may not be blank.'] }]);
    expect((await create({ strict: null, kept_url: '', kept_mail: '' })).json).toMatchObject({ strict: null, kept_url: '', kept_mail: '' });
  });

  it('still checks what is not empty: a bad URL or e-mail is a 400', async () => {
    const reply = await create({ home: 'not a url', mail: 'nobody' });
    expect([reply.status, Object.keys(reply.json.details).sort()]).toEqual([400, ['home', 'mail']]);
  });

  it('is documented: a nullable field that accepts "" has no minLength, in a document the linter passes', async () => {
    const document = (await request('GET', '/api/v1/schema/')).json;
    expect(await lintProblems(document)).toEqual([]);
    const { properties } = document.components.schemas.ValueItem;
    expect(properties.bio).toEqual({ type: ['string', 'null'] });
    expect(properties.home).toEqual({ type: ['string', 'null'], maxLength: 200, format: 'uri' });
    expect(properties.mail).toEqual({ type: ['string', 'null'], maxLength: 254, format: 'email' });
    expect(properties.strict).toEqual({ type: ['string', 'null'], minLength: 1 });
    // A blank-allowed e-mail is an address or "" (kept as it is), and null when nullable.
    expect(properties.kept_mail.anyOf).toEqual([{ type: 'string', format: 'email' }, { type: 'string', maxLength: 0 }, { type: 'null' }]);
    expect(properties.name).toMatchObject({ type: 'string', minLength: 1 });
  });
});
