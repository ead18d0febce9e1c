/** `restfold schema`: the OpenAPI document on standard output, without a database or a listening server. */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildApp, loadConfig, openDatabase } from '../../src/framework/index.js';
import service from '../../src/service/app.js';
import { runCli } from '../support/spawned-server.js';

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'restfold-schema-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

/** Nothing listens at this address: the command must not need the database. */
const UNREACHABLE_DATABASE = 'postgres://nobody@127.0.0.1:1/nothing';

function schema(args: string[] = []): { paths: Record<string, Record<string, { requestBody?: unknown }>> } & Record<string, unknown> {
  const run = runCli(['schema', ...args], { PATH: process.env.PATH, DATABASE_URL: UNREACHABLE_DATABASE, LOG_LEVEL: 'info' });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

it('prints the document the service serves at /api/v1/schema/, and nothing else', async () => {
  const printed = schema();
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', SECRET_KEY: 'schema-test-secret-key-0123456789abcdef', LOG_LEVEL: 'silent' });
  const database = openDatabase(config.databaseUrl);
  const app = await buildApp(service, { database, config });
  try {
    const served = await app.inject({ method: 'GET', url: '/api/v1/schema/' });
    expect(printed).toEqual(served.json());
  } finally {
    await app.close();
    await database.close();
  }
  expect(printed.openapi).toBe('3.1.0');
  expect(Object.keys(printed.paths)).toEqual(expect.arrayContaining(['/api/v1/users/', '/api/v1/articles/{id}/', '/api/posts']));
});

it("prints an --app's document, and writes nothing where it runs", () => {
  const run = runCli(['schema', '--app', join(import.meta.dirname, '..', '..', 'examples', 'library', 'app.mjs')], {
    PATH: process.env.PATH,
    DATABASE_URL: `sqlite:${join(folder, 'db.sqlite3')}`,
  });
  expect(run.status, run.stderr).toBe(0);
  const printed = JSON.parse(run.stdout);
  expect(Object.keys(printed.paths)).toEqual(expect.arrayContaining(['/api/v1/authors/', '/api/v1/books/', '/api/v1/books/{id}/']));
  expect(Object.keys(printed.paths)).not.toContain('/api/v1/users/');
  expect(printed.paths['/api/v1/books/'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/BookCreate');
  expect(printed.components.schemas.BookCreate.required).toEqual(['title', 'author_id']);
  expect(readdirSync(folder)).toEqual([]);
});

it('names a missing app file as a usage error', () => {
  const run = runCli(['schema', '--app', 'examples/no-such-app.mjs'], { PATH: process.env.PATH });
  expect(run.status).toBe(2);
  expect(run.stderr).toContain('No app file at');
  expect(run.stdout).toBe('');
});
