/**
 * A database made by Restfold 0.1's hand-written migrations, with data, upgrades with `migrate` to
 * the generated history (whose first migrations replace the hand-written ones) without losing a
 * row, and then matches the declarations and serves its records.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp, declaredSchemaDifferences, loadConfig, migrateApp } from '../../src/framework/index.js';
import { createToken } from '../../src/framework/stages/authentication/token.js';
import { effectivePermissions } from '../../src/framework/app/admin.js';
import { hashPassword } from '../../src/framework/base/passwords.js';
import service from '../../src/service/app.js';
import { releaseAccountMigrations } from '../../src/store/accounts/release-migrations.js';
import { openStoreDatabase, type StoreDatabase } from '../../src/store/connection/database.js';
import { migrate } from '../../src/store/schema/migrations.js';
import { releaseServiceMigrations } from '../fixtures/release-migrations/service.js';
import { PASSWORD } from '../support/api.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const TABLES = ['users', 'user_permissions', 'auth_tokens', 'articles', 'posts'];
/** After the upgrade, a user's own permissions are in the framework's table whose rows have ids. */
const UPGRADED_TABLES = TABLES.map((table) => (table === 'user_permissions' ? 'auth_user_permissions' : table));

/** Every row of every table, in id order, as plain JSON (timestamps as the driver gives them, made text). */
async function everyRow(database: StoreDatabase, tables = TABLES): Promise<Record<string, unknown[]>> {
  const rows: Record<string, unknown[]> = {};
  for (const table of tables) {
    const found = await database.db.selectFrom(table).selectAll().execute();
    rows[table] = JSON.parse(JSON.stringify(found.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))));
  }
  return rows;
}

async function migrated(database: StoreDatabase, name: string): Promise<string[]> {
  const rows = await database.db.selectFrom(`${name}_migrations`).select('name').orderBy('name').execute();
  return rows.map((row) => row.name as string);
}

describe('upgrading a database made by the hand-written migrations of Restfold 0.1', () => {
  let testDatabase: TestDatabase;
  let database: StoreDatabase;
  beforeEach(async () => {
    testDatabase = await createTestDatabase();
    database = openStoreDatabase(testDatabase.url);
  });
  afterEach(() => database.close().then(() => testDatabase.drop()));

  it('keeps every row, records the generated history, matches the declarations and serves the records', async () => {
    const { types } = database.capabilities;
    await migrate(database, 'restfold', releaseAccountMigrations);
    await migrate(database, 'app', releaseServiceMigrations);

    const now = new Date().toISOString();
    const password = await hashPassword(PASSWORD);
    const [alice, bob] = await Promise.all(
      ['alice', 'bob'].map(async (username) => {
        const row = await database.db
          .insertInto('users')
          .values({ username, email: `${username}@example.com`, password, is_active: types.booleanValue(true), date_joined: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        return Number(row.id);
      }),
    );
    // As 0.1 stored a grant (the framework's grantPermissions writes the later table).
    await database.db.insertInto('user_permissions').values({ user_id: bob!, name: 'articles.change' }).execute();
    const token = await createToken(database, alice!);
    await database.db.insertInto('articles').values({ title: 'Before the upgrade', body: 'kept', author_id: alice, created_at: now }).execute();
    await database.db
      .insertInto('posts')
      .values({ title: 'Old post', content: 'still here', published: types.booleanValue(true), created_at: now, updated_at: now })
      .execute();
    const before = await everyRow(database);

    const applied = await migrateApp(database, service);

    // The framework's own later migrations (groups and staff; the log and permissions with ids) run too, before the app's.
    expect(applied).toEqual(['0002_groups_and_staff', '0003_admin_log_and_user_permission_ids', '0002_posts_published_default', '0003_tags', '0004_articles_without_tags']);
    expect(await migrated(database, 'restfold')).toEqual(['0001_initial', '0002_groups_and_staff', '0003_admin_log_and_user_permission_ids']);
    expect(await migrated(database, 'app')).toEqual(['0001_initial', '0002_posts_published_default', '0003_tags', '0004_articles_without_tags']);
    // Every row kept; the users gain the framework's later staff flag, false (the rebuilds kept it, whatever their order).
    const { auth_user_permissions: grants, ...after } = await everyRow(database, UPGRADED_TABLES);
    // Bob's grant moved, gaining an id.
    expect(grants!.map((grant) => ({ ...(grant as object), id: undefined }))).toEqual(before.user_permissions);
    expect(grants!.map((grant) => typeof (grant as { id: unknown }).id)).toEqual(['number']);
    expect(await effectivePermissions(database, bob!)).toEqual(['articles.change']);
    expect(after.users!.map((user) => (user as { is_staff: unknown }).is_staff)).toEqual(before.users!.map(() => types.booleanValue(false)));
    expect({ ...after, user_permissions: before.user_permissions, users: after.users!.map((user) => ({ ...(user as object), is_staff: undefined })) }).toEqual({
      ...before,
      users: before.users!.map((user) => ({ ...(user as object), is_staff: undefined })),
    });
    expect(await declaredSchemaDifferences(database, service)).toEqual([]);
    expect(await migrateApp(database, service)).toEqual([]);

    const config = loadConfig({ DATABASE_URL: testDatabase.url, LOG_LEVEL: 'silent', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' });
    const app = await buildApp(service, { database, config });
    try {
      const authorization = `Bearer ${token}`;
      const articles = await app.inject({ method: 'GET', url: '/api/v1/articles/?search=before', headers: { authorization } });
      expect(articles.statusCode).toBe(200);
      expect(articles.json().results.map((article: { title: string }) => article.title)).toEqual(['Before the upgrade']);
      const posts = await app.inject({ method: 'GET', url: '/api/posts' });
      expect(posts.json().map((post: { title: string }) => post.title)).toEqual(['Old post']);
      // The default 0002 gave posts.published, in the database itself.
      await database.db.insertInto('posts').values({ title: 'New', content: 'x', created_at: now, updated_at: now }).execute();
      const created = await database.db.selectFrom('posts').select('published').where('title', '=', 'New').executeTakeFirstOrThrow();
      expect(Boolean(created.published)).toBe(false);
    } finally {
      await app.close();
    }
  });

  it("finishes the framework's replaced migrations where only some ran; refuses, naming them, where the steps are not kept", async () => {
    const { '0001_users_permissions_tokens': users, '0002_sessions': sessions } = releaseAccountMigrations;
    await migrate(database, 'restfold', { '0001_users_permissions_tokens': users!, '0002_sessions': sessions! });
    const { '0001_articles': articles } = releaseServiceMigrations;
    await migrate(database, 'app', { '0001_articles': articles! });

    await expect(migrateApp(database, service)).rejects.toThrow(
      'app_migrations: 0001_initial replaces 0001_articles, 0002_posts, 0003_search_indexes, 0004_list_indexes, of which only 0001_articles ran',
    );
    // The framework's history was finished with its own 0.1 steps before the app's refused.
    expect(await migrated(database, 'restfold')).toEqual(['0001_initial', '0002_groups_and_staff', '0003_admin_log_and_user_permission_ids']);
    expect((await database.capabilities.liveColumns(database.db)).filter((column) => column.table === 'users').map((column) => column.column)).toContain(
      'credentials_version',
    );
  });
});
