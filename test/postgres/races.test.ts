/**
 * Constraint failures that only concurrency can cause come back as 400s on
 * PostgreSQL: here, the author of a new article is deleted after the request
 * checked that it exists but before its INSERT ran.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, onPostgres, testDialect, withApplicationName, type TestDatabase } from '../support/database.js';
import { backends, eventually, send, spawnServer, userWithToken, type SpawnedServer } from './spawned.js';

describe.runIf(testDialect === 'postgres')('races on PostgreSQL', () => {
  const applicationName = `rf_races_${randomBytes(4).toString('hex')}`;
  let database: TestDatabase;
  let server: SpawnedServer;

  beforeAll(async () => {
    database = await createTestDatabase();
    server = await spawnServer({ DATABASE_URL: withApplicationName(database.url, applicationName) });
  });
  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('answers 400 when the named author is deleted between validation and insert', async () => {
    // An editor: only a holder of articles.change may name another author.
    const writer = await userWithToken(database.url, 'writer', ['articles.change']);
    const victim = await userWithToken(database.url, 'victim');
    const reply = await onPostgres(async (blocker) => {
      // Let the request validate author_id, then hold its INSERT until the author is gone.
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE articles IN SHARE ROW EXCLUSIVE MODE');
      const request = send(server.port, 'POST', '/api/v1/articles/', {
        token: writer.token,
        body: { title: 'Orphan', author_id: victim.id },
      });
      await eventually(
        async () => ((await backends(applicationName)).some((row) => row.waitEventType === 'Lock') ? true : undefined),
        'the INSERT to wait on the lock',
      );
      await blocker.query('DELETE FROM users WHERE id = $1', [victim.id]);
      await blocker.query('COMMIT');
      return request;
    }, database.url);

    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ code: 'validation_failed', details: { author_id: [expect.any(String)] } });
  });
});
