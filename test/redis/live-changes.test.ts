/**
 * Live changes between two processes over Redis pub/sub (REDIS_URL set): on PostgreSQL, or on a
 * SQLite file two processes share, where nothing else would carry them.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { createTestDatabase, testDialect } from '../support/database.js';
import { liveAcrossProcesses, rightsAcrossWorkers } from '../support/live-processes.js';

const redisUrl = process.env.TEST_REDIS_URL;
if (!redisUrl) throw new Error('test/redis needs TEST_REDIS_URL (e.g. redis://127.0.0.1:6379).');

let drop = async (): Promise<void> => {};
afterAll(() => drop());

async function sharedDatabase(): Promise<string> {
  if (testDialect === 'postgres') {
    const database = await createTestDatabase();
    drop = database.drop;
    return database.url;
  }
  const folder = mkdtempSync(join(tmpdir(), 'restfold-live-'));
  drop = async () => rmSync(folder, { recursive: true, force: true });
  return `sqlite:${join(folder, 'live.sqlite3')}`;
}

describe('live changes over Redis', () => {
  // Both processes on one prefix, as one service's are.
  liveAcrossProcesses({ REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `test:${randomBytes(6).toString('hex')}:` }, sharedDatabase);
});

describe('rights across the workers of one server, over Redis', () => {
  // Rechecked once a minute only: within 5 s, only the message between the workers ends the streams.
  const env = { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `test:${randomBytes(6).toString('hex')}:`, LIVE_RECHECK_MS: '60000' };
  rightsAcrossWorkers(env, async () => {
    if (testDialect !== 'postgres') return undefined;
    const database = await createTestDatabase();
    const before = drop;
    drop = async () => {
      await before();
      await database.drop();
    };
    return database.url;
  });
});
