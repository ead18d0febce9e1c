/**
 * Indexes for the service's list queries, beyond the per-column ones the
 * tables were created with: see docs/performance.md for the plans they serve.
 */
import { sql } from 'kysely';
import type { Migrations } from '../framework/index.js';

/** The SearchFields of the users and articles serializers, which `search=` matches with ILIKE '%term%'. */
export const SEARCH_INDEXES = [
  { table: 'users', column: 'username' },
  { table: 'users', column: 'email' },
  { table: 'articles', column: 'title' },
  { table: 'articles', column: 'body' },
].map((entry) => ({ ...entry, name: `${entry.table}_${entry.column}_trgm_idx` }));

export const indexMigrations: Migrations = {
  // PostgreSQL only: trigram GIN indexes serve ILIKE '%term%'. SQLite's search stays a scan (docs/performance.md).
  '0003_search_indexes': async (db, types) => {
    if (types.dialect !== 'postgres') return;
    // In `public`, not the first schema on the search path: the extension is one per database, and a
    // schema dropped with CASCADE (as the test suites do) would take it and every other schema's indexes along.
    await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`.execute(db);
    const { rows } = await sql<{ schema: string }>`
      SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'pg_trgm'`.execute(db);
    const operatorClass = sql`${sql.id(rows[0]!.schema)}.gin_trgm_ops`;
    for (const { table, column, name } of SEARCH_INDEXES) {
      await sql`CREATE INDEX ${sql.id(name)} ON ${sql.table(table)} USING gin (${sql.ref(column)} ${operatorClass})`.execute(db);
    }
  },
  // The common filter + ordering pairs, tie-broken by id as the list query is: the page is read in index
  // order and the count is an index-only scan of the filtered part.
  '0004_list_indexes': async (db) => {
    await db.schema.createIndex('users_is_active_date_joined_idx').on('users').columns(['is_active', 'date_joined desc', 'id']).execute();
    await db.schema.createIndex('articles_author_id_created_at_idx').on('articles').columns(['author_id', 'created_at desc', 'id']).execute();
  },
};
