/**
 * examples/realworld's migration 0003 on a database its first two made, holding articles whose tags
 * were a JSON column (`tag_list`), on SQLite or PostgreSQL: each article keeps its tags, now links in
 * `articles_tags` (a name the tags table lacked is added), served as Conduit served them (`tagList`,
 * `?tag=`, GET /tags), and the database matches the app's declarations.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import conduit from '../../examples/realworld/app.js';
import { buildApp, declaredSchemaDifferences, loadConfig, migrateApp } from '../../src/framework/index.js';
import { hashPassword } from '../../src/framework/base/passwords.js';
import { openStoreDatabase, type StoreDatabase } from '../../src/store/connection/database.js';
import { PASSWORD } from '../support/api.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let testDatabase: TestDatabase;
let database: StoreDatabase;
beforeEach(async () => {
  testDatabase = await createTestDatabase();
  database = openStoreDatabase(testDatabase.url);
});
afterEach(() => database.close().then(() => testDatabase.drop()));

it('keeps every article’s tags when they move from the JSON column to articles_tags', async () => {
  const migrations = conduit.migrations!;
  const before = { '0001_initial': migrations['0001_initial']!, '0002_conduit_user': migrations['0002_conduit_user']! };
  await migrateApp(database, { ...conduit, migrations: before });

  const now = new Date().toISOString();
  const { id: author } = await database.db
    .insertInto('users')
    .values({ username: 'jake', email: 'jake@example.com', password: await hashPassword(PASSWORD), is_active: database.capabilities.types.booleanValue(true), date_joined: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  // The tags table as the app kept it: every name an article had, but for one (`lost`), as a database may hold.
  for (const name of ['dragons', 'training', 'untagged']) await database.db.insertInto('tags').values({ name }).execute();
  const article = (slug: string, tags: string[]) => ({ slug, title: slug, description: 'd', body: 'b', tag_list: JSON.stringify(tags), author_id: author, created_at: now, updated_at: now });
  await database.db.insertInto('articles').values([article('dragons', ['training', 'dragons', 'lost']), article('plain', []), article('training', ['training'])]).execute();

  expect(await migrateApp(database, conduit)).toStrictEqual(['0003_tags_by_name']);
  expect(await declaredSchemaDifferences(database, conduit)).toStrictEqual([]);

  const config = loadConfig({ DATABASE_URL: testDatabase.url, LOG_LEVEL: 'silent', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' });
  const app = await buildApp(conduit, { database, config });
  try {
    const get = async (url: string) => (await app.inject({ method: 'GET', url })).json();
    expect((await get('/api/articles/dragons')).article.tagList).toStrictEqual(['dragons', 'lost', 'training']);
    expect((await get('/api/articles/plain')).article.tagList).toStrictEqual([]);
    expect((await get('/api/articles?tag=training')).articles.map((listed: { slug: string }) => listed.slug)).toStrictEqual(['training', 'dragons']);
    // Tags in use only: `untagged` names no article.
    expect((await get('/api/tags')).tags.sort()).toStrictEqual(['dragons', 'lost', 'training']);
  } finally {
    await app.close();
  }
});
