/**
 * The database a test suite runs on: SQLite in memory by default, or a fresh
 * PostgreSQL schema under TEST_DATABASE_URL when RESTFOLD_TEST_DB=postgres.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const testDialect = process.env.RESTFOLD_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDatabase {
  readonly url: string;
  /** PostgreSQL: the schema the suite's tables live in. */
  readonly schema?: string;
  drop(): Promise<void>;
}

function baseUrl(): string {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('RESTFOLD_TEST_DB=postgres needs TEST_DATABASE_URL.');
  return base;
}

/** Runs `work` on a connection of its own to TEST_DATABASE_URL (or `url`), outside any test schema. */
export async function onPostgres<T>(work: (client: pg.Client) => Promise<T>, url = baseUrl()): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** `url` with its connections tagged `name`, so a test can find them in pg_stat_activity. */
export function withApplicationName(url: string, name: string): string {
  const tagged = new URL(url);
  tagged.searchParams.set('application_name', name);
  return tagged.toString();
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (testDialect === 'sqlite') return { url: 'sqlite::memory:', drop: async () => {} };
  const schema = `rf_test_${randomBytes(6).toString('hex')}`;
  await onPostgres((client) => client.query(`CREATE SCHEMA ${schema}`));
  const url = new URL(baseUrl());
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    schema,
    drop: () => onPostgres((client) => client.query(`DROP SCHEMA ${schema} CASCADE`)).then(() => undefined),
  };
}
