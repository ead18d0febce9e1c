/**
 * One condition language (docs/query-language.md, Conditions): the same literal gives the same
 * rows through a scope, a collection's `where`, a custom action's `where`, `recordStore.list` and
 * the query string, on either database; and a condition no database could run is refused at the
 * call naming its key, never a driver error.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, recordStore, serializer, type Row } from '../../src/framework/index.js';
import { servedWithUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Book = model('books', {
  id: fields.id(),
  title: fields.string({ maxLength: 50 }),
  author_id: fields.integer(),
  pages: fields.integer(),
});
const books = serializer(Book, { fields: ['id', 'title', 'author_id', 'pages'] });

/** Each literal, as code writes it, and as the query string says the same. */
const LITERALS: readonly (readonly [string, Row, string])[] = [
  ['an array: one of its values', { author_id: [1, 2] }, 'author_id__in=1,2'],
  ['field__lookup', { pages__gte: 300 }, 'pages__gte=300'],
  ['both at once', { author_id: [2, 3], pages__lt: 300 }, 'author_id__in=2,3&pages__lt=300'],
];

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('books', {
        serializer: books,
        filterFields: { author_id: ['exact', 'in'], pages: ['gte', 'lt'] },
        actions: Object.fromEntries(LITERALS.map(([, where], index) => [`where-${index}`, { detail: false, method: 'GET', where }])),
      }),
      ...LITERALS.flatMap(([, where], index) => [
        collection(`scoped-${index}`, { serializer: books, scope: () => where }),
        collection(`narrowed-${index}`, { serializer: books, where }),
      ]),
    ],
  }),
);

const served = servedWithUser(app, 'alice');
const store = () => recordStore(served.api.database, books, { name: 'book' });
const titles = (rows: readonly Row[]) => rows.map((row) => row.title as string).sort();

async function listed(path: string): Promise<string[]> {
  const reply = await served.api.request('GET', `/api/v1/${path}`, { token: served.user.token });
  expect(reply.status).toBe(200);
  return titles(reply.json.results as Row[]);
}

beforeAll(async () => {
  const rows: [string, number, number][] = [
    ['a1-short', 1, 120],
    ['a1-long', 1, 450],
    ['a2-short', 2, 200],
    ['a2-long', 2, 300],
    ['a3-short', 3, 90],
    ['a3-long', 3, 800],
  ];
  for (const [title, author_id, pages] of rows) await store().create({ title, author_id, pages });
});

describe('the same literal', () => {
  it.each(LITERALS.map(([name, where, query], index) => [name, where, query, index] as const))(
    '%s gives the same rows through a scope, a where, a custom action, recordStore.list and the query string',
    async (_name, where, query, index) => {
      const rows = titles(await store().list(where, ['id']));
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.length).toBeLessThan(6);
      expect(await listed(`scoped-${index}/`)).toEqual(rows);
      expect(await listed(`narrowed-${index}/`)).toEqual(rows);
      expect(await listed(`books/where-${index}/`)).toEqual(rows);
      expect(await listed(`books/?${query}`)).toEqual(rows);
      const each: Row[] = [];
      for await (const row of store().each(where, ['id'])) each.push(row);
      expect(titles(each)).toEqual(rows);
    },
  );

  it('means what it says: an array is one of its values, an empty one none', async () => {
    expect(titles(await store().list({ author_id: [1, 2] }, ['id']))).toEqual(['a1-long', 'a1-short', 'a2-long', 'a2-short']);
    expect(await store().list({ author_id: [] }, ['id'])).toEqual([]);
    expect(await store().list({ author_id__in: [] }, ['id'])).toEqual([]);
  });
});

describe('a condition no database could run', () => {
  it.each<[string, Row, string]>([
    ['no integer', { author_id: 'one' }, 'books: "author_id": A valid integer is required.'],
    ['a list of no integers', { author_id: ['one', 2] }, 'books: "author_id": A valid integer is required.'],
    ['an unknown field', { writer: 1 }, 'books: "writer": Unknown filter field "writer"'],
    ['a lookup its field does not take', { pages__icontains: '3' }, 'books: "pages__icontains": Unknown lookup "icontains" for "pages"'],
  ])('is refused at the call, naming the table and the key: %s', async (_name, where, message) => {
    await expect(store().list(where, ['id'])).rejects.toThrow(message);
    await expect(store().deleteMatching(where)).rejects.toThrow(message);
    await expect(store().updateMatching(where, { pages: 1 })).rejects.toThrow(message);
  });

  it('is refused at start-up where it is declared, naming the collection and the key', () => {
    expect(() => collection('bad', { serializer: books, where: { author_id: 'one' } })).toThrow('bad: where must be conditions');
    expect(() => collection('bad', { serializer: books, where: { author_id: 'one' } })).toThrow('"author_id": A valid integer is required.');
    expect(() => collection('bad', { serializer: books, actions: { odd: { detail: false, method: 'GET', where: { pages__gte: [1] } } } })).toThrow(
      'bad: action "odd": where: "pages__gte": An array is not a value of this integer field.',
    );
  });
});
