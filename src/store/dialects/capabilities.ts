/**
 * What the store asks of a database's dialect, in the manner of Kysely's own
 * adapters (`supportsReturning`): each difference between SQLite and
 * PostgreSQL is a question with an answer per dialect (sqlite.ts,
 * postgres.ts), never a comparison of dialect names.
 */
import type { ColumnDefinitionBuilder, Expression, Kysely, RawBuilder, SqlBool } from 'kysely';
import type { ColumnType, OnDelete } from '../../core/schema.js';

/** The two databases Restfold runs on. */
export type Dialect = 'sqlite' | 'postgres';

/** Column types and DDL pieces that differ between the dialects, so one migration serves both. Timestamps keep milliseconds, in UTC. */
export interface SqlTypes {
  /** Makes a column the auto-assigned 64-bit primary key. */
  readonly idColumn: (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  /** What a boolean column holds for `value` (SQLite has no boolean type: 1 or 0). */
  booleanValue(value: boolean): boolean | number;
  /**
   * `column` folded for a unique index that ignores case. SQLite collates the column itself, so a
   * clash is still reported by the column's name; PostgreSQL indexes lower(column).
   */
  caseFolded(column: string): Expression<unknown>;
  /** Whether trigram indexes (pg_trgm) can serve `LIKE '%term%'` (a search field's index, where they can). */
  readonly supportsTrigramIndexes: boolean;
  /**
   * Whether an index declared `hash` is made one: where the B-tree bounds an entry's size
   * (PostgreSQL), so long text is indexed for equality without refusing a value. SQLite's B-tree
   * keeps a long entry in overflow pages, so it makes a B-tree.
   */
  readonly supportsHashIndexes: boolean;
  /** Each storage type's SQL name (a `varchar` gets its length appended). */
  readonly columnTypes: Readonly<Record<ColumnType, string>>;
  /**
   * Whether ALTER TABLE changes a column's type, nullability, default, uniqueness or foreign key
   * in place; where not (SQLite), the table is rebuilt from its declared state, rows copied.
   */
  readonly altersColumnsInPlace: boolean;
  /**
   * Rows of table `from` moved to `to` (`key` unique in each), with `from` still answering the
   * statements of servers of the previous release, reads and writes, and each release seeing the
   * other's writes: an expand migration's step (the rows copied, each once, and `from` kept
   * answering) and its contract step's (`from` gone), once no such server is left.
   */
  movedRows(from: string, to: string, key: readonly string[]): RowsMove;
}

/** The statements of a move's expand and contract steps, each run in order. */
export interface RowsMove {
  readonly expand: readonly RawBuilder<unknown>[];
  readonly contract: readonly RawBuilder<unknown>[];
}

/** A live column as introspection reads it, its type as `columnTypes` names it (`varchar(64)`), its default as a value. */
export interface LiveColumn {
  readonly table: string;
  readonly column: string;
  readonly type: string;
  readonly nullable: boolean;
  /** A constant default (a generated key's is none). */
  readonly default?: string | number | boolean;
  /** Whether a unique constraint covers this column alone. */
  readonly unique: boolean;
  readonly references?: { readonly table: string; readonly onDelete: OnDelete | 'no action' };
}

export interface LiveIndex {
  readonly table: string;
  readonly name: string;
}

export interface DialectCapabilities {
  readonly name: Dialect;
  readonly types: SqlTypes;
  /**
   * Whether each statement is a round trip to a server, so two reads merged into one statement
   * save one. SQLite answers in-process: there a merged read only costs more.
   */
  readonly mergesRoundTrips: boolean;
  /** Whether a notification sent on one connection reaches listeners on others, in other processes (PostgreSQL's NOTIFY): how live changes cross processes without Redis. */
  readonly notifies: boolean;
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
  /**
   * A 64-bit integer column as it is to be read: a number while it is exact (|n| ≤ 2^53 − 1), the
   * text of its digits beyond, where a number would lose them. For the columns that may pass 2^53
   * only (bigint fields), so other integers (ids, counts) are read as they are.
   */
  exactInteger(column: Expression<unknown>): RawBuilder<unknown>;
  /**
   * Whether integer arithmetic's result `value` is still exact: SQLite turns a result past 64 bits
   * into a double (which may round back onto a bound); PostgreSQL's numeric never rounds.
   */
  exactArithmetic(value: Expression<unknown>): RawBuilder<SqlBool>;
  /** The exact sum of the products of `factors` (decimals, integers) over the rows, as PostgreSQL's numeric sums them: SQLite's sum() adds doubles. */
  decimalSum(factors: readonly Expression<unknown>[]): RawBuilder<unknown>;
  /** Whether the planner's estimate of a query's rows can be read without running it (EXPLAIN). */
  readonly estimatesRowCounts: boolean;
  /** Whether tables live in one of several schemas, so the current one must be named. */
  readonly hasSchemas: boolean;
  /**
   * Migrations: where DDL is transactional, they run in one transaction, whose first statement is
   * this lock, held until it ends, so that other processes' migrations wait for them. Undefined
   * where they run outside a transaction, on the one connection there is (SQLite: a table rebuild
   * turns foreign keys off, which a transaction would ignore).
   */
  readonly migrationLock: RawBuilder<unknown> | undefined;
  /**
   * A lock on `key` (bound, never SQL), held until the transaction it is taken in ends, so that a
   * check for absence and the write after it run one transaction at a time per key. Undefined where
   * a write transaction already excludes every other (SQLite's begin IMMEDIATE).
   */
  readonly namedLock: ((key: string) => RawBuilder<unknown>) | undefined;
  /** The columns of every table (of the current schema), as `check` compares them with the declarations. */
  liveColumns<DB>(db: Kysely<DB>): Promise<LiveColumn[]>;
  /** The named indexes of every table (of the current schema), beside those keys and unique constraints make. */
  liveIndexes<DB>(db: Kysely<DB>): Promise<LiveIndex[]>;
  /** The named check constraints of every table (of the current schema). */
  liveChecks<DB>(db: Kysely<DB>): Promise<LiveIndex[]>;
  /** Deletes every row of every table of the current schema but `kept`, whatever their foreign keys, and starts their ids again from 1. */
  emptyTables<DB>(db: Kysely<DB>, kept: readonly string[]): Promise<void>;
}
