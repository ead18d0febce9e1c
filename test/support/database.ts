/**
 * The database a test suite runs on: SQLite in memory by default, or a fresh
 * PostgreSQL schema under TEST_DATABASE_URL when RESTFOLD_TEST_DB=postgres.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const testDialect = process.env.RESTFOLD_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

async function onPostgres<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (testDialect === 'sqlite') return { url: 'sqlite::memory:', drop: async () => {} };
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('RESTFOLD_TEST_DB=postgres needs TEST_DATABASE_URL.');
  const schema = `rf_test_${randomBytes(6).toString('hex')}`;
  await onPostgres(base, (client) => client.query(`CREATE SCHEMA ${schema}`));
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: () => onPostgres(base, (client) => client.query(`DROP SCHEMA ${schema} CASCADE`)).then(() => undefined),
  };
}
