/**
 * UUID primary keys (`id: fields.uuid({ primaryKey: true })`): made on create, taken by detail paths
 * in any case (anything else is 404, as DRF answers), referenced by foreign keys, filtered, ordered
 * and paged by cursor; and foreign keys' on_delete (cascade, set null, restrict → 400 `protected`).
 */
import { describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { declaredSchemaDifferences } from '../../src/framework/app/declared-schema.js';
import { servedWithUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const Doc = model('docs', { id: fields.uuid({ primaryKey: true }), title: fields.string({ maxLength: 100 }) });
const Page = model('doc_pages', { id: fields.id(), doc_id: fields.foreignKey(Doc), body: fields.text() });

const Shelf = model('shelves', { id: fields.id(), name: fields.string({ maxLength: 50 }) });
const Book = model('books', { id: fields.id(), shelf_id: fields.foreignKey('shelves', { onDelete: 'restrict' }), title: fields.string({ maxLength: 50 }) });
const Loan = model('loans', { id: fields.id(), book_id: fields.foreignKey('books', { onDelete: 'cascade' }), borrower: fields.string({ maxLength: 50 }) });
const Review = model('reviews', { id: fields.id(), book_id: fields.foreignKey('books', { onDelete: 'set null', nullable: true }), text: fields.text() });

const docs = serializer(Doc, { fields: ['id', 'title'] });
const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('docs', { serializer: docs, orderingFields: ['title'] }),
      collection('doc-cursor', { serializer: serializer(Doc, { name: 'DocByCursor', fields: ['id', 'title'] }), pagination: 'cursor', pageSize: 2 }),
      collection('pages', { serializer: serializer(Page, { fields: ['id', 'doc_id', 'body'] }), filterFields: ['doc_id'] }),
      collection('shelves', { serializer: serializer(Shelf, { fields: ['id', 'name'] }) }),
      collection('books', { serializer: serializer(Book, { fields: ['id', 'shelf_id', 'title'] }) }),
      collection('loans', { serializer: serializer(Loan, { fields: ['id', 'book_id', 'borrower'] }) }),
      collection('reviews', { serializer: serializer(Review, { fields: ['id', 'book_id', 'text'] }) }),
    ],
  }),
);

const served = servedWithUser(app, 'alice');

const call = (method: string, url: string, body?: unknown, headers?: Record<string, string>) =>
  served.api.request(method, `/api/v1${url}`, { token: served.user.token, body, headers });

