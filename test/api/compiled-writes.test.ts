/**
 * The compiled write and read paths answer over HTTP exactly as the interpreted ones, on SQLite and
 * PostgreSQL: one app whose collections compile (a write's parameters per set of columns:
 * store/write/driver-values.ts; a row's assembly per selection: store/read/records.ts; the
 * serializer), and its twin declared and served where the process makes no code from text, so
 * every one of them stays interpreted. The same requests, in the same order, on databases of their
 * own: creates of every field kind (one, several, refused), PATCH and PUT setting and clearing
 * them, nested records with aggregates of their own, aggregates of every kind, lists and details
 * read again and again (an assembly compiles on a selection's second use), and deletes: the same
 * statuses, bodies key for key, and Location paths.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { collection, computed, defineApp, fields, model, serializer, type AppDefinition } from '../../src/framework/index.js';
import { startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const CREATED = new Date('2024-05-01T10:00:00.000Z');

/** A fresh declaration each time: models, serializers and selections of their own, so each app compiles, or not, its own. */
function definition(): AppDefinition {
  const Shelf = model('shelves', { id: fields.id(), name: fields.string({ maxLength: 50 }) });
  const Item = model('items', {
    id: fields.id(),
    title: fields.string({ maxLength: 20 }),
    body: fields.text({ blank: true, default: '' }),
    email: fields.email({ nullable: true }),
    flag: fields.boolean({ default: false }),
    at: fields.timestamp({ nullable: true }),
    count: fields.integer({ bits: 32, minValue: 0, default: 0 }),
    level: fields.choice(['low', 'high'], { default: 'low' }),
    day: fields.date({ nullable: true }),
    time: fields.time({ nullable: true }),
    spent: fields.duration({ nullable: true }),
    cost: fields.decimal({ digits: 8, places: 2, nullable: true }),
    ratio: fields.float({ nullable: true }),
    big: fields.bigint({ nullable: true }),
    ref: fields.uuid({ nullable: true }),
    meta: fields.json({ nullable: true }),
    home: fields.url({ nullable: true }),
    slug: fields.slug({ nullable: true }),
    shelf_id: fields.foreignKey('shelves', { nullable: true }),
    owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
    created_at: fields.timestamp({ default: () => CREATED }),
  });
  const Note = model('notes', { id: fields.id(), item_id: fields.foreignKey('items'), text: fields.string({ maxLength: 50 }), cost: fields.decimal({ digits: 8, places: 2, default: '0.00' }) });
  const names = ['title', 'body', 'email', 'flag', 'at', 'count', 'level', 'day', 'time', 'spent', 'cost', 'ratio', 'big', 'ref', 'meta', 'home', 'slug'];
  return withGeneratedMigrations(
    defineApp({
      collections: [
        collection('shelves', {
          serializer: serializer(Shelf, { fields: ['id', 'name', 'items'], computed: { items: computed.count('items', 'shelf_id') } }),
        }),
        collection('items', {
          serializer: serializer(Item, {
            fields: ['id', ...names, 'shelf', 'shelf_id', 'owner_id', 'created_at', 'notes', 'note_ids', 'noted', 'spent_on_notes', 'average_note'],
            readOnly: ['created_at'],
            nested: { shelf: { source: 'shelf_id', serializer: serializer(Shelf, { name: 'ShelfCount', fields: ['id', 'name', 'items'], computed: { items: computed.count('items', 'shelf_id') } }) } },
            computed: {
              notes: computed.count('notes', 'item_id'),
              note_ids: computed.ids('notes', 'item_id'),
              noted: computed.exists('notes', 'item_id'),
              spent_on_notes: computed.sum(Note, 'item_id', { of: 'cost' }),
              average_note: computed.avg(Note, 'item_id', { of: 'cost' }),
            },
          }),
          filterFields: ['title', 'flag'],
          orderingFields: ['title', 'count'],
          bulkCreate: { max: 10 },
        }),
        collection('notes', { serializer: serializer(Note, { fields: ['id', 'item_id', 'text', 'cost', 'item'], nested: { item: { source: 'item_id', serializer: serializer(Item, { name: 'ItemTitle', fields: ['id', 'title', 'created_at'] }) } } }) }),
      ],
    }),
  );
}

/** `work` as a process started with --disallow-code-generation-from-strings runs it: `new Function` throws. */
async function withoutCodeGeneration<T>(work: () => Promise<T> | T): Promise<T> {
  vi.stubGlobal('Function', function refused() {
    throw new EvalError('Code generation from strings disallowed for this context');
  });
  try {
    return await work();
  } finally {
    vi.unstubAllGlobals();
  }
}

let compiled: { api: TestApi; user: TestUser };
let interpreted: { api: TestApi; user: TestUser };

beforeAll(async () => {
  const api = await startApi({}, definition());
  compiled = { api, user: await api.user('alice') };
  const twin = await startApi({}, await withoutCodeGeneration(definition));
  interpreted = { api: twin, user: await twin.user('alice') };
  // Two apps start here, each migrating a database of its own.
}, 120_000);

afterAll(async () => {
  await compiled?.api.close();
  await interpreted?.api.close();
});

