/**
 * Reverse and many-to-many relations rendered nested (a relation given a serializer), through
 * HTTP on SQLite and PostgreSQL: an author's books and a book's genres as lists of records, in id
 * order, read-only, in the reply to a write too; a list of 100 records with 100 related rows read in
 * as many statements as a list of one, nested lists within nested lists included; the OpenAPI
 * schema of the nested shape; and a relation to a table no model of the app declares refused when
 * the app starts, not on its first read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, collection, defineApp, fields, joinTable, loadConfig, model, openDatabase, relations, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const Author = model('authors', { id: fields.id(), name: fields.string({ maxLength: 50 }) });
const Book = model('books', { id: fields.id(), title: fields.string({ maxLength: 100 }), author_id: fields.foreignKey('authors') });
const Genre = model('genres', { id: fields.id(), name: fields.string({ maxLength: 50, unique: true }) });
const bookGenres = joinTable('books', 'genres');

const genreSerializer = serializer(Genre, { fields: ['id', 'name'] });
/** A book as an author shows it: its genres nested in turn. */
const bookSummary = serializer(Book, {
  name: 'BookSummary',
  fields: ['id', 'title', 'genres'],
  relations: { genres: relations.manyToMany(bookGenres, { serializer: genreSerializer }) },
});

/** Notes on an author, each seen by its owner only (a scoped collection). */
const Note = model('notes', {
  id: fields.id(),
  text: fields.string({ maxLength: 100 }),
  author_id: fields.foreignKey('authors'),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const noteSerializer = serializer(Note, { fields: ['id', 'text', 'author_id'] });

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('authors', {
        serializer: serializer(Author, {
          fields: ['id', 'name', 'books', 'book_ids'],
          relations: { books: relations.reverse('books', 'author_id', { serializer: bookSummary }), book_ids: relations.reverse('books', 'author_id') },
        }),
        filterFields: ['books'],
      }),
      collection('books', {
        serializer: serializer(Book, {
          fields: ['id', 'title', 'author_id', 'genres', 'genre_details', 'genre_names'],
          relations: {
            genres: relations.manyToMany(bookGenres),
            genre_details: relations.manyToMany(bookGenres, { serializer: genreSerializer }),
            genre_names: relations.manyToMany(bookGenres, { slug: { target: Genre, field: 'name' } }),
          },
        }),
        filterFields: ['author_id', 'genre_details', 'genre_names'],
        bulkCreate: { max: 100 },
      }),
      collection('genres', { serializer: genreSerializer }),
      collection('notes', { serializer: noteSerializer, scope: ({ user }) => ({ owner_id: user?.id ?? null }) }),
      collection('writers', {
        serializer: serializer(Author, { name: 'Writer', fields: ['id', 'name', 'notes'], relations: { notes: relations.reverse('notes', 'author_id', { serializer: noteSerializer }) } }),
      }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;
const sent: string[] = [];

beforeAll(async () => {
  api = await startApi({}, app, { appDatabase: recording(sent) });
  alice = await api.user('alice');
});
afterAll(() => api.close());

async function create(path: string, body: unknown) {
  const reply = await api.request('POST', `/api/v1/${path}/`, { token: alice.token, body });
  expect(reply.status, JSON.stringify(reply.json)).toBe(201);
  return reply.json;
}
const get = async (url: string) => {
  const reply = await api.request('GET', url, { token: alice.token });
  expect(reply.status, JSON.stringify(reply.json)).toBe(200);
  return reply.json;
};

describe('a reverse relation rendered nested', () => {
  it("shows an author's books as records, in id order, each with its genres nested", async () => {
    const author = await create('authors', { name: 'Le Guin' });
    expect(author).toEqual({ id: author.id, name: 'Le Guin', books: [], book_ids: [] });
    const [fantasy, science] = [await create('genres', { name: 'fantasy' }), await create('genres', { name: 'science fiction' })];
    const second = await create('books', { title: 'The Dispossessed', author_id: author.id, genres: [science.id] });
    const first = await create('books', { title: 'A Wizard of Earthsea', author_id: author.id, genres: [science.id, fantasy.id] });
    const read = await get(`/api/v1/authors/${author.id}/`);
    expect(read).toEqual({
      id: author.id,
      name: 'Le Guin',
      books: [
        { id: second.id, title: 'The Dispossessed', genres: [science] },
        { id: first.id, title: 'A Wizard of Earthsea', genres: [fantasy, science] },
      ],
      book_ids: [second.id, first.id],
    });
    expect((await get(`/api/v1/authors/?books=${first.id}`)).results).toEqual([read]);
  });

  it('is read-only: ignored when sent', async () => {
    const author = await create('authors', { name: 'Ignored', books: [{ id: 1, title: 'x' }] });
    expect(author.books).toEqual([]);
    const patched = await api.request('PATCH', `/api/v1/authors/${author.id}/`, { token: alice.token, body: { books: [], name: 'Renamed' } });
    expect(patched.json).toMatchObject({ name: 'Renamed', books: [] });
  });
});

describe('a nested list of a scoped collection', () => {
  it("shows only the related records the request may reach through that collection's scope", async () => {
    const bob = await api.user('bob');
    const author = await create('authors', { name: 'Scoped' });
    const own = await create('notes', { text: "alice's", author_id: author.id });
    const other = await api.request('POST', '/api/v1/notes/', { token: bob.token, body: { text: "bob's", author_id: author.id } });
    expect(other.status).toBe(201);
    expect((await get(`/api/v1/writers/${author.id}/`)).notes).toEqual([own]);
    const asBob = await api.request('GET', `/api/v1/writers/?page_size=100`, { token: bob.token });
    expect(asBob.json.results.find((writer: { id: number }) => writer.id === author.id).notes).toEqual([other.json]);
  });
});

describe('a many-to-many rendered nested', () => {
  it('shows the linked records in the reply to a create, a PATCH and a read, beside the writable ids', async () => {
    const author = await create('authors', { name: 'Banks' });
    const [space, war] = [await create('genres', { name: 'space opera' }), await create('genres', { name: 'war' })];
    const book = await create('books', { title: 'Consider Phlebas', author_id: author.id, genres: [war.id, space.id] });
    expect(book).toMatchObject({ genres: [space.id, war.id], genre_details: [space, war] });
    const url = `/api/v1/books/${book.id}/`;
    const patched = await api.request('PATCH', url, { token: alice.token, body: { genres: [war.id], genre_details: [] } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ genres: [war.id], genre_details: [war] });
    expect(await get(url)).toMatchObject({ genres: [war.id], genre_details: [war] });
    expect((await get(`/api/v1/books/?genre_details=${war.id}&author_id=${author.id}`)).results.map((found: { id: number }) => found.id)).toEqual([book.id]);
  });

  it('shows a renamed or deleted related record as it is now', async () => {
    const author = await create('authors', { name: 'Wolfe' });
    const [kept, gone] = [await create('genres', { name: 'kept' }), await create('genres', { name: 'gone' })];
    const book = await create('books', { title: 'Shadow', author_id: author.id, genres: [kept.id, gone.id] });
    expect((await api.request('PATCH', `/api/v1/genres/${kept.id}/`, { token: alice.token, body: { name: 'renamed' } })).status).toBe(200);
    expect((await api.request('DELETE', `/api/v1/genres/${gone.id}/`, { token: alice.token })).status).toBe(204);
    expect((await get(`/api/v1/books/${book.id}/`)).genre_details).toEqual([{ id: kept.id, name: 'renamed' }]);
  });
});

describe('a many-to-many by slug', () => {
  it('is written as a list of slugs, shown as the slugs (by id), and filtered by slug', async () => {
    const author = await create('authors', { name: 'Slugged' });
    const [horror, gothic] = [await create('genres', { name: 'horror' }), await create('genres', { name: 'gothic' })];
    const book = await create('books', { title: 'Dracula', author_id: author.id, genre_names: ['gothic', 'horror', 'gothic'] });
    expect(book).toMatchObject({ genres: [horror.id, gothic.id], genre_names: ['horror', 'gothic'], genre_details: [horror, gothic] });
    const url = `/api/v1/books/${book.id}/`;
    expect(await get(url)).toMatchObject({ genre_names: ['horror', 'gothic'] });
    const byName = async (query: string) => (await get(`/api/v1/books/?author_id=${author.id}&${query}`)).results.map((found: { id: number }) => found.id);
    expect(await byName('genre_names=gothic')).toEqual([book.id]);
    expect(await byName('genre_names__in=nothing,horror')).toEqual([book.id]);
    expect(await byName('genre_names=Gothic')).toEqual([]);

    const patch = (body: unknown) => api.request('PATCH', url, { token: alice.token, body });
    expect((await patch({ genre_names: ['gothic'] })).json).toMatchObject({ genres: [gothic.id], genre_names: ['gothic'] });
    expect((await patch({ genre_names: [] })).json).toMatchObject({ genres: [], genre_names: [] });
  });

  it('refuses slugs of no record (naming them, storing nothing) and what is no list of slugs', async () => {
    const author = await create('authors', { name: 'Refused' });
    await create('genres', { name: 'known' });
    const refused = await api.request('POST', '/api/v1/books/', { token: alice.token, body: { title: 'Never', author_id: author.id, genre_names: ['known', 'nope', 'Known'] } });
    expect([refused.status, refused.json.details]).toEqual([400, { genre_names: ['No genres with name "nope", "Known".'] }]);
    expect((await get(`/api/v1/books/?author_id=${author.id}`)).count).toBe(0);
    for (const genre_names of ['known', null, [1], [null], [{}]]) {
      const reply = await api.request('POST', '/api/v1/books/', { token: alice.token, body: { title: 'Never', author_id: author.id, genre_names } });
      expect([reply.status, Object.keys(reply.json.details ?? {})], JSON.stringify(genre_names)).toEqual([400, ['genre_names']]);
    }
  });
});

describe('a list of records with 100 related rows each, nested', () => {
  it('is read in as many statements as a list of one', async () => {
    const [prolific, other] = [await create('authors', { name: 'Prolific' }), await create('authors', { name: 'Other' })];
    const [a, b] = [await create('genres', { name: 'genre a' }), await create('genres', { name: 'genre b' })];
    const books = Array.from({ length: 100 }, (_, index) => ({ title: `Book ${index}`, author_id: prolific.id, genres: [a.id, b.id] }));
    await create('books', books);
    const others = await create('books', Array.from({ length: 3 }, (_, index) => ({ title: `Other ${index}`, author_id: other.id, genres: [b.id] })));
    const statementsOf = async (url: string) => {
      sent.length = 0;
      const json = await get(url);
      return { json, statements: sent.length };
    };

    const one = await statementsOf(`/api/v1/books/?author_id=${prolific.id}&page_size=1`);
    const hundred = await statementsOf(`/api/v1/books/?author_id=${prolific.id}&page_size=100`);
    expect(hundred.json.results).toHaveLength(100);
    expect(hundred.json.results.every((book: { genre_details: unknown; genre_names: unknown }) => JSON.stringify([book.genre_details, book.genre_names]) === JSON.stringify([[a, b], [a.name, b.name]]))).toBe(true);
    expect(hundred.statements).toBe(one.statements);

    // Authors with their 100 books, each with its genres: a nested list within a nested list.
    const oneAuthor = await statementsOf(`/api/v1/authors/?books=${others[0].id}`);
    const authors = await statementsOf('/api/v1/authors/?page_size=100');
    const found = authors.json.results.find((author: { id: number }) => author.id === prolific.id);
    expect(found.books).toHaveLength(100);
    expect(found.books[99]).toEqual({ id: found.book_ids[99], title: 'Book 99', genres: [a, b] });
    expect(authors.json.results.find((author: { id: number }) => author.id === other.id).books.map((book: { title: string }) => book.title)).toEqual(['Other 0', 'Other 1', 'Other 2']);
    expect(oneAuthor.json.results).toHaveLength(1);
    expect(authors.statements).toBe(oneAuthor.statements);
  });
});

describe('the OpenAPI document', () => {
  it('types a nested relation as a read-only list of its records, left out of the bodies', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    const schemas = document.components.schemas;
    expect(schemas.Author.properties.books).toEqual({ type: 'array', items: { $ref: '#/components/schemas/BookSummary' }, readOnly: true });
    expect(schemas.BookSummary.properties.genres).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Genre' }, readOnly: true });
    expect(schemas.Book.properties.genre_details).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Genre' }, readOnly: true });
    expect(schemas.BookCreate.properties.genre_details).toEqual({ description: 'Read-only: ignored when sent.' });
    expect(schemas.BookCreate.properties.genres).toMatchObject({ type: 'array' });
    for (const body of ['Book', 'BookCreate', 'BookPartialUpdate']) {
      expect(schemas[body].properties.genre_names).toEqual({ type: 'array', items: Genre.fields.name!.schema, maxItems: 1000 });
    }
  });
});

describe('start-up', () => {
  const Review = model('reviews', { id: fields.id(), book_id: fields.foreignKey('books') });
  const started = async (relation: ReturnType<typeof relations.reverse>) => {
    const definition = defineApp({
      collections: [collection('books', { serializer: serializer(Book, { fields: ['id', 'title', 'reviews'], relations: { reviews: relation } }) }), collection('authors', { serializer: serializer(Author, { fields: ['id'] }) })],
    });
    const database = openDatabase('sqlite::memory:');
    try {
      return await buildApp(definition, { database, config: loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' }) });
    } finally {
      await database.close();
    }
  };

  it('refuses a reverse relation or many-to-many to a table no model of the app declares, naming it', async () => {
    await expect(started(relations.reverse('reviews', 'book_id'))).rejects.toThrow(
      'books: relation "reviews" reads the table "reviews", which no model of the app declares: add its model to a collection, or to defineApp\'s `models`.',
    );
    await expect(started(relations.reverse('reviews', 'book_id', { serializer: serializer(Review, { fields: ['id'] }) }))).rejects.toThrow('which no model of the app declares');
    await expect(started(relations.manyToMany(joinTable('books', 'genres')))).rejects.toThrow('books: relation "reviews" reads the table "genres"');
  });

  it("refuses a reverse relation whose key is no foreign key to the record's table", async () => {
    await expect(started(relations.reverse('books', 'title'))).rejects.toThrow('books: relation "reviews": books.title is no foreign key to books.');
  });
});
