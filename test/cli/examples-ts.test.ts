/**
 * examples/todos, examples/snippets and examples/shop as their READMEs run them: `restfold serve --app
 * examples/<name>/app.ts`, apps importing the built package by its name, checked over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCaller, startServer, type SpawnedServer } from '../support/spawned-server.js';

/** The app served, with `users` made (name → the permissions they hold) and a token each. */
function served(app: string, users: Readonly<Record<string, readonly string[]>>) {
  let server: SpawnedServer;
  const tokens: Record<string, string> = {};
  beforeAll(async () => {
    server = await startServer({ appArgs: ['--app', app] });
    for (const [username, permissions] of Object.entries(users)) {
      // As the READMEs run them: the accounts' commands need no --app.
      server.cli(['createuser', '--username', username, '--password', `${username}-pass`, ...permissions.flatMap((name) => ['--permission', name])], undefined, false);
      tokens[username] = server.cli(['token', 'create', '--username', username], undefined, false).trim();
    }
  }, 120_000);
  afterAll(() => server?.stop());
  return apiCaller(() => server, tokens);
}

describe('the todos example', () => {
  const call = served('examples/todos/app.ts', { alice: [], bob: [] });
  it("keeps each user's todos their own", async () => {
    const todo = await call('POST', 'todos/', 'alice', { task: 'buy milk' });
    expect(todo).toMatchObject({ status: 201, json: { task: 'buy milk', done: false } });
    expect((await call('GET', 'todos/', 'bob')).json).toMatchObject({ count: 0, results: [] });
    expect((await call('GET', `todos/${todo.json.id}/`, 'bob')).status).toBe(404);
    expect((await call('GET', 'todos/', 'alice')).json).toMatchObject({ count: 1 });
  });
});

describe('the snippets example', () => {
  const call = served('examples/snippets/app.ts', { alice: [], bob: [] });
  it('serves the tutorial: snippets owned by their author, highlighted as HTML', async () => {
    const snippet = await call('POST', 'snippets/', 'alice', { title: 'hello', code: 'print("hello")' });
    expect(snippet).toMatchObject({ status: 201, json: { owner: 'alice', language: 'python', style: 'friendly' } });
    expect((await call('PATCH', `snippets/${snippet.json.id}/`, 'bob', { title: 'mine' })).status).toBe(403);
    const highlighted = await call('GET', `snippets/${snippet.json.id}/highlight/`, 'bob');
    expect(highlighted.status).toBe(200);
    expect(highlighted.text).toContain('print(&quot;hello&quot;)');
    const users = await call('GET', 'users/', 'bob');
    expect(users.json.results).toContainEqual(expect.objectContaining({ username: 'alice', snippets: [snippet.json.id] }));
  });
});

describe('the shop example', () => {
  const call = served('examples/shop/app.ts', { manager: ['shop.manage', 'shop.restock'], alice: [] });
  it('sells what is in stock, on its generated migrations', async () => {
    const made = await call('POST', 'products/', 'manager', { sku: 'tea', name: 'Tea', price: '2.50', stock: 1, status: 'active' });
    expect(made).toMatchObject({ status: 201, json: { sku: 'tea', stock: 1 } });
    expect((await call('POST', 'products/tea/restock/', 'manager', { quantity: 2 })).json).toMatchObject({ stock: 3 });
    const order = await call('POST', 'orders/', 'alice', {});
    expect((await call('POST', `orders/${order.json.id}/lines/`, 'alice', { product: 'tea', quantity: 2 })).json).toMatchObject({ unit_price: '2.50' });
    expect((await call('POST', `orders/${order.json.id}/lines/`, 'alice', { product: 'tea', quantity: 2 })).json).toMatchObject({ details: { quantity: ['Only 1 in stock.'] } });
    expect((await call('GET', `orders/${order.json.id}/`, 'alice')).json).toMatchObject({ total: '5.00' });
  });
});

describe('the RealWorld example', () => {
  let server: SpawnedServer;
  let token: string;
  beforeAll(async () => {
    server = await startServer({ appArgs: ['--app', 'examples/realworld/app.ts'] });
    // Registered as the README does: POST /api/users answers the user with a token.
    const registered = await fetch(`${server.url}/api/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: { username: 'jake', email: 'jake@jake.jake', password: 'jakejake' } }),
    });
    expect(registered.status).toBe(201);
    ({ token } = ((await registered.json()) as { user: { token: string } }).user);
  }, 120_000);
  afterAll(() => server?.stop());

  it('serves Conduit’s paths and envelopes, with its Token credentials, as its README runs it', async () => {
    const article = { title: 'How to train your dragon', description: 'Ever wonder how?', body: 'Very carefully.', tagList: ['training', 'dragons'] };
    const created = await fetch(`${server.url}/api/articles`, {
      method: 'POST',
      headers: { authorization: `Token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ article }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ article: { slug: 'how-to-train-your-dragon', tagList: ['dragons', 'training'], author: { username: 'jake', following: false } } });
    expect(await (await fetch(`${server.url}/api/tags`)).json()).toStrictEqual({ tags: ['dragons', 'training'] });
    expect(await (await fetch(`${server.url}/api/articles?limit=1`)).json()).toMatchObject({ articlesCount: 1, articles: [{ slug: 'how-to-train-your-dragon' }] });
  });
});
