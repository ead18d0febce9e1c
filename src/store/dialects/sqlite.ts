/** SQLite's answers to the store's questions (see capabilities.ts). */
import { sql } from 'kysely';
import type { DialectCapabilities } from './capabilities.js';

export const sqliteCapabilities: DialectCapabilities = {
  name: 'sqlite',
  types: {
    id: 'integer',
    idColumn: (column) => column.primaryKey().autoIncrement(),
    timestamp: 'text',
    boolean: 'integer',
    booleanValue: (value) => (value ? 1 : 0),
    caseFolded: (column) => sql`${sql.ref(column)} collate nocase`,
    // No pattern index: a search is a scan (docs/performance.md).
    supportsTrigramIndexes: false,
  },
  mergesRoundTrips: false,
  supportsModifyingCte: false,
  supportsRowLocks: false,
  // In-process: a transaction is no round trip, and SQLite's already excludes other writers.
  rowVersion: undefined,
  estimatesRowCounts: false,
  hasSchemas: false,
};
