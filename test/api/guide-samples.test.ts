/**
 * The guides' samples run (docs/architecture.md, "Docs"): each app of examples/guides/, whose regions the
 * guides show byte for byte, served on a fresh database, with what each sample's text says checked over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, loadMigrations, migrateApp, model, serializer } from '../../src/framework/index.js';
import actionsApp from '../../examples/guides/actions.js';
import aggregatesApp from '../../examples/guides/aggregates.js';
import consistencyApp from '../../examples/guides/consistency.js';
import liveApp from '../../examples/guides/live.js';
import modelsApp from '../../examples/guides/models.js';
import permissionsApp from '../../examples/guides/permissions.js';
import serializersApp from '../../examples/guides/serializers.js';
import versionsApp from '../../examples/guides/versions.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { generatedMigrations, withGeneratedMigrations } from '../support/migrations.js';
import type { AppDefinition } from '../../src/framework/index.js';

/** `definition` served for the tests of the `describe` it is called in, with alice and bob signed up. */
function served(definition: AppDefinition): { api: TestApi; alice: TestUser; bob: TestUser } {
  const it = {} as { api: TestApi; alice: TestUser; bob: TestUser };
  beforeAll(async () => {
    it.api = await startApi({}, withGeneratedMigrations(definition));
    it.alice = await it.api.user('alice');
    it.bob = await it.api.user('bob');
  });
  afterAll(() => it.api.close());
  return it;
}

describe('models and migrations', () => {
  const app = served(modelsApp);
  const post = (url: string, body: unknown) => app.api.request('POST', url, { token: app.alice.token, body });

  it('refuses what a constraint refuses, under the field it names', async () => {
    expect((await post('/api/v1/products/', { sku: 'A-1', stock: -1 })).json.details).toEqual({ stock: ['Stock cannot go below zero.'] });
    const window = await post('/api/v1/products/', { sku: 'A-2', available_from: '2026-02-01', available_until: '2026-01-01' });
    expect(window.json.details).toEqual({ non_field_errors: ['The window ends before it starts.'] });
    expect((await post('/api/v1/products/', { sku: 'A-3' })).status).toBe(201);
    expect((await post('/api/v1/products/', { sku: 'A-3' })).json.details).toEqual({ sku: ['A live product with this SKU already exists.'] });
    expect((await post('/api/v1/products/', { sku: 'A-3', status: 'retired' })).status).toBe(201);
  });

  it('names records by their record key, and makes UUID keys', async () => {
    expect((await post('/api/v1/articles/', { slug: 'hello-world', title: 'Hello' })).status).toBe(201);
    expect((await app.api.request('GET', '/api/v1/articles/hello-world/', { token: app.alice.token })).json).toMatchObject({ slug: 'hello-world' });
    const doc = await post('/api/v1/docs/', { title: 'A doc' });
    expect(doc.json.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await post('/api/v1/pages/', { doc_id: doc.json.id.toUpperCase(), body: 'text' })).json.doc_id).toBe(doc.json.id);
    expect((await app.api.request('GET', '/api/v1/docs/not-a-uuid/', { token: app.alice.token })).status).toBe(404);
  });

  it('applies the migration file shown, after the migration that made its table', async () => {
    const Book = model('books', { id: fields.id(), title: fields.string({ maxLength: 200 }) });
    const books = defineApp({ collections: [collection('books', { serializer: serializer(Book, { fields: ['id', 'title'] }) })] });
    const shown = await loadMigrations(new URL('../../examples/guides/migration-sample/', import.meta.url));
    const api = await startApi({}, defineApp({ ...books, migrations: { ...generatedMigrations(books), ...shown } }));
    try {
      await api.database.db.insertInto('books').values({ title: 'Invisible Cities', isbn: '9780156453806' }).execute();
      expect(await api.database.db.selectFrom('books').select('isbn').executeTakeFirst()).toEqual({ isbn: '9780156453806' });
      expect(await migrateApp(api.database, defineApp({ ...books, migrations: { ...generatedMigrations(books), ...shown } }))).toEqual([]);
    } finally {
      await api.close();
    }
  });
});

