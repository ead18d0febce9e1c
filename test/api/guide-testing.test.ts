/**
 * docs/guides/testing.md's sample: an app tested in-process on the public API alone, as a user's own
 * suite would (the region below is the guide's code, byte for byte).
 */
import { expect, it } from 'vitest';
// #region app-test
import { User, buildApp, loadConfig, migrateApp, openDatabase, recordStore, serializer } from 'restfold';
import todos from '../../examples/todos/app.js';

it('keeps a todo its owner’s', async () => {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', SECRET_KEY: 'a-test-secret-of-32-characters-or-more', LOG_LEVEL: 'silent' });
  const database = openDatabase(config.databaseUrl);
  await migrateApp(database, todos); // the framework's tables, then the app's migrations
  const app = await buildApp(todos, { database, config });
  try {
    // A user, written as the app's own code writes records (the password is hashed as an API write's).
    const users = recordStore(database, serializer(User, { fields: ['username', 'email', 'password'] }), { name: 'user' });
    await users.create({ username: 'alice', email: 'alice@example.com', password: 'a-long-password' });
    const login = await app.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username: 'alice', password: 'a-long-password' } });
    const headers = { authorization: `Bearer ${login.json().token}` };

    const created = await app.inject({ method: 'POST', url: '/api/v1/todos/', headers, payload: { task: 'buy milk' } });
    expect(created.statusCode).toBe(201);
    expect((await app.inject({ method: 'GET', url: '/api/v1/todos/', headers })).json().count).toBe(1);
    expect((await app.inject({ method: 'GET', url: '/api/v1/todos/' })).statusCode).toBe(401); // anonymous
  } finally {
    await app.close();
    await database.close();
  }
});
// #endregion app-test
