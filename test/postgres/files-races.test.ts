/**
 * Stored files under issue 47's race on PostgreSQL: two server processes on one database
 * (test/support/file-races.ts; test/pgbouncer/files.test.ts runs it through PgBouncer).
 */
import { describe } from 'vitest';
import { createTestDatabase, testDialect } from '../support/database.js';
import { describeFileRaces } from '../support/file-races.js';

describe.runIf(testDialect === 'postgres')('files on PostgreSQL', () => {
  describeFileRaces('two processes', async () => {
    const database = await createTestDatabase();
    return { env: { DATABASE_URL: database.url }, drop: database.drop };
  });
});
