/**
 * examples/snippets, in-process (the CLI serving it is test/cli/examples-ts.test.ts.after-h24):
 * DRF's tutorial, parts 1–6, through HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import snippetsApp from '../../examples/snippets/app.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  api = await startApi({}, snippetsApp);
  alice = await api.user('alice');
  bob = await api.user('bob');
});
afterAll(() => api.close());

const post = (user: TestUser | undefined, body: unknown) => api.request('POST', '/api/v1/snippets/', { token: user?.token, body });

describe('the snippets example', () => {
  it('creates a snippet owned by the requesting user, with the defaults', async () => {
    const reply = await post(alice, { code: 'print("hello, world")\n', owner: 'bob' });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ owner: 'alice', title: '', code: 'print("hello, world")\n', linenos: false, language: 'python', style: 'friendly' });
    expect((await post(undefined, { code: 'x' })).status).toBe(401);
  });

  it('restricts language and style to their choices', async () => {
    const reply = await post(alice, { code: 'x', language: 'cobol', style: 'loud' });
    expect(reply.status).toBe(400);
    expect(reply.json.details.language[0]).toMatch(/^Choose one of: python, /);
    expect(reply.json.details.style[0]).toMatch(/^Choose one of: friendly, /);
  });

  it('lets anyone read, and only the owner change or delete (IsOwnerOrReadOnly)', async () => {
    const { id } = (await post(alice, { title: 'mine', code: 'a = 1' })).json;
    expect((await api.request('GET', `/api/v1/snippets/${id}/`)).json).toMatchObject({ title: 'mine', owner: 'alice' });
    expect((await api.request('PATCH', `/api/v1/snippets/${id}/`, { token: bob.token, body: { title: 'bob’s' } })).status).toBe(403);
    expect((await api.request('DELETE', `/api/v1/snippets/${id}/`, { token: bob.token })).status).toBe(403);
    expect((await api.request('PATCH', `/api/v1/snippets/${id}/`, { body: { title: 'anon' } })).status).toBe(401);
    expect((await api.request('PATCH', `/api/v1/snippets/${id}/`, { token: alice.token, body: { linenos: true } })).json).toMatchObject({ linenos: true, owner: 'alice' });
    expect((await api.request('DELETE', `/api/v1/snippets/${id}/`, { token: alice.token })).status).toBe(204);
  });

  it('highlights a snippet as an HTML page, escaped, with line numbers', async () => {
    const { id } = (await post(bob, { title: '<script>', code: 'if a < b:\n    print("&")', linenos: true })).json;
    const reply = await api.request('GET', `/api/v1/snippets/${id}/highlight/`);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(reply.body).toContain('<pre class="highlight language-python style-friendly">1  if a &lt; b:\n2      print(&quot;&amp;&quot;)</pre>');
    expect(reply.body).toContain('<title>&lt;script&gt;</title>');
    expect(reply.body).not.toContain('<script>');
    expect((await api.request('GET', '/api/v1/snippets/999999/highlight/')).status).toBe(404);
  });

  it('shows each user with the ids of their snippets, read-only', async () => {
    const mine = (await post(bob, { code: 'b' })).json.id;
    const users = await api.request('GET', '/api/v1/users/');
    const bobs = users.json.results.find((user: { username: string }) => user.username === 'bob');
    expect(bobs.snippets).toContain(mine);
    expect(bobs.snippets).toEqual([...bobs.snippets].sort((a: number, b: number) => a - b));
    expect(Object.keys(bobs)).toEqual(['id', 'username', 'snippets']);
    expect((await api.request('PATCH', `/api/v1/users/${bob.id}/`, { token: bob.token, body: { username: 'robert' } })).status).toBe(403);
  });

  it('pages the snippets ten at a time', async () => {
    await Promise.all(Array.from({ length: 12 }, (_, index) => post(alice, { code: `line ${index}` })));
    const first = await api.request('GET', '/api/v1/snippets/');
    expect(first.json.results).toHaveLength(10);
    expect(first.json.next).toMatch(/page=2/);
  });
});
