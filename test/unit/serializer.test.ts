import { describe, expect, it } from 'vitest';
import { computed, fields, model, serializer, type ObjectValidator, type SerializerOptions } from '../../src/framework/index.js';
import { chosenFields, type WriteContext } from '../../src/framework/declare/serializer.js';
import { ApiError } from '../../src/framework/base/errors.js';

const ADDED = new Date('2024-05-01T10:00:00.000Z');

const Author = model('authors', { id: fields.id(), username: fields.string({ maxLength: 30 }), bio: fields.text({ nullable: true }) });
const authorSerializer = serializer(Author, { fields: ['id', 'username', 'bio'] });

const Book = model('books', {
  id: fields.id(),
  title: fields.string({ maxLength: 10 }),
  pages: fields.integer({ bits: 32, default: 100 }),
  notes: fields.text({ nullable: true }),
  added_at: fields.timestamp({ default: () => ADDED }),
  secret: fields.string({ nullable: true }),
  author_id: fields.foreignKey('authors'),
});

const options: SerializerOptions = {
  fields: ['id', 'title', 'pages', 'notes', 'added_at', 'secret', 'author', 'shout'],
  rename: { pages: 'pageCount', added_at: 'addedAt' },
  readOnly: ['added_at'],
  hidden: ['secret'],
  nested: { author: { source: 'author_id', serializer: authorSerializer } },
  computed: { shout: computed.from((row) => String(row.title).toUpperCase(), { reads: ['title'] }) },
};
const books = serializer(Book, options);

const context: WriteContext = { userId: null, hasPermission: async () => false };

/** The ApiError `run` rejects or throws with. */
async function refusal(run: () => unknown): Promise<ApiError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('Nothing was refused.');
}

/** The details of the 400 validation_failed that parsing `body` answers. */
async function invalid(body: unknown, mode: 'create' | 'update' | 'partial_update' = 'create') {
  const error = await refusal(() => books.parseBody(body, mode, context));
  expect([error.status, error.code, error.message]).toEqual([400, 'validation_failed', 'Invalid input.']);
  return error.details;
}

describe('Serializer.parseBody', () => {
  it("gives a create's values by the model's names, with the defaults of fields it did not send", async () => {
    expect(await books.parseBody({ title: 'Dune' }, 'create', context)).toEqual({ title: 'Dune', pages: 100, added_at: ADDED });
    expect(await books.parseBody({ title: 'Dune', pageCount: 412, notes: null }, 'create', context)).toEqual({
      title: 'Dune',
      pages: 412,
      notes: null,
      added_at: ADDED,
    });
  });

  it('requires required fields on create and update, not on a partial update, which fills in no defaults', async () => {
    expect(await invalid({ pageCount: 3 })).toEqual({ title: ['This field is required.'] });
    expect(await invalid({ pageCount: 3 }, 'update')).toEqual({ title: ['This field is required.'] });
    expect(await books.parseBody({}, 'partial_update', context)).toEqual({});
    expect(await books.parseBody({ pageCount: 3 }, 'partial_update', context)).toEqual({ pages: 3 });
  });

  it('refuses unknown fields by the names sent, a renamed field by its model name too', async () => {
    expect(await invalid({ title: 'Dune', publisher: 'Chilton', pages: 3 })).toEqual({ publisher: ['Unknown field.'], pages: ['Unknown field.'] });
  });

  it('ignores read-only fields: the id, declared ones, nested records, computed values', async () => {
    const body = { title: 'Dune', id: 5, addedAt: '2020-01-01T00:00:00Z', author: { id: 1 }, shout: 'X' };
    expect(await books.parseBody(body, 'create', context)).toEqual({ title: 'Dune', pages: 100, added_at: ADDED });
  });

  it('counts a hidden field sent as null as not sent', async () => {
    expect(await books.parseBody({ secret: null }, 'partial_update', context)).toEqual({});
    expect(await books.parseBody({ secret: 'psst' }, 'partial_update', context)).toEqual({ secret: 'psst' });
  });

  it("reports each field's errors at once, under the names clients see", async () => {
    expect(await invalid({ title: 'A much too long title', pageCount: 'many', notes: 5, extra: 1 })).toEqual({
      title: ['Ensure this field has no more than 10 characters.'],
      pageCount: ['A valid integer is required.'],
      notes: ['Not a valid string.'],
      extra: ['Unknown field.'],
    });
    expect(await invalid({ title: null })).toEqual({ title: ['This field may not be null.'] });
    expect(await invalid({ title: '' })).toEqual({ title: ['This field may not be blank.'] });
  });

  it('refuses a body that is not a JSON object with 400 parse_error', async () => {
    for (const body of [null, [], 'Dune', 3]) {
      const error = await refusal(() => books.parseBody(body, 'create', context));
      expect([error.status, error.code, error.message]).toEqual([400, 'parse_error', 'Expected a JSON object.']);
    }
  });
});

