/**
 * Stored files under issue 47's race through PgBouncer in transaction mode, where each transaction
 * runs on whichever server connection is free: two server processes on one database
 * (test/support/file-races.ts).
 */
import { describe } from 'vitest';
import { describeFileRaces } from '../support/file-races.js';
import { pooledDatabase, servedThrough, transactionPooler } from './pooled.js';

describe.runIf(transactionPooler)('files through PgBouncer in transaction mode', () => {
  describeFileRaces('two processes, DB_PREPARED_STATEMENTS=false', async () => {
    const database = await pooledDatabase(transactionPooler!);
    return { env: servedThrough(database.pooled, { DB_PREPARED_STATEMENTS: 'false' }), drop: database.drop };
  });
});
