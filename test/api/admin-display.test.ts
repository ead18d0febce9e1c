/**
 * How the admin shows records to staff: a foreign key by the related record's display string
 * (linked to its change page only for those who may view it), Django's verbose names in titles
 * and messages, a foreign key's filter as links or the picker, dates and times readably, and an
 * inline's rows changed and deleted from the parent's form through the nested collection's API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, hasPermission, isAuthenticated, model, modelAdmin, serializer } from '../../src/framework/index.js';
import { FILTER_LINKS } from '../../src/framework/admin/change-list.js';
import { MAX_ROWS } from '../../src/framework/admin/inline-rows.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { adminClient, loggedIn, makeStaff } from '../support/admin-client.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const HOSTILE = '<script>alert(1)</script>';

const Author = model('authors', { id: fields.id(), name: fields.string({ maxLength: 100 }) });
const Publisher = model('publishers', { id: fields.id(), name: fields.string({ maxLength: 100 }), listed: fields.boolean({ default: true }) });
const Book = model('books', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  author_id: fields.foreignKey('authors'),
  publisher_id: fields.foreignKey('publishers', { nullable: true }),
  published_on: fields.date({ nullable: true }),
  created_at: fields.timestamp({ default: () => new Date() }),
});
const Chapter = model('chapters', {
  id: fields.id(),
  book_id: fields.foreignKey('books'),
  title: fields.string({ maxLength: 100 }),
  pages: fields.integer({ minValue: 1 }),
  secret: fields.boolean({ default: false }),
});

const authors = collection('authors', { serializer: serializer(Author, { fields: ['id', 'name'], readOnly: ['id'], search: ['name'] }), permissions: [isAuthenticated] });
// The admin reads the publishers a page names in one request (their `id` filters with `in`), the authors one by one.
const publishers = collection('publishers', {
  serializer: serializer(Publisher, { fields: ['id', 'name', 'listed'], readOnly: ['id'] }),
  filterFields: ['id'],
  permissions: [isAuthenticated],
  scope: async ({ user }) => ((await user?.hasPermission('publishers.see_unlisted')) ? {} : { listed: true }),
});
const books = collection('books', {
  serializer: serializer(Book, { fields: ['id', 'title', 'author_id', 'publisher_id', 'published_on', 'created_at'], readOnly: ['id', 'created_at'] }),
  filterFields: ['author_id'],
  permissions: [isAuthenticated],
});
const chapters = collection('chapters', {
  serializer: serializer(Chapter, { fields: ['id', 'title', 'pages'], readOnly: ['id', 'book_id'] }),
  parent: { collection: books, field: 'book_id' },
  permissions: { list: [isAuthenticated], retrieve: [isAuthenticated], create: [isAuthenticated], update: [hasPermission('chapters.change')], partial_update: [hasPermission('chapters.change')], destroy: [hasPermission('chapters.delete')] },
  // A secret chapter is seen only with chapters.see_secret: the admin's writes must not reach it either.
  scope: async ({ user }) => ((await user?.hasPermission('chapters.see_secret')) ? {} : { secret: false }),
  defaultOrdering: ['id'],
});

const app = withGeneratedMigrations(
  defineApp({
    collections: [authors, publishers, books, chapters],
    admin: {
      collections: [modelAdmin(books, { readOnly: ['author_id'], inlines: [chapters] }), modelAdmin(authors, { display: 'name', verboseName: 'writer', verboseNamePlural: 'writers' }), publishers],
    },
  }),
);

describe('the admin as staff read it', () => {
  let api: TestApi;
  let boss: TestUser;
  let bookId: number;
  let annId: number;
  let unlistedId: number;
  const chapterIds: number[] = [];
  beforeAll(async () => {
    api = await startApi({}, app);
    boss = await api.user('boss', { superuser: true });
    const staff = [
      boss,
      await api.user('clerk', { permissions: ['books.view', 'books.change', 'chapters.view'] }),
      await api.user('editor', { permissions: ['books.view', 'chapters.view', 'chapters.change', 'chapters.delete'] }),
      await api.user('viewer', { permissions: ['books.view', 'chapters.view', 'chapters.change', 'chapters.see_secret'] }),
    ];
    for (const user of staff) await makeStaff(api, user.id);
    const made = async (path: string, body: Record<string, unknown>) => ((await api.request('POST', path, { token: boss.token, body })).json as { id: number }).id;
    annId = await made('/api/v1/authors/', { name: 'Ann' });
    const hostileId = await made('/api/v1/authors/', { name: HOSTILE });
    const penguin = await made('/api/v1/publishers/', { name: 'Penguin' });
    unlistedId = await made('/api/v1/publishers/', { name: 'Unlisted', listed: false });
    bookId = await made('/api/v1/books/', { title: 'Dune', author_id: annId, publisher_id: penguin, published_on: '2026-03-01' });
    await made('/api/v1/books/', { title: 'Emma', author_id: hostileId, publisher_id: unlistedId });
    for (const [title, pages] of [['One', 10], ['Two', 20], ['Three', 30]] as const) chapterIds.push(await made(`/api/v1/books/${bookId}/chapters/`, { title, pages }));
    await api.database.db.insertInto('chapters').values({ book_id: bookId, title: 'Hidden', pages: 5, secret: 1 }).execute();
  });
  afterAll(() => api?.close());

  const secretId = async () => ((await api.database.db.selectFrom('chapters').select('id').where('title', '=', 'Hidden').executeTakeFirst()) as { id: number } | undefined)?.id;
  const chapter = async (id: number) => (await api.request('GET', `/api/v1/books/${bookId}/chapters/${id}/`, { token: boss.token })).json as { title: string; pages: number };

  it("shows a foreign key by the related record's display string, linked only for those who may view it, escaped", async () => {
    const client = await loggedIn(api, 'boss');
    const list = await client.get('/admin/books/');
    expect(list.status).toBe(200);
    expect(list.body).toContain(`<td><a href="/admin/authors/${annId}/change/">Ann</a></td>`);
    expect(list.body).toContain('>&lt;script>alert(1)&lt;/script></a></td>');
    expect(list.body).not.toContain('<script>alert');
    expect(list.body).toContain('<td><a href="/admin/publishers/1/change/">Penguin</a></td>');
    expect(list.body).toContain(`<td><a href="/admin/publishers/${unlistedId}/change/">Unlisted</a></td>`);
    // A read-only foreign key on the change form: the same.
    const form = await client.get(`/admin/books/${bookId}/change/`);
    expect(form.body).toContain(`<dt>author_id</dt><dd><a href="/admin/authors/${annId}/change/">Ann</a></dd>`);
    // The clerk may not view the writers: the name, unlinked.
    const clerk = await loggedIn(api, 'clerk');
    const seen = await clerk.get('/admin/books/');
    expect(seen.body).toContain('<td>Ann</td>');
    expect(seen.body).not.toContain('/admin/authors/');
    // Nor the publishers, and the unlisted one their scope hides from the clerk: its id, unlinked.
    expect(seen.body).toContain('<td>Penguin</td>');
    expect(seen.body).toContain(`<td>${unlistedId}</td>`);
    expect(seen.body).not.toContain('Unlisted');
    expect((await clerk.get(`/admin/books/${bookId}/change/`)).body).toContain('<dt>author_id</dt><dd>Ann</dd>');
  });

  it('names records by their verbose names, declared or from the collection', async () => {
    const client = await loggedIn(api, 'boss');
    const index = await client.get('/admin/');
    expect(index.body).toContain('<a href="/admin/authors/">writers</a>');
    expect((await client.get('/admin/authors/')).body).toContain('<h1>Select writer to change</h1>');
    expect((await client.get('/admin/books/add/')).body).toContain('<h1>Add book</h1>');
    await client.post('/admin/authors/add/', { name: 'Cleo', _save: '' });
    expect((await client.get('/admin/authors/')).body).toContain('The writer “Cleo” was added successfully.');
    const added = await client.post('/admin/books/add/', { title: 'Persuasion', author_id: String(annId), published_on: '', _continue: '' });
    expect(added.status).toBe(302);
    expect((await client.get(added.location!)).body).toContain('The book “Persuasion” was added successfully. You may edit it again below.');
    const id = /\/admin\/books\/(\d+)\//.exec(added.location!)![1]!;
    await client.get(`/admin/books/${id}/delete/`);
    await client.post(`/admin/books/${id}/delete/`, { post: 'yes' });
    expect((await client.get('/admin/books/')).body).toContain('Successfully deleted 1 book.');
  });

  it('shows dates and times readably, their ISO value in <time datetime>', async () => {
    const client = await loggedIn(api, 'boss');
    const list = await client.get('/admin/books/');
    expect(list.body).toContain('<time datetime="2026-03-01">March 1, 2026</time>');
    const time = /<time datetime="(\d{4}-\d\d-\d\dT[\d:.]+Z)">([^<]+)<\/time>/.exec(list.body);
    expect(time).not.toBeNull();
    expect(time![2]).toMatch(/^(Jan\.|Feb\.|March|April|May|June|July|Aug\.|Sept\.|Oct\.|Nov\.|Dec\.) \d{1,2}, \d{4}, (\d{1,2}(:\d\d)? [ap]\.m\.|noon|midnight) UTC$/);
    expect((await client.get(`/admin/books/${bookId}/change/`)).body).toMatch(/<dt>created_at<\/dt><dd><time datetime="[^"]+Z">[^<]+ UTC<\/time><\/dd>/);
  });

  it("filters by a foreign key with a link per related record, or the picker when they are many", async () => {
    const client = await loggedIn(api, 'boss');
    const list = await client.get('/admin/books/');
    expect(list.body).toContain(`<li><a href="/admin/books/?author_id=${annId}">Ann</a></li>`);
    expect(list.body).toContain('<li><a href="/admin/books/?author_id=2">&lt;script>alert(1)&lt;/script></a></li>');
    const filtered = await client.get(`/admin/books/?author_id=${annId}`);
    expect(filtered.body).toContain(`<li class="selected"><a href="/admin/books/?author_id=${annId}" aria-current="true">Ann</a></li>`);
    expect(filtered.body).toContain('<td>Dune</td>');
    expect(filtered.body).not.toContain('<td>Emma</td>');
    for (let made = 3; made <= FILTER_LINKS; made += 1) await api.request('POST', '/api/v1/authors/', { token: boss.token, body: { name: `author ${made}` } });
    const many = await client.get(`/admin/books/?author_id=${annId}`);
    expect(many.body).not.toContain('class="filter-links"');
    expect(many.body).toContain(`<input type="text" id="filter-author_id" name="author_id" value="${annId}" data-lookup="/admin/authors/lookup/" autocomplete="off"/>`);
    expect(many.body).toContain('<a class="related-lookup" href="/admin/authors/lookup/" target="_blank" rel="noopener" data-for="filter-author_id">');
  });

  it("changes and deletes an inline's rows through the nested collection's API, untouched rows unwritten", async () => {
    const client = await loggedIn(api, 'boss');
    const change = `/admin/books/${bookId}/change/`;
    const form = await client.get(change);
    expect(form.body).toContain(`<form method="post" action="/admin/books/${bookId}/inline/chapters/change/" class="inline-rows" novalidate>`);
    expect(form.body).toContain(`<input type="hidden" name="chapters-0-id" value="${chapterIds[0]}"/>`);
    expect(form.body).toMatch(/<input type="text" id="field-chapters-0-title" name="chapters-0-title"[^>]*value="One"/);
    expect(form.body).toContain('<input type="checkbox" name="chapters-1-DELETE" aria-label');
    // The boss sees the secret chapter too (a superuser holds chapters.see_secret).
    expect(form.body).toContain('value="Hidden"');
    const rows = (title: string[], pages: string[]) =>
      Object.fromEntries(chapterIds.flatMap((id, index) => [[`chapters-${index}-id`, String(id)], [`chapters-${index}-title`, title[index]!], [`chapters-${index}-pages`, pages[index]!]]));
    const refused = await client.post(`/admin/books/${bookId}/inline/chapters/change/`, rows(['One', 'Two', 'Three'], ['0', '20', '30']));
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('Please correct the errors below.');
    expect(refused.body).toMatch(/name="chapters-0-pages"[^>]*value="0"\/>[^]*?<ul class="errorlist"><li>/);
    expect(await chapter(chapterIds[0]!)).toMatchObject({ pages: 10 });
    const saved = await client.post(`/admin/books/${bookId}/inline/chapters/change/`, { ...rows(['One!', 'Two', 'Three'], ['12', '20', '30']), 'chapters-1-DELETE': 'on' });
    expect(saved.status).toBe(302);
    expect(saved.location).toBe(change);
    expect((await client.get(change)).body).toContain('The chapters were saved: 1 changed, 1 deleted.');
    expect(await chapter(chapterIds[0]!)).toMatchObject({ title: 'One!', pages: 12 });
    expect((await api.request('GET', `/api/v1/books/${bookId}/chapters/${chapterIds[1]}/`, { token: boss.token })).status).toBe(404);
    expect((await client.post(`/admin/books/${bookId}/inline/chapters/change/`, { ...rows(['One', 'Two', 'Three'], ['1', '1', '1']), csrfmiddlewaretoken: 'forged' })).status).toBe(403);
    const flood = Object.fromEntries(Array.from({ length: MAX_ROWS + 1 }, (_, index) => [`chapters-${index}-id`, String(chapterIds[2])]));
    const refusedFlood = await client.post(`/admin/books/${bookId}/inline/chapters/change/`, flood);
    expect(refusedFlood.status).toBe(400);
    expect(refusedFlood.body).toContain(`At most ${MAX_ROWS} rows are saved at once; ${MAX_ROWS + 1} were posted.`);
    expect(await chapter(chapterIds[2]!)).toMatchObject({ pages: 30 });
  });

  it("holds the nested collection's scope and model permissions on an inline's rows", async () => {
    const hidden = (await secretId())!;
    const third = chapterIds[2]!;
    // The editor may change and delete chapters, but the scope hides the secret one: listed nowhere, and a forged row is refused.
    const editor = await loggedIn(api, 'editor');
    const page = await editor.get(`/admin/books/${bookId}/change/`);
    expect(page.body).not.toContain('Hidden');
    expect(page.body).toContain('name="chapters-0-DELETE"');
    const forged = await editor.post(`/admin/books/${bookId}/inline/chapters/change/`, { 'chapters-0-id': String(hidden), 'chapters-0-title': 'Leaked', 'chapters-0-pages': '5' });
    expect(forged.status).toBe(400);
    expect(forged.body).toContain(`<ul class="errorlist"><li>${hidden}: chapter with ID “${hidden}” doesn’t exist. Perhaps it was deleted?</li></ul>`);
    // A chapter of another book, posted under this one: not this book's, so refused too.
    const other = ((await api.request('POST', '/api/v1/books/', { token: boss.token, body: { title: 'Other', author_id: annId } })).json as { id: number }).id;
    const elsewhere = ((await api.request('POST', `/api/v1/books/${other}/chapters/`, { token: boss.token, body: { title: 'Elsewhere', pages: 3 } })).json as { id: number }).id;
    const moved = await editor.post(`/admin/books/${bookId}/inline/chapters/change/`, { 'chapters-0-id': String(elsewhere), 'chapters-0-title': 'Moved', 'chapters-0-pages': '3' });
    expect(moved.status).toBe(400);
    expect(moved.body).toContain(`${elsewhere}: chapter with ID “${elsewhere}” doesn’t exist.`);
    expect((await api.request('GET', `/api/v1/books/${other}/chapters/${elsewhere}/`, { token: boss.token })).json).toMatchObject({ title: 'Elsewhere' });
    const deleting = await editor.post(`/admin/books/${bookId}/inline/chapters/change/`, { 'chapters-0-id': String(hidden), 'chapters-0-DELETE': 'on' });
    expect(deleting.status).toBe(400);
    expect(deleting.body).toMatch(new RegExp(`<ul class="errorlist"><li>${hidden}: Not found\\.</li></ul>`));
    const stored = await api.database.db.selectFrom('chapters').select(['title']).where('id', '=', hidden).executeTakeFirst();
    expect(stored).toEqual({ title: 'Hidden' });
    // The viewer may change (and see the secret one) but not delete: no delete box, and a posted one is refused whole.
    const viewer = await loggedIn(api, 'viewer');
    const viewed = await viewer.get(`/admin/books/${bookId}/change/`);
    expect(viewed.body).toContain('value="Hidden"');
    expect(viewed.body).not.toContain('-DELETE');
    expect((await viewer.post(`/admin/books/${bookId}/inline/chapters/change/`, { 'chapters-0-id': String(third), 'chapters-0-DELETE': 'on' })).status).toBe(403);
    expect((await viewer.post(`/admin/books/${bookId}/inline/chapters/change/`, { 'chapters-0-id': String(hidden), 'chapters-0-title': 'Shown', 'chapters-0-pages': '5' })).status).toBe(302);
    expect(await api.database.db.selectFrom('chapters').select(['title']).where('id', '=', hidden).executeTakeFirst()).toEqual({ title: 'Shown' });
    // The clerk may only view chapters: a table, no form, and a post is refused.
    const clerk = await loggedIn(api, 'clerk');
    const read = await clerk.get(`/admin/books/${bookId}/change/`);
    expect(read.body).toContain('aria-label="chapters"');
    expect(read.body).not.toContain('/inline/chapters/change/');
    expect((await clerk.post(`/admin/books/${bookId}/inline/chapters/change/`, { 'chapters-0-id': String(third), 'chapters-0-pages': '1' })).status).toBe(403);
    // Without a session there is no CSRF token to match: refused.
    expect((await adminClient(api).post(`/admin/books/${bookId}/inline/chapters/change/`, {})).status).toBe(403);
    expect(await chapter(third)).toMatchObject({ pages: 30 });
  });
});
