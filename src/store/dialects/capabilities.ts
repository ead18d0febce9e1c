/**
 * What the store asks of a database's dialect, in the manner of Kysely's own
 * adapters (`supportsReturning`): each difference between SQLite and
 * PostgreSQL is a question with an answer per dialect (sqlite.ts,
 * postgres.ts), never a comparison of dialect names.
 */
import type { ColumnDefinitionBuilder, Expression, RawBuilder } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

/** Column types and DDL pieces that differ between the dialects, so one migration serves both. */
export interface SqlTypes {
  /** An auto-assigned 64-bit primary key. */
  readonly id: 'integer' | 'bigint';
  readonly idColumn: (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  /** Millisecond precision, UTC. */
  readonly timestamp: 'text' | 'timestamptz(3)';
  readonly boolean: 'integer' | 'boolean';
  /** What a boolean column holds for `value` (SQLite has no boolean type: 1 or 0). */
  booleanValue(value: boolean): boolean | number;
  /**
   * `column` folded for a unique index that ignores case. SQLite collates the column itself, so a
   * clash is still reported by the column's name; PostgreSQL indexes lower(column).
   */
  caseFolded(column: string): Expression<unknown>;
  /** Whether trigram indexes (pg_trgm) can serve `LIKE '%term%'`: see trigramIndexes. */
  readonly supportsTrigramIndexes: boolean;
}

export interface DialectCapabilities {
  readonly name: Dialect;
  readonly types: SqlTypes;
  /**
   * Whether each statement is a round trip to a server, so two reads merged into one statement
   * save one. SQLite answers in-process: there a merged read only costs more.
   */
  readonly mergesRoundTrips: boolean;
  /** Whether a WITH clause may hold an INSERT, UPDATE or DELETE (a write and a read of its row in one statement). */
  readonly supportsModifyingCte: boolean;
  /** SELECT … FOR UPDATE (SQLite transactions already exclude other writers). */
  readonly supportsRowLocks: boolean;
  /**
   * A value that changes whenever a row of `table` is written (PostgreSQL's xmin), as text: an
   * update can then be conditional on the row being as it was read, instead of locking it in a
   * transaction. Undefined where there is none, or where the transaction costs no round trips.
   */
  readonly rowVersion: ((table: string) => RawBuilder<string>) | undefined;
  /** Whether the planner's estimate of a query's rows can be read without running it (EXPLAIN). */
  readonly estimatesRowCounts: boolean;
  /** Whether tables live in one of several schemas, so the current one must be named. */
  readonly hasSchemas: boolean;
}
