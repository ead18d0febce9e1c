/**
 * Requests to `definition` served on the database at `url` as a server started after a migration
 * would: on connections of its own (a connection's prepared statements are of the tables before
 * it), as a user of its own, made with `database` (a handle already open on that database).
 */
import { buildApp, loadConfig, type AppDefinition } from '../../src/framework/index.js';
import { createToken } from '../../src/framework/stages/authentication/token.js';
import { openStoreDatabase, type StoreDatabase } from '../../src/store/connection/database.js';

export async function servedRelease(url: string, database: StoreDatabase, definition: AppDefinition) {
  const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' });
  const serving = openStoreDatabase(url);
  const app = await buildApp(definition, { database: serving, config });
  const user = await database.db
    .insertInto('users')
    .values({ username: `u${Math.random().toString(36).slice(2, 10)}`, password: 'x', date_joined: new Date().toISOString() })
    .returning('id')
    .executeTakeFirstOrThrow();
  const authorization = `Bearer ${await createToken(database, Number(user.id))}`;
  return {
    request: async (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) => {
      const reply = await app.inject({ method, url, headers: { authorization }, ...(body !== undefined && { payload: body as object }) });
      return { status: reply.statusCode, json: reply.json() };
    },
    close: async () => {
      await app.close();
      await serving.close();
    },
  };
}
