/**
 * Transactions begun at their first statement (store/connection/deferred-begin.ts): what reaches
 * the driver, in order, for transactions that send nothing, send statements, fail, run two at
 * once or set a savepoint; and on the test database, that a transaction holds nothing open on the
 * server until its first statement.
 */
import { Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql, type DatabaseConnection, type Driver } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStoreDatabase, storeDatabase, transaction, transactionBegun } from '../../src/store/connection/database.js';
import { withDeferredBegin } from '../../src/store/connection/deferred-begin.js';
import { onPostgres, testDialect, withApplicationName } from '../support/database.js';

/** A Kysely whose driver records what it is asked to send, one line each. */
function recorded(): { db: Kysely<Record<string, never>>; sent: string[] } {
  const sent: string[] = [];
  const connection: DatabaseConnection = {
    executeQuery: async (query) => {
      sent.push(query.sql);
      return { rows: [] };
    },
    // eslint-disable-next-line require-yield -- no statement here streams
    streamQuery: async function* () {
      throw new Error('not streamed');
    },
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: async () => void sent.push('begin'),
    commitTransaction: async () => void sent.push('commit'),
    rollbackTransaction: async () => void sent.push('rollback'),
    savepoint: async (_connection, name) => void sent.push(`savepoint ${name}`),
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const dialect = withDeferredBegin({
    createDriver: () => driver,
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createAdapter: () => new SqliteAdapter(),
    createIntrospector: (db) => new SqliteIntrospector(db),
  });
  return { db: new Kysely({ dialect }), sent };
}

const select = (db: Kysely<Record<string, never>>, n: number) => sql`select ${sql.lit(n)}`.execute(db);

describe('a transaction begun at its first statement', () => {
  it('sends nothing when its work sends nothing: no BEGIN, no COMMIT', async () => {
    const { db, sent } = recorded();
    expect(await db.transaction().execute(async () => 'done')).toBe('done');
    expect(sent).toEqual([]);
  });

  it('begins before its first statement and commits after its last', async () => {
    const { db, sent } = recorded();
    await db.transaction().execute(async (transaction) => {
      expect(sent).toEqual([]);
      await select(transaction, 1);
      await select(transaction, 2);
    });
    expect(sent).toEqual(['begin', 'select 1', 'select 2', 'commit']);
  });

  it('rolls back what it began, and sends nothing for a failure before any statement', async () => {
    const { db, sent } = recorded();
    await expect(db.transaction().execute(async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(sent).toEqual([]);
    await expect(
      db.transaction().execute(async (transaction) => {
        await select(transaction, 1);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(sent).toEqual(['begin', 'select 1', 'rollback']);
  });

  it('begins once for two statements sent at once', async () => {
    const { db, sent } = recorded();
    await db.transaction().execute((transaction) => Promise.all([select(transaction, 1), select(transaction, 2)]));
    expect(sent.filter((line) => line === 'begin')).toHaveLength(1);
    expect(sent[0]).toBe('begin');
    expect(sent.at(-1)).toBe('commit');
  });

  it('begins before a savepoint', async () => {
    const { db, sent } = recorded();
    const controlled = await db.startTransaction().execute();
    expect(sent).toEqual([]);
    await controlled.savepoint('first').execute();
    await controlled.commit().execute();
    expect(sent).toEqual(['begin', 'savepoint first', 'commit']);
  });

  it('leaves statements outside a transaction as they are', async () => {
    const { db, sent } = recorded();
    await select(db, 7);
    expect(sent).toEqual(['select 7']);
  });
});

describe('on the test database', () => {
  const tag = `deferred_begin_${process.pid}`;
  const url = testDialect === 'postgres' ? withApplicationName(process.env.TEST_DATABASE_URL!, tag) : 'sqlite::memory:';
  const database = openStoreDatabase(url);
  afterAll(() => database.close());

  /** Whether the server has a transaction open for this test's connection (PostgreSQL). */
  const serverSeesTransaction = () =>
    onPostgres(async (client) => {
      const { rows } = await client.query<{ open: boolean }>('select xact_start is not null as open from pg_stat_activity where application_name = $1 and state <> $2', [tag, 'idle']);
      return rows.some((row) => row.open);
    });

  it('tells whether the transaction has sent a statement, and the server holds it open only from then', async () => {
    await transaction(database, async (within) => {
      expect(await transactionBegun(within)).toBe(false);
      if (testDialect === 'postgres') expect(await serverSeesTransaction()).toBe(false);
      await sql`select 1`.execute(storeDatabase(within).db);
      expect(await transactionBegun(within)).toBe(true);
      if (testDialect === 'postgres') expect(await serverSeesTransaction()).toBe(true);
    });
  });
});
