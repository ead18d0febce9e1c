/**
 * The store's fixed-shape statements (`Database.run`) run as named statements whose result shape
 * each connection learns on the first run and keeps: every later run must read its rows exactly as
 * the first did, and a statement that fails, at the database or before it is sent, must fail
 * alone and leave its connection working. A connection holds a bounded number of them, and one
 * that a migration made stale is prepared again and read with its new type.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStoreDatabase, storeDatabase, transaction, type StoreDatabase } from '../../src/store/connection/database.js';
import { STATEMENTS_PER_CONNECTION } from '../../src/store/dialects/postgres/named-statement.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';

const READ = 'select id, code, note, blank, big, at, tags from named_things where id = $1';
const INSERT = 'insert into named_things (id, code) values ($1, $2) returning id, code';

describe.runIf(testDialect === 'postgres')('named statements on PostgreSQL', () => {
  let test: TestDatabase;
  let database: StoreDatabase;
  /** One connection, so every run after the first uses the shape that connection learnt. */
  let single: StoreDatabase;

  beforeAll(async () => {
    test = await createTestDatabase();
    database = openStoreDatabase(test.url, { maxConnections: 4 });
    single = openStoreDatabase(test.url, { maxConnections: 1 });
    await database.run(
      'create table named_things (id bigint primary key, code text unique, note text, blank text, big bigint, at timestamptz, tags jsonb)',
      [],
    );
    await database.run(
      "insert into named_things values (1, 'a', null, '', 9007199254740993, '2026-01-02 03:04:05.6+00', '[\"x\"]'), (2, 'b', 'two', 'not blank', 7, null, null)",
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

  it('reads every run as the first: numbers, big integers as text, RFC 3339 times, nulls and empty text', async () => {
    // More runs than connections, at once: each connection describes the statement once and reuses what it learnt.
    const runs = await Promise.all(Array.from({ length: 24 }, (_, index) => database.run(READ, [(index % 2) + 1])));
    runs.forEach((rows, index) => expect(rows).toEqual([index % 2 === 0 ? first : second]));
    for (let run = 0; run < 3; run++) expect(await single.run(READ, [2])).toEqual([second]);
    expect(await single.run(READ, [3])).toEqual([]);
  });

  it('reads columns as pg names them: the last of two of one name wins, null or not; `__proto__` is a column', async () => {
    for (let run = 0; run < 2; run++) {
      expect(await single.run('select 1 as a, null::int as a, null::int as b, 2 as b', [])).toEqual([{ a: null, b: 2 }]);
      const [row] = await single.run('select \'{"polluted": 1}\'::json as "__proto__", 1 as id', []);
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
      expect(Object.entries(row!)).toEqual([['__proto__', { polluted: 1 }], ['id', 1]]);
    }
  });

  it('fails a statement the database refuses with its error, and runs it again afterwards', async () => {
    expect(await single.run(INSERT, [10, 'ten'])).toEqual([{ id: 10, code: 'ten' }]);
    const refused = await single.run(INSERT, [11, 'ten']).catch((error: unknown) => error);
    expect(single.uniqueViolation(refused)).toEqual(['code']);
    expect(await single.run(INSERT, [11, 'eleven'])).toEqual([{ id: 11, code: 'eleven' }]);
    expect(await single.run(READ, [11])).toEqual([{ id: 11, code: 'eleven', note: null, blank: null, big: null, at: null, tags: null }]);
  });

  it('answers queries built with Kysely the same way: rows, and the rows a write touched', async () => {
    const { db } = single;
    for (let run = 0; run < 3; run++) {
      expect(await db.selectFrom('named_things').select(['id', 'big', 'at']).where('id', '=', 1).execute()).toEqual([{ id: 1, big: '9007199254740993', at: first.at }]);
      const changed = await db.updateTable('named_things').set({ note: `run ${run}` }).where('id', 'in', [1, 2]).executeTakeFirst();
      expect(changed.numUpdatedRows).toBe(2n);
      const inserted = await db.insertInto('named_things').values({ id: 100 + run, code: `k${run}` }).executeTakeFirst();
      expect(inserted.numInsertedOrUpdatedRows).toBe(1n);
    }
    expect(await single.run(READ, [2])).toEqual([{ ...second, note: 'run 2' }]);
  });

  /** The named statements the one connection of `single` holds (this count's own among them). */
  const preparedOnSingle = async () => Number((await single.run('select count(*) as count from pg_prepared_statements', []))[0]!.count);

  it('holds at most STATEMENTS_PER_CONNECTION on a connection, reads and writes together, closing the least recently run', async () => {
    const first = 'select $1::int + 1 as n';
    expect(await single.run(first, [1])).toEqual([{ n: 2 }]);
    for (let shape = 0; shape < STATEMENTS_PER_CONNECTION; shape++) {
      // Each a shape of its own: a read through run, a write through Kysely.
      expect(await single.run(`select $1::int + ${shape} as n`, [1])).toEqual([{ n: 1 + shape }]);
      await single.db.updateTable('named_things').set({ note: sql`${sql.lit(`shape ${shape}`)}` }).where('id', '=', 2).execute();
    }
    expect(await preparedOnSingle()).toBeLessThanOrEqual(STATEMENTS_PER_CONNECTION);
    // The first was closed long ago: it is prepared again.
    expect(await single.run(first, [5])).toEqual([{ n: 6 }]);
    expect(await single.run(READ, [2])).toEqual([{ ...second, note: `shape ${STATEMENTS_PER_CONNECTION - 1}` }]);
    expect(await preparedOnSingle()).toBeLessThanOrEqual(STATEMENTS_PER_CONNECTION);
  });

  it('prepares a statement again when a migration changes the type it returns, and reads the new type', async () => {
    await database.run("create table shifting (id int primary key, code text); insert into shifting values (1, '7'); create table shifting_log (at int)", []);
    const retype = (type: string) => database.run(`alter table shifting alter column code type ${type} using code::${type}`, []);
    const read = 'select code from shifting where id = $1';
    // Each path's statement prepared on the one connection before another connection changes the column.
    expect(await single.run(read, [1])).toEqual([{ code: '7' }]);
    await retype('integer');
    expect(await single.run(read, [1])).toEqual([{ code: 7 }]);

    const built = () => single.db.selectFrom('shifting').select('code').where('id', '=', 1).execute();
    expect(await built()).toEqual([{ code: 7 }]);
    await retype('text');
    expect(await built()).toEqual([{ code: '7' }]);

    // In a transaction the refusal ends it: it is rolled back and runs again, its write made once.
    const inTransaction = () =>
      transaction(single, async (transaction) => {
        const { db } = storeDatabase(transaction);
        await db.insertInto('shifting_log').values({ at: 1 }).execute();
        return db.selectFrom('shifting').select('code').where('id', '=', 1).execute();
      });
    expect(await inTransaction()).toEqual([{ code: '7' }]);
    await retype('integer');
    expect(await inTransaction()).toEqual([{ code: 7 }]);
    expect(await single.run('select count(*) as count from shifting_log', [])).toEqual([{ count: 2 }]);
  });

  it('fails a statement whose values cannot be sent without sending it, and the connection goes on', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(single.run(INSERT, [12, circular])).rejects.toThrow(TypeError);
    expect(await single.run(READ, [12])).toEqual([]);
    expect(await single.run(INSERT, [12, 'twelve'])).toEqual([{ id: 12, code: 'twelve' }]);
  });
});