/** What a client sees of a reply, as exact text: status, the Location's path, the body key for key. */
const seen = (reply: Reply): string => {
  const location = reply.headers.location === undefined ? '' : new URL(String(reply.headers.location)).pathname;
  return `${reply.status} ${location} ${reply.body}`;
};

/** The request sent to both apps (the interpreted one with no code generation); both answers, which must be the same. */
async function both(method: string, url: string, body?: unknown): Promise<Reply> {
  const answer = await compiled.api.request(method, url, { token: compiled.user.token, body });
  const twin = await withoutCodeGeneration(() => interpreted.api.request(method, url, { token: interpreted.user.token, body }));
  expect(seen(answer), `${method} ${url} ${JSON.stringify(body)}`).toBe(seen(twin));
  return answer;
}

const every = {
  title: 'all',
  body: 'text',
  email: 'a@example.com',
  flag: true,
  at: '2024-01-02T03:04:05.678Z',
  count: 7,
  level: 'high',
  day: '2024-02-29',
  time: '09:30:00',
  spent: 'P1DT2H',
  cost: '12.50',
  ratio: 1.5,
  big: '9007199254740993',
  ref: '6F1C2B4E-8A3D-4C5E-9F70-1A2B3C4D5E6F',
  meta: { a: [1, { b: 2 }] },
  home: 'https://example.com/a',
  slug: 'a-b_c',
};
const cleared = Object.fromEntries(Object.keys(every).filter((name) => !['title', 'body', 'flag', 'count', 'level'].includes(name)).map((name) => [name, null]));

describe('the compiled write and read paths against the interpreted ones, over HTTP', () => {
  it('create every field kind, one record or several, and refuse alike', async () => {
    expect((await both('POST', '/api/v1/shelves/', { name: 'first' })).status).toBe(201);
    for (let round = 0; round < 3; round++) {
      expect((await both('POST', '/api/v1/items/', { title: `plain ${round}` })).status).toBe(201);
      expect((await both('POST', '/api/v1/items/', { ...every, shelf_id: 1 })).status).toBe(201);
      expect((await both('POST', '/api/v1/items/', { ...every, ...cleared, title: 'nulls' })).status).toBe(201);
      // The same columns in another order: a shape of their own.
      expect((await both('POST', '/api/v1/items/', Object.fromEntries(Object.entries({ ...every, shelf_id: 1 }).reverse()))).status).toBe(201);
    }
    expect((await both('POST', '/api/v1/items/', [{ title: 'many 1' }, { ...every, title: 'many 2', shelf_id: 1 }])).status).toBe(201);
    for (const refused of [{ title: 'x', count: -1 }, { title: 'x', email: 'nope' }, { title: 'x', shelf_id: 999 }, { title: 'x', unknown: 1 }, {}, [{ title: 'ok' }, { title: 'x', shelf_id: 999 }]]) {
      expect((await both('POST', '/api/v1/items/', refused)).status).toBe(400);
    }
  });

  it('read details and lists with nested records and aggregates of every kind, again and again', async () => {
    for (const [id, text, cost] of [[2, 'one', '1.25'], [2, 'two', '2.50'], [3, 'three', '0.10']] as const) {
      expect((await both('POST', '/api/v1/notes/', { item_id: id, text, cost })).status).toBe(201);
    }
    for (let round = 0; round < 3; round++) {
      for (const id of [1, 2, 3, 4]) await both('GET', `/api/v1/items/${id}/`);
      await both('GET', '/api/v1/items/?ordering=-count&page_size=5');
      await both('GET', '/api/v1/items/?flag=true');
      await both('GET', '/api/v1/notes/');
      await both('GET', '/api/v1/shelves/1/');
    }
  });

  it('PATCH and PUT every field kind, setting and clearing them, and refuse alike', async () => {
    for (let round = 0; round < 3; round++) {
      expect((await both('PATCH', '/api/v1/items/1/', { title: `changed ${round}`, flag: round % 2 === 0 })).status).toBe(200);
      expect((await both('PATCH', '/api/v1/items/2/', cleared)).status).toBe(200);
      expect((await both('PATCH', '/api/v1/items/3/', { ...every, shelf_id: 1 })).status).toBe(200);
      expect((await both('PUT', '/api/v1/items/4/', { ...every, title: `put ${round}`, shelf_id: null })).status).toBe(200);
      expect((await both('PATCH', '/api/v1/items/1/', {})).status).toBe(200);
    }
    for (const refused of [{ count: -1 }, { shelf_id: 999 }, { title: null }, { at: 'yesterday' }]) expect((await both('PATCH', '/api/v1/items/1/', refused)).status).toBe(400);
    expect((await both('PATCH', '/api/v1/items/999/', { title: 'gone' })).status).toBe(404);
  });

  it('delete alike, and read what is left alike', async () => {
    expect((await both('DELETE', '/api/v1/items/5/')).status).toBe(204);
    expect((await both('DELETE', '/api/v1/items/5/')).status).toBe(404);
    for (let round = 0; round < 2; round++) await both('GET', '/api/v1/items/?page_size=50');
  });
});