describe('Serializer.validateObject', () => {
  const shortBooks: ObjectValidator = (values) => (Number(values.pages) < 10 ? { pages: ['Too short for a book.'] } : undefined);
  const checked = serializer(Book, { ...options, validate: shortBooks });

  it('does nothing without validators', () => {
    expect(books.validateObject({ pages: 1 }, { existing: undefined, user: null })).toBeUndefined();
  });

  it("passes valid values, and refuses others with the validator's messages under the names clients see", async () => {
    await expect(checked.validateObject({ title: 'Dune', pages: 412 }, { existing: undefined, user: null })).resolves.toBeUndefined();
    const error = await refusal(() => checked.validateObject({ title: 'Dune', pages: 3 }, { existing: undefined, user: null }));
    expect([error.status, error.code, error.details]).toEqual([400, 'validation_failed', { pageCount: ['Too short for a book.'] }]);
  });

  it('sees an update as the stored record with the sent values over it', async () => {
    const existing = { id: 1, title: 'Leaflet', pages: 2, added_at: ADDED };
    await expect(checked.validateObject({ title: 'Pamphlet' }, { existing, user: null })).rejects.toMatchObject({ details: { pageCount: ['Too short for a book.'] } });
    await expect(checked.validateObject({ pages: 40 }, { existing, user: null })).resolves.toBeUndefined();
  });

  it("gathers the serializer's findings and the collection's", async () => {
    const noLeaflets: ObjectValidator = (values) => ({ pages: values.title === 'Leaflet' ? ['Not a leaflet.'] : [], non_field_errors: ['Closed today.'] });
    const error = await refusal(() => checked.validateObject({ title: 'Leaflet', pages: 2 }, { existing: undefined, user: null }, noLeaflets));
    expect(error.details).toEqual({ pageCount: ['Too short for a book.', 'Not a leaflet.'], non_field_errors: ['Closed today.'] });
  });
});

describe('Serializer.render', () => {
  const row = {
    id: 1,
    title: 'Dune',
    pages: 412,
    notes: null,
    added_at: '2024-05-01T10:00:00.000Z',
    secret: 'psst',
    author_id: 3,
    author: { id: 3, username: 'frank', bio: 'Wrote it.' },
  };

  it('renders the fields in order, renamed, hidden ones as null, nested records and computed values', () => {
    const record = books.render(row);
    expect(record).toEqual({
      id: 1,
      title: 'Dune',
      pageCount: 412,
      notes: null,
      addedAt: '2024-05-01T10:00:00.000Z',
      secret: null,
      author: { id: 3, username: 'frank', bio: 'Wrote it.' },
      shout: 'DUNE',
    });
    expect(Object.keys(record)).toEqual(['id', 'title', 'pageCount', 'notes', 'addedAt', 'secret', 'author', 'shout']);
    expect(books.render({ ...row, author: null }).author).toBeNull();
  });

  it('leaves write-only fields out of the record', () => {
    const quiet = serializer(Book, { ...options, writeOnly: ['notes'] });
    expect(quiet.render(row)).not.toHaveProperty('notes');
    expect(quiet.writable).toContain('notes');
  });
});

describe('chosenFields', () => {
  const chosen = (query: Record<string, string>) => chosenFields(books, new Map(Object.entries(query)));

  it('keeps the serializer when neither fields= nor omit= is given', () => {
    expect(chosen({})).toBe(books);
    expect(chosen({ fields: ' ', omit: '' })).toBe(books);
  });

  it('narrows the record to the fields named, by the names clients see, nested ones by a dotted path', () => {
    expect(Object.keys(chosen({ fields: 'title,pageCount,shout' }).render({ id: 1, title: 'Dune', pages: 412 }))).toEqual(['title', 'pageCount', 'shout']);
    const narrowed = chosen({ fields: 'id,author.username' }).render({ id: 1, author: { id: 3, username: 'frank', bio: 'Wrote it.' } });
    expect(narrowed).toEqual({ id: 1, author: { username: 'frank' } });
  });

  it('leaves out the fields omitted', () => {
    const narrowed = chosen({ omit: 'secret,author.bio,shout,addedAt,notes' });
    expect(narrowed.render({ id: 1, title: 'Dune', pages: 412, author: { id: 3, username: 'frank', bio: 'x' } })).toEqual({
      id: 1,
      title: 'Dune',
      pageCount: 412,
      author: { id: 3, username: 'frank' },
    });
  });

  it('narrows each choice once', () => {
    expect(chosen({ fields: 'title' })).toBe(chosen({ fields: 'title' }));
  });

  it('refuses names the serializer does not show, listing those it does', async () => {
    const error = await refusal(() => chosen({ fields: 'pages,title', omit: 'title.x' }));
    expect([error.status, error.code, error.message]).toEqual([400, 'validation_failed', 'Invalid query parameters.']);
    const allowed = 'Allowed: id, title, pageCount, notes, addedAt, secret, author, shout.';
    expect(error.details).toEqual({ fields: [`Unknown field "pages". ${allowed}`], omit: [`Unknown field "title.x". ${allowed}`] });
  });
});

describe('serializer declarations', () => {
  it('refuses unknown fields and renames onto taken names at declaration', () => {
    expect(() => serializer(Book, { fields: ['id', 'subtitle'] })).toThrow('books: unknown field "subtitle" in fields.');
    expect(() => serializer(Book, { fields: ['id', 'title', 'notes'], rename: { notes: 'title' } })).toThrow('books: "notes" cannot be shown as "title", the name of another field.');
  });
});
