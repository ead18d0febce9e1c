/**
 * Without named statements (DB_PREPARED_STATEMENTS=false, as behind a transaction pooler) the
 * store's statements go unnamed, described on every run, and read their rows by a shape the process
 * keeps per text: reused only for the very description it was built from, so a migration that
 * changes what a text returns (a column retyped, renamed, added) is read with the new type at once,
 * on every path, and nothing stays prepared on the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStoreDatabase, storeDatabase, transaction, type StoreDatabase } from '../../src/store/connection/database.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';

const READ = 'select id, code, note, blank, big, at, tags from unnamed_things where id = $1';
const INSERT = 'insert into unnamed_things (id, code) values ($1, $2) returning id, code';

describe.runIf(testDialect === 'postgres')('unnamed statements on PostgreSQL', () => {
  let test: TestDatabase;
  let database: StoreDatabase;
  /** One connection, so each run follows the one before on the same connection. */
  let single: StoreDatabase;

  beforeAll(async () => {
    test = await createTestDatabase();
    database = openStoreDatabase(test.url, { maxConnections: 4, preparedStatements: false });
    single = openStoreDatabase(test.url, { maxConnections: 1, preparedStatements: false });
    await database.run(
      'create table unnamed_things (id bigint primary key, code text unique, note text, blank text, big bigint, at timestamptz, tags jsonb)',
      [],
    );
    await database.run(
      "insert into unnamed_things values (1, 'a', null, '', 9007199254740993, '2026-01-02 03:04:05.6+00', '[\"x\"]'), (2, 'b', 'two', 'not blank', 7, null, null)",
      [],
    );
  });
  afterAll(async () => {
    await single?.close();
    await database?.close();
    await test?.drop();
  });

  const first = { id: 1, code: 'a', note: null, blank: '', big: '9007199254740993', at: '2026-01-02T03:04:05.600Z', tags: '["x"]' };
  const second = { id: 2, code: 'b', note: 'two', blank: 'not blank', big: 7, at: null, tags: null };

  it('reads every run as the first, on every connection at once, and leaves nothing prepared', async () => {
    const runs = await Promise.all(Array.from({ length: 24 }, (_, index) => database.run(READ, [(index % 2) + 1])));
    runs.forEach((rows, index) => expect(rows).toEqual([index % 2 === 0 ? first : second]));
    expect(await single.run(READ, [3])).toEqual([]);
    expect(await single.db.selectFrom('unnamed_things').select(['id', 'big', 'at']).where('id', '=', 1).execute()).toEqual([{ id: 1, big: '9007199254740993', at: first.at }]);
    expect(await single.run('select count(*) as count from pg_prepared_statements', [])).toEqual([{ count: 0 }]);
  });

  it('reads columns as pg names them: the last of two of one name wins, null or not; `__proto__` is a column', async () => {
    for (let run = 0; run < 2; run++) {
      expect(await single.run('select 1 as a, null::int as a, null::int as b, 2 as b', [])).toEqual([{ a: null, b: 2 }]);
      const [row] = await single.run('select \'{"polluted": 1}\'::json as "__proto__", 1 as id', []);
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
      expect(Object.entries(row!)).toEqual([['__proto__', { polluted: 1 }], ['id', 1]]);
    }
  });

  it('reads a column retyped between two runs of one text with the new type, on each path', async () => {
    await database.run("create table reshaped (id int primary key, code text); insert into reshaped values (1, '7'); create table reshaped_log (at int)", []);
    const retype = (type: string) => database.run(`alter table reshaped alter column code type ${type} using code::${type}`, []);
    const read = 'select * from reshaped where id = $1';
    expect(await single.run(read, [1])).toEqual([{ id: 1, code: '7' }]);
    await retype('integer');
    expect(await single.run(read, [1])).toEqual([{ id: 1, code: 7 }]);
    await retype('bigint');
    expect(await database.run(read, [1])).toEqual([{ id: 1, code: 7 }]);
    await database.run("alter table reshaped alter column code type timestamptz using '2026-01-02 03:04:05+00'", []);
    expect(await single.run(read, [1])).toEqual([{ id: 1, code: '2026-01-02T03:04:05.000Z' }]);

    // Same types, other names: a column renamed, then one added, under the same text.
    await database.run('alter table reshaped rename column code to label', []);
    expect(await single.run(read, [1])).toEqual([{ id: 1, label: '2026-01-02T03:04:05.000Z' }]);
    await database.run('alter table reshaped add column extra bigint default 5', []);
    expect(await single.run(read, [1])).toEqual([{ id: 1, label: '2026-01-02T03:04:05.000Z', extra: 5 }]);

    const built = () => single.db.selectFrom('reshaped').selectAll().where('id', '=', 1).execute();
    expect(await built()).toEqual([{ id: 1, label: '2026-01-02T03:04:05.000Z', extra: 5 }]);
    await database.run('alter table reshaped alter column extra type text', []);
    expect(await built()).toEqual([{ id: 1, label: '2026-01-02T03:04:05.000Z', extra: '5' }]);

    // In a transaction too, its write made once.
    const inTransaction = () =>
      transaction(single, async (scoped) => {
        const { db } = storeDatabase(scoped);
        await db.insertInto('reshaped_log').values({ at: 1 }).execute();
        return db.selectFrom('reshaped').select('extra').where('id', '=', 1).execute();
      });
    expect(await inTransaction()).toEqual([{ extra: '5' }]);
    await database.run('alter table reshaped alter column extra type integer using extra::integer', []);
    expect(await inTransaction()).toEqual([{ extra: 5 }]);
    expect(await single.run('select count(*) as count from reshaped_log', [])).toEqual([{ count: 2 }]);
  });

  it('answers writes with the rows they touched, and fails a refused one alone', async () => {
    const { db } = single;
    for (let run = 0; run < 3; run++) {
      const changed = await db.updateTable('unnamed_things').set({ note: `run ${run}` }).where('id', 'in', [1, 2]).executeTakeFirst();
      expect(changed.numUpdatedRows).toBe(2n);
      const inserted = await db.insertInto('unnamed_things').values({ id: 100 + run, code: `k${run}` }).executeTakeFirst();
      expect(inserted.numInsertedOrUpdatedRows).toBe(1n);
    }
    expect(await single.run(INSERT, [10, 'ten'])).toEqual([{ id: 10, code: 'ten' }]);
    const refused = await single.run(INSERT, [11, 'ten']).catch((error: unknown) => error);
    expect(single.uniqueViolation(refused)).toEqual(['code']);
    await expect(single.run('select nonsense from unnamed_things where id = $1', [1])).rejects.toMatchObject({ code: '42703' });
    expect(await single.run(INSERT, [11, 'eleven'])).toEqual([{ id: 11, code: 'eleven' }]);
    expect(await single.run(READ, [2])).toEqual([{ ...second, note: 'run 2' }]);
  });

  it('fails a statement whose values cannot be sent without sending it, and the connection goes on', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(single.run(INSERT, [12, circular])).rejects.toThrow(TypeError);
    expect(await single.run(READ, [12])).toEqual([]);
    expect(await single.run(INSERT, [12, 'twelve'])).toEqual([{ id: 12, code: 'twelve' }]);
  });
});
