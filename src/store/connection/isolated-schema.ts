/**
 * A PostgreSQL schema of its own, for one test app's tables: created empty, named so that it tells
 * it was made for a test and when, and dropped whole. A URL naming it sets the connections'
 * search_path to it, so an app on that URL sees its own tables alone, as it would a new database,
 * without CREATE DATABASE's cost and privilege.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** What every such schema's name starts with; the rest is its birth (seconds, base 36), the process id and a random tail. */
const PREFIX = 'restfold_test_';
const NAME = /^restfold_test_([0-9a-z]+)_\d+_[0-9a-f]+$/;

export interface IsolatedSchema {
  /** The schema's name. */
  readonly name: string;
  /** The URL given, its connections confined to the schema. */
  readonly url: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

async function onServer<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'restfold-test' });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Why a confined URL does not confine: a pooler in front (PgBouncer) refuses the `options` startup parameter, or drops it. */
const NOT_CONFINED =
  'cannot confine its connections to a schema of their own: the URL reaches PostgreSQL through a pooler (PgBouncer) that refuses or drops the `options` startup parameter the schema is chosen with. Give the tests a URL that reaches PostgreSQL directly.';

/**
 * A new, empty schema in the database `url` names; refused (the schema dropped) when a connection on
 * its URL is not confined to it, as through a pooler: the app's tables would go wherever the
 * server's search_path says, where a test app's reset would empty another's, or a real one.
 */
export async function createIsolatedSchema(url: string): Promise<IsolatedSchema> {
  const name = `${PREFIX}${Math.floor(Date.now() / 1000).toString(36)}_${process.pid}_${randomBytes(4).toString('hex')}`;
  // The name is ours (letters, digits, _): never request text.
  await onServer(url, (client) => client.query(`CREATE SCHEMA ${name}`));
  const confined = new URL(url);
  confined.searchParams.set('options', `-c search_path=${name}`);
  const drop = () => onServer(url, (client) => client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`)).then(() => undefined);
  const schema = await onServer(confined.toString(), (client) => client.query<{ schema: string | null }>('SELECT current_schema() AS schema')).then(
    ({ rows }) => rows[0]?.schema,
    async (error: unknown) => {
      await drop();
      throw new Error(`A test database ${NOT_CONFINED} (${String((error as Error).message)})`, { cause: error });
    },
  );
  if (schema !== name) {
    await drop();
    throw new Error(`A test database ${NOT_CONFINED} (its connections use the schema ${String(schema)})`);
  }
  return { name, url: confined.toString(), drop };
}

/**
 * Drops the schemas createIsolatedSchema made in `url`'s database more than `olderThanMs` ago:
 * those a run that crashed (or was killed) left behind. Answers their names.
 */
export async function sweepIsolatedSchemas(url: string, olderThanMs: number): Promise<string[]> {
  return onServer(url, async (client) => {
    const { rows } = await client.query<{ name: string }>('SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, $1)', [PREFIX]);
    const stale = rows.map(({ name }) => name).filter((name) => {
      const born = NAME.exec(name)?.[1];
      return born !== undefined && Date.now() - parseInt(born, 36) * 1000 > olderThanMs;
    });
    // Another run may sweep the same schema meanwhile: IF EXISTS.
    for (const name of stale) await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    return stale;
  });
}
