/**
 * The SQLite database holds password hashes, token hashes and sessions: its
 * file, WAL and shared-memory file are readable by their owner only.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { buildApp, loadConfig, migrateApp, openDatabase } from '../../src/framework/index.js';
import service from '../../src/service/app.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

it('creates the SQLite database, its -wal and its -shm owner-only (0600)', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'restfold-modes-'));
  folders.push(folder);
  const file = join(folder, 'data', 'db.sqlite3');
  const config = loadConfig({ DATABASE_URL: `sqlite:${file}`, SECRET_KEY: 'file-modes-test-secret-key-0123456789', LOG_LEVEL: 'silent', THROTTLE_ANON: 'off' });
  const database = openDatabase(config.databaseUrl);
  await migrateApp(database, service);
  const app = await buildApp(service, { database, config });
  try {
    const created = await app.inject({ method: 'POST', url: '/api/posts', payload: { title: 'kept private', content: 'on disk' } });
    expect(created.statusCode).toBe(201);
    expect((await app.inject({ method: 'GET', url: `/api/posts/${created.json().id}` })).json().title).toBe('kept private');
    for (const path of [file, `${file}-wal`, `${file}-shm`]) expect((statSync(path).mode & 0o777).toString(8), path).toBe('600');
    expect((statSync(join(folder, 'data')).mode & 0o777).toString(8)).toBe('700');
  } finally {
    await app.close();
    await database.close();
  }
});