describe('serializers and fields', () => {
  const app = served(serializersApp);
  const post = (url: string, body: unknown) => app.api.request('POST', url, { token: app.alice.token, body });
  const get = (url: string) => app.api.request('GET', url, { token: app.alice.token });

  it("reports every validator's message, the limits' first", async () => {
    const refused = await post('/api/v1/products/', { sku: 'ab', price: '-1', note: 'http://casino' });
    expect(refused.json.details).toEqual({
      sku: ['Ensure this field has at least 3 characters.', 'This value does not match the required pattern.'],
      price: ['Ensure this value is greater than or equal to 0.'],
      note: ['No links.', 'Not here.', 'Read the rules.'],
    });
    expect((await post('/api/v1/products/', { sku: 'ABC-1', price: '9.99' })).status).toBe(201);
  });

  it("runs the serializer's validate on the record as it would be stored", async () => {
    const refused = await post('/api/v1/events/', { title: 'Backwards', starts: '2026-02-02T10:00:00Z', ends: '2026-02-01T10:00:00Z' });
    expect(refused.json.details).toEqual({ ends: ['Must not be before the start.'] });
    const event = await post('/api/v1/events/', { title: 'Forwards', starts: '2026-02-01T10:00:00Z', ends: '2026-02-02T10:00:00Z' });
    const patched = await app.api.request('PATCH', `/api/v1/events/${event.json.id}/`, { token: app.alice.token, body: { starts: '2026-03-01T10:00:00Z' } });
    expect(patched.json.details).toEqual({ ends: ['Must not be before the start.'] });
  });

  it('computes counts, ids, existence and values from the row', async () => {
    const author = await post('/api/v1/authors/', { name: 'Le Guin' });
    for (const title of ['The Dispossessed', 'The Lathe of Heaven']) await post('/api/v1/books/', { title, author_id: author.json.id });
    const shown = await get(`/api/v1/authors/${author.json.id}/`);
    expect(shown.json).toEqual({ id: author.json.id, name: 'Le Guin', book_count: 2, book_ids: [1, 2], followed: false, greeting: 'Le Guin greets alice' });
  });

  it('nests, relates, renames and filters as declared', async () => {
    const dragons = await post('/api/v1/tags/', { name: 'dragons' });
    await post('/api/v1/tags/', { name: 'elves' });
    const article = await post('/api/v1/articles/', { title: 'Earthsea', author_id: app.alice.id, tags: [dragons.json.id] });
    expect(article.json).toEqual({ id: 1, title: 'Earthsea', author: { id: app.alice.id, username: 'alice' }, author_id: app.alice.id, tags: [dragons.json.id] });
    expect((await get(`/api/v1/articles/?tags=${dragons.json.id}&author__username=alice`)).json.count).toBe(1);
    const fed = await get('/api/v1/feed/1/');
    expect(fed.json).toMatchObject({ tagList: ['dragons'], createdAt: expect.any(String), author: { username: 'alice' } });
    expect(fed.json).not.toHaveProperty('tag_list');
    expect((await get('/api/v1/feed/?tag=dragons&author=alice')).json.count).toBe(1);
    expect((await get('/api/v1/feed/?tag=elves')).json.count).toBe(0);
    expect((await get('/api/v1/feed/?favorited=bob')).json.count).toBe(0);
  });

  it("takes a field of one's own, with its own parse", async () => {
    expect((await post('/api/v1/editions/', { isbn: '123' })).json.details).toEqual({ isbn: ['13 digits.'] });
    expect((await post('/api/v1/editions/', { isbn: '9780156453806' })).status).toBe(201);
  });
});

describe('aggregates and URLs', () => {
  const app = served(aggregatesApp);
  const post = (url: string, body: unknown, user = app.alice) => app.api.request('POST', url, { token: user.token, body });

  it('sums, averages and takes the greatest in SQL, over lines and a join table', async () => {
    const order = await post('/api/v1/orders/', {});
    await post('/api/v1/lines/', { order_id: order.json.id, quantity: 2, unit_price: '5.00' });
    await post('/api/v1/lines/', { order_id: order.json.id, quantity: 1, unit_price: '10.50', status: 'cancelled' });
    const heavy = await post('/api/v1/tags/', { name: 'heavy', weight: 3 });
    const fragile = await post('/api/v1/tags/', { name: 'fragile', weight: 4 });
    await app.api.request('PATCH', `/api/v1/order-tags/${order.json.id}/`, { token: app.alice.token, body: { tags: [heavy.json.id, fragile.json.id] } });
    const shown = await app.api.request('GET', `/api/v1/orders/${order.json.id}/`, { token: app.alice.token });
    expect(shown.json).toEqual({ id: order.json.id, total: '20.50', active_total: '10.00', items: 3, avg_price: '7.75', dearest: '10.50', tag_weight: 7 });
    const empty = await post('/api/v1/orders/', {});
    expect(empty.json).toMatchObject({ total: '0.00', items: null, dearest: null });
  });

  it("counts every seat for everyone with visibility: 'all', and a viewer's own without", async () => {
    const event = await post('/api/v1/events/', { title: 'Concert' });
    for (const [user, price] of [[app.alice, '50.00'], [app.alice, '50.00'], [app.bob, '75.50']] as const) await post('/api/v1/seats/', { event_id: event.json.id, price }, user);
    const seen = async (user: TestUser) => (await app.api.request('GET', `/api/v1/events/${event.json.id}/`, { token: user.token })).json;
    expect(await seen(app.alice)).toMatchObject({ sold: 3, bought: 2, revenue: '175.50' });
    expect(await seen(app.bob)).toMatchObject({ sold: 3, bought: 1, revenue: '175.50' });
  });

  it("links each record to its own URL, a nested user's to the people collection", async () => {
    await app.api.database.db.insertInto('todos').values({ title: 'Water the plants', owner_id: app.alice.id }).execute();
    const todo = await app.api.request('GET', '/api/v1/todos/1/', { token: app.alice.token, headers: { host: 'api.example.com' } });
    expect(todo.json).toMatchObject({ url: 'http://api.example.com/api/v1/todos/1/', owner: { url: `http://api.example.com/api/v1/people/${app.alice.id}/`, username: 'alice' } });
  });
});

