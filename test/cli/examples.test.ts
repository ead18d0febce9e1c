/**
 * examples/library as its guide (docs/tutorial.md, "The library example") runs it:
 * `restfold serve --app examples/library/app.mjs`, a user's app importing the
 * built package by its name, its migrations found beside it, checked over HTTP.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCaller, runCli, startServer, type SpawnedServer } from '../support/spawned-server.js';

const APP = ['--app', 'examples/library/app.mjs'];
let server: SpawnedServer;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  server = await startServer({ appArgs: APP });
  server.cli(['createuser', '--username', 'librarian', '--password', 'librarian-pass', '--permission', 'library.edit']);
  for (const username of ['reader', 'browser']) server.cli(['createuser', '--username', username, '--password', `${username}-pass`]);
  for (const username of ['librarian', 'reader', 'browser']) tokens[username] = server.cli(['token', 'create', '--username', username]).trim();
}, 120_000);
afterAll(() => server?.stop());

const call = apiCaller(() => server, tokens);

describe('the library example', () => {
  it('creates a book through its foreign key and shows the author nested', async () => {
    const author = await call('POST', 'authors/', 'librarian', { name: 'Ursula K. Le Guin' });
    expect(author).toMatchObject({ status: 201, json: { name: 'Ursula K. Le Guin' } });
    const book = await call('POST', 'books/', 'librarian', { title: 'The Dispossessed', author_id: author.json.id });
    expect(book.status).toBe(201);
    expect(book.json).toMatchObject({ title: 'The Dispossessed', author_id: author.json.id, author: { id: author.json.id, name: 'Ursula K. Le Guin' } });
    expect(Date.parse(book.json.added_at)).not.toBeNaN();

    const listed = await call('GET', `books/?author_id=${author.json.id}&search=dispossessed`, 'reader');
    expect(listed.json).toMatchObject({ count: 1, results: [{ id: book.json.id, author: { name: 'Ursula K. Le Guin' } }] });
    const narrowed = await call('GET', `books/${book.json.id}/?fields=title,author.name`, 'reader');
    expect(narrowed.json).toEqual({ title: 'The Dispossessed', author: { name: 'Ursula K. Le Guin' } });
  });

  it('refuses a book whose author does not exist, naming the field', async () => {
    const reply = await call('POST', 'books/', 'librarian', { title: 'Nobody wrote this', author_id: 999_999 });
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ code: 'validation_failed', details: { author_id: [expect.any(String)] } });
  });

  it('lets any signed-in user read but only holders of library.edit write', async () => {
    const author = await call('POST', 'authors/', 'librarian', { name: 'Italo Calvino' });
    const book = await call('POST', 'books/', 'librarian', { title: 'Invisible Cities', author_id: author.json.id });

    expect(await call('POST', 'books/', 'reader', { title: 'Forged', author_id: author.json.id })).toMatchObject({ status: 403, json: { code: 'permission_denied' } });
    expect(await call('PATCH', `books/${book.json.id}/`, 'reader', { title: 'Renamed' })).toMatchObject({ status: 403 });
    expect(await call('DELETE', `authors/${author.json.id}/`, 'reader')).toMatchObject({ status: 403 });
    expect(await call('GET', `books/${book.json.id}/`, undefined)).toMatchObject({ status: 401, json: { code: 'not_authenticated' } });
    expect(await call('GET', `books/${book.json.id}/`, 'reader')).toMatchObject({ status: 200, json: { title: 'Invisible Cities' } });

    expect(await call('PATCH', `books/${book.json.id}/`, 'librarian', { title: 'Le città invisibili' })).toMatchObject({ status: 200, json: { title: 'Le città invisibili' } });
    expect((await call('DELETE', `books/${book.json.id}/`, 'librarian')).status).toBe(204);
    expect((await call('GET', `books/${book.json.id}/`, 'reader')).status).toBe(404);
  });

  it('throttles books in their own window, leaving the rest of the API alone', async () => {
    const first = await call('GET', 'books/', 'browser');
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('30');
    for (let left = Number(first.headers.get('ratelimit-remaining')); left > 0; left--) {
      expect((await call('GET', 'books/', 'browser')).status).toBe(200);
    }
    const throttled = await call('GET', 'books/', 'browser');
    expect(throttled).toMatchObject({ status: 429, json: { code: 'throttled' } });
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);

    const authors = await call('GET', 'authors/', 'browser');
    expect(authors.status).toBe(200);
    expect(authors.headers.get('ratelimit-limit')).toBe('1000');
    expect((await call('GET', 'books/', 'reader')).status).toBe(200);
  });
});

describe('migrate --app', () => {
  it("applies the example's migrations once", () => {
    const folder = mkdtempSync(join(tmpdir(), 'restfold-migrate-'));
    const env = { PATH: process.env.PATH, DATABASE_URL: `sqlite:${join(folder, 'db.sqlite3')}`, LOG_LEVEL: 'silent' };
    try {
      const first = runCli(['migrate', ...APP], env);
      expect(first.status, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^Applied the framework's migrations: 0001_initial\b.*\nApplied the app's migrations: 0001_initial, 0002_list_indexes\n$/);
      const again = runCli(['migrate', ...APP], env);
      expect(again.stdout.trim()).toBe('Migrations are up to date.');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
