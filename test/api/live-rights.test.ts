/**
 * An open stream loses its rights when they change (SECURITY.md): with WORKERS=2 and nothing but
 * the database between the workers (on SQLite, nothing: each worker checks its streams' credentials
 * again every LIVE_RECHECK_MS; on PostgreSQL, LISTEN/NOTIFY as well), a revoked token's streams and
 * a deactivated user's end on both workers within 5 s. test/redis and test/postgres run the same
 * with only the message between the workers.
 */
import { afterAll, describe } from 'vitest';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';
import { rightsAcrossWorkers } from '../support/live-processes.js';

let database: TestDatabase | undefined;
afterAll(() => database?.drop());

describe('rights across the workers of one server, with the default settings', () => {
  rightsAcrossWorkers({}, async () => {
    if (testDialect !== 'postgres') return undefined;
    database = await createTestDatabase();
    return database.url;
  });
});