describe('a UUID primary key', () => {
  it('is made on create (a sent id is ignored, as read-only) and names the record in Location and its path', async () => {
    const sent = '00000000-0000-4000-8000-000000000000';
    const created = await call('POST', '/docs/', { id: sent, title: 'Spec' });
    expect(created.status).toBe(201);
    expect(created.json.id).toMatch(UUID);
    expect(created.json.id).not.toBe(sent);
    expect(created.headers.location).toBe(`http://localhost/api/v1/docs/${created.json.id}/`);
    const read = await call('GET', `/docs/${created.json.id}/`);
    expect(read.json).toEqual({ id: created.json.id, title: 'Spec' });
  });

  it('takes the path in any case, and answers 404 for what is no UUID', async () => {
    const { id } = (await call('POST', '/docs/', { title: 'Cased' })).json;
    expect((await call('GET', `/docs/${String(id).toUpperCase()}/`)).json).toEqual({ id, title: 'Cased' });
    for (const path of ['not-a-uuid', '123', `${String(id)}0`]) {
      const reply = await call('GET', `/docs/${path}/`);
      expect(reply.status).toBe(404);
      expect(reply.json.code).toBe('not_found');
    }
    expect((await call('GET', '/docs/00000000-0000-4000-8000-000000000000/')).status).toBe(404);
  });

  it('updates and deletes by UUID', async () => {
    const { id } = (await call('POST', '/docs/', { title: 'Old' })).json;
    expect((await call('PATCH', `/docs/${id}/`, { title: 'New' })).json).toEqual({ id, title: 'New' });
    expect((await call('DELETE', `/docs/${id}/`)).status).toBe(204);
    expect((await call('GET', `/docs/${id}/`)).status).toBe(404);
  });

  it('is referenced by foreign keys: checked, rendered, filtered, and cascading by default', async () => {
    const { id: doc } = (await call('POST', '/docs/', { title: 'Parent' })).json;
    const page = await call('POST', '/pages/', { doc_id: String(doc).toUpperCase(), body: 'one' });
    expect(page.status).toBe(201);
    expect(page.json.doc_id).toBe(doc);
    const unknown = await call('POST', '/pages/', { doc_id: '00000000-0000-4000-8000-000000000000', body: 'x' });
    expect(unknown.status).toBe(400);
    expect(Object.keys(unknown.json.details)).toEqual(['doc_id']);
    const invalid = await call('POST', '/pages/', { doc_id: 7, body: 'x' });
    expect(invalid.json.details).toEqual({ doc_id: ['Must be a valid UUID.'] });
    expect((await call('GET', `/pages/?doc_id=${doc}`)).json.results.map((row: { id: number }) => row.id)).toEqual([page.json.id]);
    expect((await call('GET', '/pages/?doc_id=nope')).json.details).toEqual({ doc_id: ['Must be a valid UUID.'] });
    await call('DELETE', `/docs/${doc}/`);
    expect((await call('GET', `/pages/${page.json.id}/`)).status).toBe(404);
  });

  it('orders by id and pages by cursor, ties broken by the UUID', async () => {
    const made: string[] = [];
    for (let index = 0; index < 5; index++) made.push((await call('POST', '/docs/', { title: 'Same' })).json.id);
    const all = (await call('GET', '/docs/?ordering=id')).json.results.map((row: { id: string }) => row.id);
    expect(all).toEqual([...all].sort());
    const seen: string[] = [];
    let next: string | null = '/api/v1/doc-cursor/?ordering=-id';
    while (next) {
      const reply = await served.api.request('GET', next.replace('http://localhost', ''), { token: served.user.token });
      expect(reply.status).toBe(200);
      seen.push(...reply.json.results.map((row: { id: string }) => row.id));
      next = reply.json.next;
    }
    expect(seen).toEqual([...all].sort().reverse());
    expect(seen).toEqual(expect.arrayContaining(made));
  });

  it('is made by the generated migration as the dialect’s UUID column, its foreign keys likewise, as the declarations say', async () => {
    expect(await declaredSchemaDifferences(served.api.database, app)).toEqual([]);
    const columns = await served.api.database.capabilities.liveColumns(served.api.database.db);
    const typeOf = (table: string, column: string) => columns.find((live) => live.table === table && live.column === column)?.type;
    const expected = served.api.database.dialect === 'postgres' ? 'uuid' : 'text';
    expect([typeOf('docs', 'id'), typeOf('doc_pages', 'doc_id')]).toEqual([expected, expected]);
  });

  it('is a string of format uuid in the OpenAPI document, and the detail path’s parameter', async () => {
    const document = (await served.api.request('GET', '/api/v1/schema/')).json;
    expect(document.components.schemas.Doc.properties.id).toMatchObject({ type: 'string', format: 'uuid', readOnly: true });
    const [parameter] = document.paths['/api/v1/docs/{id}/'].get.parameters.filter((p: { in: string }) => p.in === 'path');
    expect(parameter.schema).toMatchObject({ type: 'string', format: 'uuid' });
  });
});

describe('on_delete', () => {
  const book = async () => {
    const shelf = (await call('POST', '/shelves/', { name: 'Fiction' })).json.id;
    const id = (await call('POST', '/books/', { shelf_id: shelf, title: 'Dune' })).json.id;
    return { shelf, id };
  };

  it('restrict: refuses to delete a record others refer to, with 400 naming their table, and keeps it', async () => {
    const { shelf, id } = await book();
    for (const headers of [undefined, { 'If-Match': '*' }]) {
      const reply = await call('DELETE', `/shelves/${shelf}/`, undefined, headers);
      expect(reply.status).toBe(400);
      expect(reply.json).toEqual({
        error: 'This record cannot be deleted: other records refer to it.',
        code: 'protected',
        details: { books: ['Records of books refer to this record; delete or change them first.'] },
      });
    }
    expect((await call('GET', `/shelves/${shelf}/`)).status).toBe(200);
    expect((await call('DELETE', `/books/${id}/`)).status).toBe(204);
    expect((await call('DELETE', `/shelves/${shelf}/`)).status).toBe(204);
  });

  it('cascade deletes the referring rows, set null empties their key', async () => {
    const { id } = await book();
    const loan = (await call('POST', '/loans/', { book_id: id, borrower: 'bob' })).json.id;
    const review = (await call('POST', '/reviews/', { book_id: id, text: 'Great' })).json.id;
    expect((await call('DELETE', `/books/${id}/`)).status).toBe(204);
    expect((await call('GET', `/loans/${loan}/`)).status).toBe(404);
    expect((await call('GET', `/reviews/${review}/`)).json).toEqual({ id: review, book_id: null, text: 'Great' });
  });

  it('refuses at declaration a set null key that cannot be null', () => {
    expect(() => fields.foreignKey('books', { onDelete: 'set null' })).toThrow(/must be nullable/);
  });
});
