/** PostgreSQL's answers to the store's questions (see capabilities.ts). */
import { sql } from 'kysely';
import type { DialectCapabilities } from './capabilities.js';

export const postgresCapabilities: DialectCapabilities = {
  name: 'postgres',
  types: {
    id: 'bigint',
    idColumn: (column) => column.primaryKey().generatedByDefaultAsIdentity(),
    timestamp: 'timestamptz(3)',
    boolean: 'boolean',
    booleanValue: (value) => value,
    caseFolded: (column) => sql`lower(${sql.ref(column)})`,
    supportsTrigramIndexes: true,
  },
  mergesRoundTrips: true,
  supportsModifyingCte: true,
  supportsRowLocks: true,
  rowVersion: (table) => sql<string>`${sql.ref(`${table}.xmin`)}::text`,
  estimatesRowCounts: true,
  hasSchemas: true,
};
