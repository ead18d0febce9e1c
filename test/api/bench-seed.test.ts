/**
 * `npm run bench:seed` (bench/seed.mjs, over dist/) on a fresh database, then
 * seen through the API: N users plus the `bench` superuser, who can log in with
 * the documented password, N articles, half the posts published, half the
 * users active, and the token the seed prints works.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, loadConfig, openDatabase, type Database } from '../../src/framework/index.js';
import service from '../../src/service/app.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';

const ROWS = 60;
const POSTS = 10;

describe('bench:seed', () => {
  let folder: string | undefined;
  let testDatabase: TestDatabase;
  let database: Database;
  let app: FastifyInstance;
  let seeded: { users: number; articles: number; token: string; searchTerm: string; searchMatches: number };

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    folder = testDialect === 'sqlite' ? mkdtempSync(join(tmpdir(), 'restfold-seed-')) : undefined;
    const url = folder ? `sqlite:${join(folder, 'seed.sqlite3')}` : testDatabase.url;
    const run = await promisify(execFile)(process.execPath, ['bench/seed.mjs', '--rows', String(ROWS), '--posts', String(POSTS), '--json'], {
      env: { ...process.env, DATABASE_URL: url },
    });
    seeded = JSON.parse(run.stdout);
    database = openDatabase(url);
    const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' });
    app = await buildApp(service, { database, config });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await database?.close();
    await testDatabase?.drop();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  const get = async (url: string, token = seeded.token) => {
    const reply = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    expect(reply.statusCode).toBe(200);
    return reply.json();
  };

  it('fills users, articles and posts, and the printed token works', async () => {
    expect(seeded).toMatchObject({ users: ROWS, articles: ROWS });
    expect((await get('/api/v1/users/')).count).toBe(ROWS + 1);
    expect((await get('/api/v1/articles/')).count).toBe(ROWS);
    expect((await get(`/api/v1/users/?search=${seeded.searchTerm}`)).count).toBe(seeded.searchMatches);
    const posts = (await app.inject({ method: 'GET', url: '/api/posts' })).json();
    expect(posts).toHaveLength(POSTS / 2);
  });

  it('makes half the seeded users active (and bench)', async () => {
    expect((await get('/api/v1/users/?is_active=true')).count).toBe(ROWS / 2 + 1);
  });

  it('creates the superuser bench, who logs in with bench-pass-123', async () => {
    const login = await app.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username: 'bench', password: 'bench-pass-123' } });
    expect(login.statusCode).toBe(200);
    const [bench] = (await get('/api/v1/users/?username=bench', login.json().token)).results;
    expect(bench).toMatchObject({ username: 'bench', is_active: true, password: null });
  });
});