describe('permissions and scopes', () => {
  const app = served(permissionsApp);
  const as = (user: TestUser | undefined, method: string, url: string, body?: unknown) => app.api.request(method, url, { token: user?.token, body });

  it("refuses a locked book's writes by the model's rule, and lets reads through", async () => {
    const book = await as(app.alice, 'POST', '/api/v1/books/', { title: 'Locked', locked: true });
    expect((await as(app.alice, 'PATCH', `/api/v1/books/${book.json.id}/`, { title: 'Changed' })).status).toBe(403);
    expect((await as(app.alice, 'GET', `/api/v1/books/${book.json.id}/`)).status).toBe(200);
  });

  it("keeps each user's todos their own: 404 for another's, 403 for a record written outside the scope", async () => {
    const mine = await as(app.alice, 'POST', '/api/v1/todos/', { title: 'Mine', owner_id: app.alice.id });
    expect(mine.status).toBe(201);
    expect((await as(app.alice, 'POST', '/api/v1/todos/', { title: 'Theirs', owner_id: app.bob.id })).status).toBe(403);
    expect((await as(app.bob, 'GET', `/api/v1/todos/${mine.json.id}/`)).status).toBe(404);
  });

  it("scopes boards by a store condition over memberships, and notes by an async permission check", async () => {
    const db = app.api.database.db;
    const team = await db.insertInto('teams').values({ name: 'Blue' }).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('memberships').values({ team_id: team.id, user_id: app.alice.id }).execute();
    // Booleans as 1 and 0, which both databases take.
    await db.insertInto('boards').values([{ name: 'Open', team_id: team.id, archived: 0 }, { name: 'Old', team_id: team.id, archived: 1 }]).execute();
    expect((await as(app.alice, 'GET', '/api/v1/boards/')).json.results.map((board: { name: string }) => board.name)).toEqual(['Open']);
    expect((await as(app.bob, 'GET', '/api/v1/boards/')).json.count).toBe(0);

    await as(app.alice, 'POST', '/api/v1/notes/', { text: "alice's" });
    expect((await as(app.bob, 'GET', '/api/v1/notes/')).json.count).toBe(0);
    const auditor = await app.api.user('auditor', { permissions: ['notes.view_all'] });
    expect((await as(auditor, 'GET', '/api/v1/notes/')).json.count).toBe(1);
  });

  it('serves the tags some article has, through where', async () => {
    const db = app.api.database.db;
    const used = await db.insertInto('tags').values({ name: 'used' }).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('tags').values({ name: 'unused' }).execute();
    await db.insertInto('articles_tags').values({ tag_id: used.id, article: 'Earthsea' }).execute();
    expect((await as(app.alice, 'GET', '/api/v1/tags/')).json.results).toEqual([{ id: Number(used.id), name: 'used' }]);
  });

  it('refuses a price from whoever may not set it, and shows staff their own serializer', async () => {
    const refused = await as(app.alice, 'POST', '/api/v1/events/', { title: 'Gig', price: '10.00' });
    expect(refused).toMatchObject({ status: 403, json: { details: { price: [expect.stringContaining('events.set_price')] } } });
    const event = await as(app.alice, 'POST', '/api/v1/events/', { title: 'Gig' });
    const staff = await app.api.user('staff', { superuser: true });
    expect((await as(staff, 'GET', `/api/v1/events/${event.json.id}/`)).json).toEqual({ id: event.json.id, title: 'Gig', price: '0.00', budget: null, notes: null });
    expect((await as(app.alice, 'GET', `/api/v1/events/${event.json.id}/`)).json).toEqual({ id: event.json.id, title: 'Gig', price: '0.00' });
  });

  it('renders an open list for nobody, and for a signed-in caller', async () => {
    await app.api.database.db.insertInto('posts').values({ title: 'Open', author_id: app.alice.id }).execute();
    expect((await as(undefined, 'GET', '/api/v1/posts/')).json.results).toEqual([{ id: 1, title: 'Open', favorited: false, mine: false }]);
    expect((await as(app.alice, 'GET', '/api/v1/posts/')).json.results).toEqual([{ id: 1, title: 'Open', favorited: false, mine: true }]);
    expect((await as(undefined, 'POST', '/api/v1/posts/', { title: 'Anonymous' })).status).toBe(401);
  });
});

