/**
 * An admin page is one request, whatever in-process calls to the API it makes (docs/admin.md, One
 * write path): one line in the log, bearing the page's request id and user; one count in the
 * metrics; one request against the user's rate, which the page is throttled by (a 429 page).
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, isAuthenticated, model, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { loggedIn, makeStaff, type AdminClient } from '../support/admin-client.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Author = model('authors', { id: fields.id(), name: fields.string({ maxLength: 100 }) });
const Book = model('books', { id: fields.id(), title: fields.string({ maxLength: 100 }), author_id: fields.foreignKey('authors') });
const authors = collection('authors', { serializer: serializer(Author, { fields: ['id', 'name'], readOnly: ['id'] }), permissions: [isAuthenticated] });
const books = collection('books', { serializer: serializer(Book, { fields: ['id', 'title', 'author_id'], readOnly: ['id'] }), permissions: [isAuthenticated] });
// The authors are read one by one (their `id` has no `in` filter): a change list of two books' authors is three calls.
const app = withGeneratedMigrations(defineApp({ collections: [authors, books] }));

const RATE = 20;
let api: TestApi;
let boss: TestUser;
let editor: TestUser;
const lines: Record<string, unknown>[] = [];
let bookId: number;

beforeAll(async () => {
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  api = await startApi({ THROTTLE_LOGIN: 'off', THROTTLE_USER: `${RATE}/min`, METRICS: 'true', LOG_LEVEL: 'info' }, app, { logStream });
  boss = await api.user('boss', { superuser: true });
  editor = await api.user('editor', { permissions: ['books.view', 'books.change', 'authors.view'] });
  for (const user of [boss, editor]) await makeStaff(api, user.id);
  const ann = await api.request('POST', '/api/v1/authors/', { token: boss.token, body: { name: 'Ann' } });
  const bob = await api.request('POST', '/api/v1/authors/', { token: boss.token, body: { name: 'Bob' } });
  bookId = (await api.request('POST', '/api/v1/books/', { token: boss.token, body: { title: 'Dune', author_id: ann.json.id } })).json.id;
  await api.request('POST', '/api/v1/books/', { token: boss.token, body: { title: 'Emma', author_id: bob.json.id } });
});
afterAll(() => api.close());

/** The log's lines written while `page` is asked, and its answer. */
async function logged(page: () => ReturnType<AdminClient['get']>) {
  const from = lines.length;
  const reply = await page();
  return { reply, written: lines.slice(from) };
}

describe('an admin page is one request', () => {
  it('writes one request line, with its own request id and user, whatever calls it makes', async () => {
    const client = await loggedIn(api, 'boss');
    for (const { reply, written } of [
      await logged(() => client.get('/admin/books/')),
      await logged(() => client.get(`/admin/books/${bookId}/change/`)),
      await logged(() => client.post(`/admin/books/${bookId}/change/`, { title: 'Dune Messiah', author_id: '1', _save: 'Save' })),
    ]) {
      expect(reply.status).toBeLessThan(400);
      const requestLines = written.filter((line) => line.msg === 'request');
      expect(requestLines).toHaveLength(1);
      expect(requestLines[0]).toMatchObject({ path: expect.stringMatching(/^\/admin\/books\//), status: reply.status, user_id: boss.id, request_id: reply.headers['x-request-id'] });
      // Whatever else was written while the page was made is the page's.
      expect(written.every((line) => line.request_id === reply.headers['x-request-id'])).toBe(true);
    }
    expect((await api.request('GET', `/api/v1/books/${bookId}/`, { token: boss.token })).json.title).toBe('Dune Messiah');
  });

  it('counts once in the metrics, as the page', async () => {
    const client = await loggedIn(api, 'boss');
    /** The requests the metrics have counted whose route starts with `route`. */
    const counted = async (route: string): Promise<number> => {
      const metrics = (await api.request('GET', '/metrics')).body;
      return [...metrics.matchAll(/^restfold_http_requests_total\{method="[A-Z]+",route="([^"]+)",status="\d+"\} (\d+)$/gm)]
        .filter((series) => series[1]!.startsWith(route))
        .reduce((sum, series) => sum + Number(series[2]), 0);
    };
    const [pages, calls] = [await counted('/admin/books/'), await counted('/api/')];
    await client.get('/admin/books/');
    await client.get(`/admin/books/${bookId}/change/`);
    expect(await counted('/admin/books/')).toBe(pages + 2);
    // The API's reads the pages made are not requests of their own.
    expect(await counted('/api/')).toBe(calls);
  });

  it("counts each page once against the user's rate, and throttles the page", async () => {
    const client = await loggedIn(api, 'editor');
    const remaining = async (url: string): Promise<number> => Number((await client.get(url)).headers['ratelimit-remaining']);
    const list = await remaining('/admin/books/');
    expect(list).toBe(RATE - 1);
    // A change form (its record, its author and its lookups read through the API) is one request more.
    expect(await remaining(`/admin/books/${bookId}/change/`)).toBe(RATE - 2);
    // In the same window as the API's own requests.
    const read = await api.request('GET', '/api/v1/books/', { token: editor.token });
    expect(read.headers['ratelimit-remaining']).toBe(String(RATE - 3));
    const statuses: number[] = [];
    for (let page = 4; page <= RATE; page++) statuses.push((await client.get('/admin/books/')).status);
    expect(statuses.every((status) => status === 200)).toBe(true);
    const over = await client.get('/admin/books/');
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBeDefined();
    expect(over.body).toContain('Too many requests');
    expect(over.body).toContain('Request was throttled.');
  });
});
