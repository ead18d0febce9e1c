/**
 * Indexes for the service's list queries, beyond the per-column ones the
 * tables were created with: see docs/performance.md for the plans they serve.
 */
import { trigramIndexes, type Migrations } from '../framework/index.js';

/** The SearchFields of the users and articles serializers, which `search=` matches with ILIKE '%term%'. */
export const SEARCH_INDEXES = [
  { table: 'users', column: 'username' },
  { table: 'users', column: 'email' },
  { table: 'articles', column: 'title' },
  { table: 'articles', column: 'body' },
].map((entry) => ({ ...entry, name: `${entry.table}_${entry.column}_trgm_idx` }));

export const indexMigrations: Migrations = {
  // Trigram GIN indexes serve ILIKE '%term%' where the database has them; SQLite's search stays a scan (docs/performance.md).
  '0003_search_indexes': trigramIndexes(SEARCH_INDEXES),
  // The common filter + ordering pairs, tie-broken by id as the list query is: the page is read in index
  // order and the count is an index-only scan of the filtered part.
  '0004_list_indexes': async (db) => {
    await db.schema.createIndex('users_is_active_date_joined_idx').on('users').columns(['is_active', 'date_joined desc', 'id']).execute();
    await db.schema.createIndex('articles_author_id_created_at_idx').on('articles').columns(['author_id', 'created_at desc', 'id']).execute();
  },
};