describe('consistency', () => {
  const app = served(consistencyApp);
  const post = (url: string, body: unknown) => app.api.request('POST', url, { token: app.alice.token, body });

  it('sets the owner and a free slug before a create, logs after it, and refuses an update of a locked record', async () => {
    expect((await post('/api/v1/articles/', { title: 'Hello World' })).json.slug).toBe('hello-world');
    const second = await post('/api/v1/articles/', { title: 'Hello, world!' });
    expect(second.json.slug).toBe('hello-world-2');
    expect((await app.api.request('GET', '/api/v1/log/', { token: app.alice.token })).json.results.map((row: { line: string }) => row.line)).toEqual(['created 1', 'created 2']);
    await app.api.database.db.updateTable('articles').set({ locked: 1 }).where('id', '=', second.json.id).execute();
    expect((await app.api.request('PATCH', `/api/v1/articles/${second.json.id}/`, { token: app.alice.token, body: { title: 'Changed' } })).status).toBe(403);
  });

  it('takes stock atomically: exactly as many concurrent lines as the stock allows', async () => {
    const product = await post('/api/v1/products/', { sku: 'P-1', stock: 3 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => post('/api/v1/lines/', { product_id: product.json.id, quantity: 1 })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 400, 400, 400, 400, 400]);
    expect(answers.find((answer) => answer.status === 400)!.json.details).toEqual({ quantity: ['Not enough stock.'] });
    expect((await app.api.request('GET', `/api/v1/products/${product.json.id}/`, { token: app.alice.token })).json).toMatchObject({ stock: 0, sold: 3 });
  });

  it('gives concurrent same-title postings slugs of their own under a named lock', async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => post('/api/v1/postings/', { title: 'Same title' })));
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map((answer) => answer.json.slug)).size).toBe(5);
  });
});

