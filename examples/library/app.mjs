/** A small library on Restfold: authors, and books naming their author. See docs/tutorial.md, "The library example". */
import { collection, defineApp, fields, hasPermission, model, serializer } from 'restfold';

const Author = model('authors', {
  id: fields.id(),
  name: fields.string({ maxLength: 100 }),
});

const Book = model('books', {
  id: fields.id(),
  title: fields.string({ maxLength: 200 }),
  author_id: fields.foreignKey('authors'),
  added_at: fields.timestamp({ default: () => new Date() }),
});

// Reads are left to the API default (any signed-in user); writes need a named permission.
const librarians = [hasPermission('library.edit')];
const writes = { create: librarians, update: librarians, partial_update: librarians, destroy: librarians };

const authorSerializer = serializer(Author, { fields: ['id', 'name'], search: ['name'] });

const authors = collection('authors', { serializer: authorSerializer, orderingFields: ['name'], permissions: writes });

const books = collection('books', {
  serializer: serializer(Book, {
    fields: ['id', 'title', 'author', 'author_id', 'added_at'],
    readOnly: ['added_at'],
    search: ['title'],
    nested: { author: { source: 'author_id', serializer: authorSerializer } },
  }),
  filterFields: ['author_id', 'title'],
  orderingFields: ['title', 'added_at'],
  permissions: writes,
});

export default defineApp({
  collections: [authors, books],
  // Books count against their own window: a busy catalogue leaves the rest of the API's allowance alone.
  throttles: { books: { anonymous: '10/min', user: '30/min' } },
  // No `migrations` here: `restfold makemigrations --app examples/library/app.mjs` writes them into
  // ./migrations/, and every command finds them there.
});
