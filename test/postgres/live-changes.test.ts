/** Live changes between two processes over PostgreSQL's LISTEN/NOTIFY (no Redis). */
import { afterAll, describe } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { liveAcrossProcesses } from '../support/live-processes.js';

let database: TestDatabase | undefined;
afterAll(() => database?.drop());

describe('live changes over LISTEN/NOTIFY', () => {
  liveAcrossProcesses({}, async () => (database = await createTestDatabase()).url);
});
