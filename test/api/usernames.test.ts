/** Usernames are unique regardless of case, enforced by the database; login matches them exactly. */
import { afterEach, describe, expect, it } from 'vitest';
import { releaseAccountMigrations as accountMigrations } from '../../src/store/accounts/release-migrations.js';
import { migrateApp } from '../../src/framework/index.js';
import { openStoreDatabase, type StoreDatabase } from '../../src/store/connection/database.js';
import { migrate } from '../../src/store/schema/migrations.js';
import service from '../../src/service/app.js';
import { PASSWORD, startApi, type TestApi } from '../support/api.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const clash = { error: 'Invalid input.', code: 'validation_failed', details: { username: ['A record with this username already exists.'] } };

describe('usernames differing only in case', () => {
  it('refuses a create of Alice when alice exists', async () => {
    api = await startApi();
    const admin = await api.user('admin', { superuser: true });
    expect((await api.request('POST', '/api/v1/users/', { token: admin.token, body: { username: 'alice', password: 'pw-1' } })).status).toBe(201);
    for (const username of ['Alice', 'ALICE']) {
      const reply = await api.request('POST', '/api/v1/users/', { token: admin.token, body: { username, password: 'pw-2' } });
      expect(reply.status).toBe(400);
      expect(reply.json).toEqual(clash);
    }
  });

  it('refuses renaming another user to Alice by PUT or PATCH, and allows changing one\'s own case', async () => {
    api = await startApi();
    const admin = await api.user('admin', { superuser: true });
    await api.user('alice');
    const bob = await api.user('bob');
    const put = await api.request('PUT', `/api/v1/users/${bob.id}/`, { token: admin.token, body: { username: 'Alice' } });
    expect(put.status).toBe(400);
    expect(put.json).toEqual(clash);
    const patch = await api.request('PATCH', `/api/v1/users/${bob.id}/`, { token: admin.token, body: { username: 'aLiCe' } });
    expect(patch.status).toBe(400);
    expect(patch.json).toEqual(clash);
    const own = await api.request('PATCH', `/api/v1/users/${bob.id}/`, { token: admin.token, body: { username: 'Bob' } });
    expect(own.status).toBe(200);
    expect(own.json.username).toBe('Bob');
  });

  it('gives exactly one 201 when creates of one name in different cases race', async () => {
    api = await startApi();
    const admin = await api.user('admin', { superuser: true });
    const names = ['carol', 'Carol', 'CAROL', 'cArol', 'caRol', 'carOl', 'caroL', 'CArol'];
    const replies = await Promise.all(
      names.map((username) => api!.request('POST', '/api/v1/users/', { token: admin.token, body: { username, password: 'pw' } })),
    );
    expect(replies.map((reply) => reply.status).sort()).toEqual([201, ...Array(names.length - 1).fill(400)]);
    for (const reply of replies.filter(({ status }) => status === 400)) expect(reply.json).toEqual(clash);
  });

  it('logs in by the username exactly as stored', async () => {
    api = await startApi();
    await api.user('alice');
    expect((await api.request('POST', '/api/v1/auth/token/', { body: { username: 'alice', password: PASSWORD } })).status).toBe(200);
    const other = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'Alice', password: PASSWORD } });
    expect(other.status).toBe(400);
    expect(other.json.code).toBe('validation_failed');
  });
});

describe('the migration that makes usernames unique regardless of case', () => {
  let testDatabase: TestDatabase | undefined;
  let database: StoreDatabase | undefined;
  afterEach(async () => {
    await database?.close();
    await testDatabase?.drop();
    database = testDatabase = undefined;
  });

  it('refuses a database holding usernames that differ only in case, naming them, and runs once they are renamed', async () => {
    testDatabase = await createTestDatabase();
    database = openStoreDatabase(testDatabase.url);
    const before = Object.fromEntries(Object.entries(accountMigrations).filter(([name]) => name < '0004'));
    await migrate(database, 'restfold', before);
    for (const username of ['alice', 'bob', 'Alice', 'BOB', 'carol', 'bOb']) {
      await database.db
        .insertInto('users')
        .values({ username, email: '', password: 'x', is_active: 1, is_superuser: 0, date_joined: new Date().toISOString() })
        .execute();
    }
    await expect(migrateApp(database, service)).rejects.toThrow(
      'Usernames must be unique regardless of case, but these users differ only in case: "Alice" and "alice"; "BOB" and "bOb" and "bob". ' +
        'Rename (or delete) all but one of each, then migrate again.',
    );
    await database.db.updateTable('users').set({ username: 'alice2' }).where('username', '=', 'Alice').execute();
    await database.db.deleteFrom('users').where('username', 'in', ['BOB', 'bOb']).execute();
    expect(await migrateApp(database, service)).toContain('0004_usernames_unique_ignoring_case');
  });
});