describe('collections and actions', () => {
  const app = served(actionsApp);
  const as = (user: TestUser | undefined, method: string, url: string, body?: unknown, headers?: Record<string, string>) =>
    app.api.request(method, url, { token: user?.token, body, headers });

  it('serves custom actions: HTML, a declared body, its own permission, a list action', async () => {
    const snippet = await as(app.alice, 'POST', '/api/v1/snippets/', { title: 'x', code: '<b>' });
    const html = await as(app.alice, 'GET', `/api/v1/snippets/${snippet.json.id}/highlight/`, undefined, { accept: 'text/html' });
    expect(html.body).toBe('<pre>&#60;b&#62;</pre>');
    expect((await as(app.alice, 'POST', `/api/v1/snippets/${snippet.json.id}/publish/`, { channel: 'news' })).status).toBe(403);
    const publisher = await app.api.user('publisher', { permissions: ['snippets.publish'] });
    const published = await as(publisher, 'POST', `/api/v1/snippets/${snippet.json.id}/publish/`, { channel: 'news' });
    expect(published).toMatchObject({ status: 202, json: { queued: snippet.json.id, channel: 'news', urgent: false } });
    expect((await as(app.alice, 'GET', '/api/v1/snippets/recent/')).json).toEqual({ user: 'alice' });
  });

  it('answers a record from an action, and a page from a where action', async () => {
    const gizmo = await as(app.alice, 'POST', '/api/v1/gizmos/', { name: 'g' });
    expect((await as(app.alice, 'POST', `/api/v1/gizmos/${gizmo.json.id}/star/`)).json).toEqual({ id: gizmo.json.id, name: 'g', starred: true });
    await as(app.alice, 'POST', '/api/v1/products/', { name: 'few', stock: 3 });
    await as(app.alice, 'POST', '/api/v1/products/', { name: 'many', stock: 30 });
    expect((await as(app.alice, 'GET', '/api/v1/products/low-stock/')).json.results.map((product: { name: string }) => product.name)).toEqual(['few']);
  });

  it('serves the built-in actions named, the list with its own serializer, a create answered 200', async () => {
    const created = await as(app.alice, 'POST', '/api/v1/articles/', { title: 'T', body: 'B' });
    expect(created.status).toBe(200);
    expect((await as(app.alice, 'PATCH', `/api/v1/articles/${created.json.id}/`, { title: 'U' })).status).toBe(405);
    expect((await as(app.alice, 'PUT', `/api/v1/articles/${created.json.id}/`, { title: 'U' })).json).toEqual({ id: created.json.id, title: 'U', body: 'B' });
    expect((await as(app.alice, 'GET', '/api/v1/articles/')).json.results).toEqual([{ id: created.json.id, title: 'U' }]);
  });

  it('deletes on the list: a filter required where the collection says so', async () => {
    await as(app.alice, 'POST', '/api/v1/labels/', { name: 'a', color: 'red' });
    await as(app.alice, 'POST', '/api/v1/labels/', { name: 'b', color: 'blue' });
    expect((await as(app.alice, 'DELETE', '/api/v1/labels/')).status).toBe(400);
    expect((await as(app.alice, 'DELETE', '/api/v1/labels/?color=red')).status).toBe(204);
    expect((await as(app.alice, 'GET', '/api/v1/labels/')).json.count).toBe(1);
  });

  it('renders CSV and NDJSON beside JSON', async () => {
    await as(app.alice, 'POST', '/api/v1/orders/', { reference: 'R-1', total: '9.50' });
    expect((await as(app.alice, 'GET', '/api/v1/orders/?format=csv')).body).toBe('id,reference,total\r\n1,R-1,9.50\r\n');
    expect((await as(app.alice, 'GET', '/api/v1/orders/', undefined, { accept: 'application/x-ndjson' })).body).toBe('{"id":1,"reference":"R-1","total":"9.50"}\n');
  });

  it('nests comments under their post, within the parent collection’s scope', async () => {
    const post = await as(app.alice, 'POST', '/api/v1/posts/', { title: 'P' });
    const comment = await as(app.alice, 'POST', `/api/v1/posts/${post.json.id}/comments/`, { body: 'hi', post_id: 99 });
    expect(comment.json).toEqual({ id: 1, body: 'hi', post_id: post.json.id });
    expect((await as(app.bob, 'GET', `/api/v1/posts/${post.json.id}/comments/`)).status).toBe(404);
  });

  it("serves the caller's own record as a singleton, and the app's route behind its permission", async () => {
    await app.api.database.db.insertInto('members').values({ id: app.alice.id, username: 'alice', email: 'alice@example.com', bio: '' }).execute();
    expect((await as(app.alice, 'GET', '/api/v1/me/')).json).toEqual({ id: app.alice.id, username: 'alice', email: 'alice@example.com', bio: '' });
    expect((await as(undefined, 'GET', '/api/v1/me/')).status).toBe(401);
    expect((await as(undefined, 'GET', '/reports/summary')).status).toBe(401);
    expect((await as(app.alice, 'GET', '/reports/summary')).status).toBe(403);
    const reporter = await app.api.user('reporter', { permissions: ['reports.view'] });
    expect((await as(reporter, 'GET', '/reports/summary')).json).toEqual({ for: 'reporter' });
  });
});

describe('versions and live changes', () => {
  const versions = served(versionsApp);
  const live = served(liveApp);

  it("shows each version's fields under its path, and refuses a version not allowed", async () => {
    const { api, alice } = versions;
    await api.request('POST', '/api/v2/articles/', { token: alice.token, body: { title: 'T', summary: 'S' } });
    expect((await api.request('GET', '/api/v1/articles/1/', { token: alice.token, headers: { host: 'h' } })).json).toEqual({ id: 1, url: 'http://h/api/v1/articles/1/', title: 'T' });
    expect((await api.request('GET', '/api/v2/articles/1/', { token: alice.token, headers: { host: 'h' } })).json).toEqual({ id: 1, url: 'http://h/api/v2/articles/1/', title: 'T', summary: 'S' });
    expect((await api.request('GET', '/api/v9/articles/1/', { token: alice.token })).status).toBe(404);
  });

  it('documents the live stream of the collection', async () => {
    const document = await live.api.request('GET', '/api/v1/schema/', { token: live.alice.token });
    expect(Object.keys(document.json.paths)).toContain('/api/v1/articles/events/');
  });
});
