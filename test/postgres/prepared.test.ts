/**
 * Which statements the store prepares on a PostgreSQL connection: the fixed
 * lookups and lists are, so they are parsed once; searches are not, so each is planned
 * with its own pattern (a generic plan for `ILIKE $1` can walk the whole
 * primary key instead of using the trigram indexes). Read from
 * pg_prepared_statements on the app's only connection.
 */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, loadConfig, migrateApp, openDatabase, type Database } from '../../src/framework/index.js';
import { createToken } from '../../src/framework/authentication/token.js';
import service from '../../src/service/app.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';

describe.runIf(testDialect === 'postgres')('prepared statements on PostgreSQL', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let app: FastifyInstance;
  let token: string;

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    // One connection, so every request's statements and the check below share it.
    database = openDatabase(testDatabase.url, { maxConnections: 1, maxIdleConnections: 1 });
    await migrateApp(database, service);
    await sql`
      INSERT INTO users (username, email, password, is_active, is_superuser, date_joined)
      SELECT 'user' || i, 'user' || i || '@example.com', 'x', true, i = 1, now()
      FROM generate_series(1, 100) AS i`.execute(database.db);
    token = await createToken(database, 1);
    const config = loadConfig({ DATABASE_URL: testDatabase.url, LOG_LEVEL: 'silent', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' });
    app = await buildApp(service, { database, config });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
    await testDatabase?.drop();
  });

  const get = async (url: string) => {
    const reply = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    expect(reply.statusCode).toBe(200);
  };

  it('prepares the detail and token lookups, and plans every search with its pattern', async () => {
    for (let round = 0; round < 8; round++) {
      await get('/api/v1/users/2/');
      await get('/api/v1/users/?search=user1');
      await get('/api/v1/users/?username__icontains=user2');
      await get('/api/v1/users/?is_active=true');
    }
    const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(database.db);
    const statements = rows.map(({ statement }) => statement);
    expect(statements.some((text) => /from "users" where "users"\."id" = \$1/i.test(text))).toBe(true);
    expect(statements.some((text) => /"auth_tokens"\."key_hash" = \$1/.test(text))).toBe(true);
    // A list without a pattern keeps its prepared count.
    expect(statements.some((text) => /count\(/i.test(text) && /"is_active" = \$1/.test(text))).toBe(true);
    expect(statements.filter((text) => /\bi?like\b/i.test(text))).toEqual([]);
  });
});
