/**
 * Read-your-writes with read replicas (store/connection/replicas.ts): after a user's write commits, the
 * primary's WAL position is kept in a table on the primary, one row per user; the query that finds
 * a request's credential (which always reads the primary) reads it in the same statement, and the
 * request reads a replica only if that replica has replayed past it. So the position travels from
 * the writing process to every other through the primary itself: no other store, no clock.
 */
import { sql } from 'kysely';
import type { Row } from '../../core/rows.js';
import { storeDatabase, type Database } from './database.js';
import type { Companion, RowQuery } from '../read/records.js';

const TABLE = 'restfold_write_positions';
/** The column a credential's query reads the position into (null: the user never wrote). */
const WRITTEN_AT = '_written_at';

/**
 * Made when the service starts with replicas (not a migration: it is the deployment's, not the
 * app's, and only ever read and written on the primary). Without a foreign key: a write's note
 * takes no lock on its user's row.
 */
export async function createWritePositions(database: Database): Promise<void> {
  const create = sql`create table if not exists ${sql.table(TABLE)} (user_id bigint primary key, position pg_lsn not null)`;
  try {
    await create.execute(storeDatabase(database).db);
  } catch (error) {
    // Two processes starting at once may both find it missing; the loser's catalog insert clashes.
    if (!database.uniqueViolation(error)) throw error;
  }
}

/**
 * Keeps the primary's WAL insert position as the user's, taken after their write committed, so
 * it lies past the commit record whatever synchronous_commit is; never moved back by a note of
 * an earlier write that arrives later.
 */
const NOTE = `insert into ${TABLE} (user_id, position) values ($1, pg_current_wal_insert_lsn())
  on conflict (user_id) do update set position = greatest(${TABLE}.position, excluded.position)`;

export async function noteWritePosition(primary: Database, userId: number): Promise<void> {
  await primary.run(NOTE, [userId]);
}

/** `query` (whose rows' `id` is a user's) with that user's write position as one more column. */
export const withWritePosition = (database: Database, query: RowQuery): RowQuery =>
  storeDatabase(database).db
    .selectFrom(query.as('_user'))
    .leftJoin(`${TABLE} as _position`, '_position.user_id', '_user.id')
    .selectAll('_user')
    .select(sql<string>`_position.position::text`.as(WRITTEN_AT)) as unknown as RowQuery;

const positioned = new WeakMap<Companion['query'], Pick<Companion, 'query' | 'columns'>>();

/** The companion (a credential's user) with its user's write position; built once per companion query. */
export function positionedCompanion(companion: Companion): Companion {
  let found = positioned.get(companion.query);
  if (!found) {
    const query: Companion['query'] = (database, ...placeholders) => withWritePosition(database, companion.query(database, ...placeholders));
    positioned.set(companion.query, (found = { query, columns: [...companion.columns, WRITTEN_AT] }));
  }
  return { ...found, values: companion.values };
}

/** A WAL position's text (`16/B374D848`) as a number that orders as positions do. */
export const walPosition = (text: string): bigint => {
  const slash = text.indexOf('/');
  return (BigInt(`0x${text.slice(0, slash)}`) << 32n) + BigInt(`0x${text.slice(slash + 1)}`);
};

/** The write position a positioned row carries: null where the user never wrote. */
export const positionIn = (row: Row): bigint | null => {
  const text = row[WRITTEN_AT];
  return typeof text === 'string' ? walPosition(text) : null;
};
