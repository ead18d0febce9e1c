/**
 * timestamptz values read through the store come back as the RFC 3339 text
 * the API sends, rewritten from PostgreSQL's own output rather than parsed
 * into a Date: the same text a Date would print, whatever the precision, the
 * server's or the URL's time zone, or an unusual year.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStoreDatabase, type StoreDatabase } from '../../src/store/connection/database.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';

const viaDate = pg.types.getTypeParser(1184, 'text') as (text: string) => Date;

/** Each literal as the store reads it, and as PostgreSQL prints it in UTC. */
async function read(database: StoreDatabase, literals: readonly string[]): Promise<{ stored: unknown; text: string }[]> {
  const rows = await Promise.all(
    literals.map((literal) =>
      sql<{ stored: unknown; text: string }>`SELECT ${literal}::timestamptz AS stored, (${literal}::timestamptz)::text AS text`.execute(database.db),
    ),
  );
  return rows.map(({ rows: [row] }) => row!);
}

describe.runIf(testDialect === 'postgres')('timestamps read from PostgreSQL', () => {
  let test: TestDatabase;
  let database: StoreDatabase;

  beforeAll(async () => {
    test = await createTestDatabase();
    database = openStoreDatabase(test.url);
  });
  afterAll(async () => {
    await database?.close();
    await test?.drop();
  });

  it('are RFC 3339 UTC text to the millisecond, at every precision PostgreSQL prints', async () => {
    const read_ = await read(database, [
      '2026-01-02 03:04:05+00',
      '2026-01-02 03:04:05.6+00',
      '2026-01-02 03:04:05.67+00',
      '2026-01-02 03:04:05.678+00',
      '2026-01-02 03:04:05.678999+00',
      '0999-12-31 23:59:59.999+00',
    ]);
    expect(read_.map(({ stored }) => stored)).toEqual([
      '2026-01-02T03:04:05.000Z',
      '2026-01-02T03:04:05.600Z',
      '2026-01-02T03:04:05.670Z',
      '2026-01-02T03:04:05.678Z',
      '2026-01-02T03:04:05.678Z',
      '0999-12-31T23:59:59.999Z',
    ]);
    // The same text a Date parsed from PostgreSQL's output would print.
    for (const { stored, text } of read_) expect(stored).toBe(viaDate(text).toISOString());
  });

  it('are in UTC whatever time zone the connection URL asks for', async () => {
    const url = new URL(test.url);
    url.searchParams.set('options', `${url.searchParams.get('options') ?? ''} -c TimeZone=Asia/Kolkata`.trim());
    const elsewhere = openStoreDatabase(url.toString());
    try {
      const [row] = await read(elsewhere, ['2026-01-02 03:04:05.6+05:30']);
      expect(row!.stored).toBe('2026-01-01T21:34:05.600Z');
    } finally {
      await elsewhere.close();
    }
  });

  it('print years past 9999 and before the common era as a Date does, and infinity as PostgreSQL does', async () => {
    const read_ = await read(database, ['10000-01-01 00:00:00+00', '0044-03-15 12:00:00+00 BC', 'infinity']);
    expect(read_[0]!.stored).toBe('+010000-01-01T00:00:00.000Z');
    expect(read_[1]!.stored).toBe(viaDate(read_[1]!.text).toISOString());
    expect(read_[1]!.stored).toMatch(/^-000043-03-15T12:00:00\.000Z$/);
    expect(read_[2]!.stored).toBe('infinity');
  });
});
