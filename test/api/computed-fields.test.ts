/**
 * Computed fields: from the row (with the requesting user), and SQL-backed over related rows (a
 * count, the requesting user's existence, the ids), read in the page's own statement: a list of
 * records with 100 related rows each takes as many statements as one without. They honour
 * `fields`/`omit`, are typed in the OpenAPI document and may be ordered by.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collection, computed, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { recording } from '../support/statements.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Author = model('authors', { id: fields.id(), name: fields.string({ maxLength: 100 }) });
const Book = model('books', { id: fields.id(), title: fields.string({ maxLength: 100 }), author_id: fields.foreignKey('authors') });
const Like = model('likes', { id: fields.id(), book_id: fields.foreignKey('books'), user_id: fields.foreignKey('users', { default: ({ userId }) => userId }) });

const app = withGeneratedMigrations(defineApp({
  collections: [
    collection('authors', {
      serializer: serializer(Author, {
        fields: ['id', 'name', 'book_count', 'book_ids', 'greeting'],
        computed: {
          book_count: computed.count('books', 'author_id'),
          book_ids: computed.ids('books', 'author_id'),
          greeting: computed.from((row, { user }) => `${String(row.name)} greets ${user?.username ?? 'nobody'}`, { schema: { type: 'string' } }),
        },
      }),
      orderingFields: ['name', 'book_count'],
    }),
    collection('books', {
      serializer: serializer(Book, {
        fields: ['id', 'title', 'author_id', 'likes', 'liked', 'by_author', 'has_author'],
        computed: {
          likes: computed.count('likes', 'book_id'),
          liked: computed.exists('likes', 'book_id', { requestingUser: 'user_id' }),
          // Correlated with the book's author rather than the book: rows about its author_id.
          by_author: computed.count('books', 'author_id', { on: 'author_id' }),
          has_author: computed.exists('authors', 'id', { on: 'author_id' }),
        },
      }),
      bulkCreate: { max: 100 },
      orderingFields: ['likes'],
    }),
    collection('likes', { serializer: serializer(Like, { fields: ['id', 'book_id', 'user_id'] }), bulkCreate: { max: 100 } }),
  ],
}));

const sent: string[] = [];
let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let prolific: number;
let quiet: number;
let liked: number;

beforeAll(async () => {
  api = await startApi({}, app, { appDatabase: recording(sent) });
  alice = await api.user('alice');
  bob = await api.user('bob');
  prolific = (await api.request('POST', '/api/v1/authors/', { token: alice.token, body: { name: 'Prolific' } })).json.id;
  quiet = (await api.request('POST', '/api/v1/authors/', { token: alice.token, body: { name: 'Quiet' } })).json.id;
  const books = Array.from({ length: 100 }, (_, index) => ({ title: `Book ${index}`, author_id: prolific }));
  const created = await api.request('POST', '/api/v1/books/', { token: alice.token, body: books });
  liked = created.json[0].id;
  await api.request('POST', '/api/v1/books/', { token: alice.token, body: { title: 'Alone', author_id: quiet } });
  const likes = Array.from({ length: 100 }, () => ({ book_id: liked }));
  await api.request('POST', '/api/v1/likes/', { token: bob.token, body: likes });
});
afterAll(() => api.close());
beforeEach(() => {
  sent.length = 0;
});

const statementsOf = async (url: string, user: TestUser) => {
  sent.length = 0;
  const reply = await api.request('GET', url, { token: user.token });
  return { reply, statements: sent.length };
};

describe('SQL-backed computed fields', () => {
  it('count and list related rows in the page’s own statements', async () => {
    const { reply, statements } = await statementsOf('/api/v1/authors/?ordering=name', alice);
    const ids = reply.json.results[0].book_ids;
    expect(reply.json.results[0]).toMatchObject({ name: 'Prolific', book_count: 100 });
    expect(ids).toHaveLength(100);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
    expect(reply.json.results[1]).toMatchObject({ name: 'Quiet', book_count: 1, book_ids: [expect.any(Number)] });
    // As many statements as the same list without computed fields: the token's user, then the count and the page (one statement where the database merges them).
    const { statements: plain } = await statementsOf('/api/v1/authors/?fields=id,name', alice);
    expect(statements).toBe(plain);
    expect(statements).toBeLessThanOrEqual(3);
  });

  it('say whether the requesting user has a related row, in a fixed number of statements', async () => {
    const forBob = await statementsOf('/api/v1/books/?page_size=100&ordering=-likes', bob);
    expect(forBob.reply.json.results[0]).toMatchObject({ id: liked, likes: 100, liked: true });
    expect(forBob.reply.json.results.slice(1).every((book: { liked: boolean; likes: number }) => !book.liked && book.likes === 0)).toBe(true);
    const forAlice = await statementsOf('/api/v1/books/?page_size=100&ordering=-likes', alice);
    expect(forAlice.reply.json.results[0]).toMatchObject({ id: liked, likes: 100, liked: false });
    expect(forAlice.statements).toBe(forBob.statements);
    expect(forBob.statements).toBeLessThanOrEqual(3);
    const detail = await api.request('GET', `/api/v1/books/${liked}/`, { token: bob.token });
    expect(detail.json).toMatchObject({ likes: 100, liked: true });
  });

  it('orders by a count', async () => {
    const reply = await api.request('GET', '/api/v1/authors/?ordering=-book_count&fields=name', { token: alice.token });
    expect(reply.json.results).toEqual([{ name: 'Prolific' }, { name: 'Quiet' }]);
    const ascending = await api.request('GET', '/api/v1/authors/?ordering=book_count&fields=name', { token: alice.token });
    expect(ascending.json.results).toEqual([{ name: 'Quiet' }, { name: 'Prolific' }]);
  });

  it('are rendered on writes too, and ignored in a body (read-only)', async () => {
    const reply = await api.request('POST', '/api/v1/authors/', { token: alice.token, body: { name: 'New', book_count: 5 } });
    expect(reply.json).toMatchObject({ name: 'New', book_count: 0, book_ids: [], greeting: 'New greets alice' });
  });
});

describe('SQL-backed computed fields on another column than the id', () => {
  it('count and find the rows naming that column, in as many statements', async () => {
    // By id: the prolific author's 100 books, then 'Alone'.
    const one = await statementsOf('/api/v1/books/?page_size=1', alice);
    expect(one.reply.json.results).toMatchObject([{ author_id: prolific, by_author: 100, has_author: true }]);
    const hundred = await statementsOf('/api/v1/books/?page_size=100', alice);
    expect(hundred.reply.json.results).toHaveLength(100);
    expect(hundred.reply.json.results.every((book: { by_author: number }) => book.by_author === 100)).toBe(true);
    expect(hundred.statements).toBe(one.statements);
    const next = await api.request('GET', '/api/v1/books/?page=2&page_size=100', { token: alice.token });
    expect(next.json.results[0]).toMatchObject({ title: 'Alone', author_id: quiet, by_author: 1, has_author: true });
    expect((await api.request('GET', `/api/v1/books/${liked}/`, { token: alice.token })).json).toMatchObject({ by_author: 100, likes: 100 });
  });
});

describe('computed fields from the row', () => {
  it('see the requesting user, and honour fields and omit', async () => {
    const detail = await api.request('GET', `/api/v1/authors/${quiet}/?fields=greeting`, { token: bob.token });
    expect(detail.json).toEqual({ greeting: 'Quiet greets bob' });
    const omitted = await api.request('GET', `/api/v1/authors/${quiet}/?omit=greeting,book_ids`, { token: bob.token });
    expect(omitted.json).toEqual({ id: quiet, name: 'Quiet', book_count: 1 });
  });
});

describe('computed fields in the documents', () => {
  it('are typed and read-only in the OpenAPI document', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    // The whole record (the other of the two is what ?fields= or ?omit= may leave of it).
    const reference = document.paths['/api/v1/authors/{id}/'].get.responses['200'].content['application/json'].schema.anyOf[0].$ref;
    expect(reference).toBe('#/components/schemas/Author');
    const author = document.components.schemas.Author.properties;
    expect(author.book_count).toMatchObject({ type: 'integer', readOnly: true });
    expect(author.book_ids).toMatchObject({ type: 'array', items: { type: 'integer' }, readOnly: true });
    expect(author.greeting).toMatchObject({ type: 'string', readOnly: true });
  });

  it('show on the browsable page', async () => {
    const page = await api.request('GET', `/api/v1/authors/${quiet}/`, { token: bob.token, headers: { accept: 'text/html' } });
    expect(page.body).toContain('Quiet greets bob');
    expect(page.body).toContain('&quot;book_count&quot;: 1');
  });
});

describe('the limits of SQL-backed computed fields, said at start-up', () => {
  const authors = (fields: string[]) => serializer(Author, { fields, computed: { book_count: computed.count('books', 'author_id') } });

  it('may be shown by a nested serializer since issue 23 (correlated to the joined row: test/api/names-and-filters.test.ts)', () => {
    const nesting = (author: ReturnType<typeof authors>) => () =>
      serializer(Book, { fields: ['id', 'author'], nested: { author: { source: 'author_id', serializer: author } } });
    expect(nesting(authors(['id', 'book_count']))).not.toThrow();
    expect(nesting(authors(['id', 'name']))).not.toThrow();
  });

  it('are correlated on a field of the model only', () => {
    const on = (column: string) => () => serializer(Book, { fields: ['id', 'by_author'], computed: { by_author: computed.count('books', 'author_id', { on: column }) } });
    expect(on('writer_id')).toThrow(/books: computed "by_author" is correlated on unknown field "writer_id"/);
    expect(on('author_id')).not.toThrow();
  });

  it('cannot order a cursor-paged collection (no index serves a keyset over them); a page-numbered one may', () => {
    const declare = (pagination: 'cursor' | 'page') => () =>
      collection('authors', { serializer: authors(['id', 'book_count']), orderingFields: ['book_count'], pagination });
    expect(declare('cursor')).toThrow(/authors: cursor pagination cannot order by "book_count", a SQL-backed computed field/);
    expect(declare('page')).not.toThrow();
  });
});
