/**
 * What a table is, as plain data: the facts fields and models declare about their storage, and the
 * schema state a migration leads to. No SQL here: the store compiles these facts for each dialect
 * (store/schema/), and the same facts are written into migration files and compared with the live
 * database, so they are JSON-shaped throughout.
 */

/**
 * Storage types, logical: each dialect says what each is in SQL (store/dialects/). A new field kind
 * that needs a new one adds it here, and the compiler asks every dialect for its SQL.
 */
export type ColumnType =
  | 'id'
  | 'bigint'
  | 'integer'
  | 'varchar'
  | 'text'
  | 'boolean'
  | 'timestamp'
  | 'date'
  | 'time'
  | 'duration'
  | 'decimal'
  | 'float'
  | 'uuid'
  | 'json';

export type OnDelete = 'cascade' | 'restrict' | 'set null';

/** One column's storage. A default here is a constant the database stores; computed defaults stay with the field. */
export interface Column {
  readonly type: ColumnType;
  /** For `varchar`. */
  readonly maxLength?: number;
  /** For `decimal`: significant digits in all, and how many of them after the point. */
  readonly digits?: number;
  readonly places?: number;
  readonly nullable: boolean;
  readonly default?: string | number | boolean;
  readonly unique?: boolean;
  /** A foreign key to `table`'s `id` (whose column type this one's is). */
  readonly references?: { readonly table: string; readonly onDelete: OnDelete };
}

/** An index a table declares: its columns (a name may end in ` desc`), and how it is built. */
export interface IndexFacts {
  readonly columns: readonly string[];
  /** By default `<table>_<columns>_idx` (`_key` when unique). */
  readonly name?: string;
  readonly unique?: boolean;
  /** Compares the (single) column ignoring case. */
  readonly ignoreCase?: boolean;
  /** A trigram index serving `LIKE '%term%'`, where the dialect has one (elsewhere none is made). */
  readonly trigram?: boolean;
  /**
   * A hash index where the dialect's B-tree bounds an entry's size (PostgreSQL's), so
   * no value the column holds is refused; it serves equality only. Elsewhere a B-tree, which has no bound.
   */
  readonly hash?: boolean;
}

/** The table-level facts a model may declare beside its fields. */
export interface TableFacts {
  readonly indexes?: readonly IndexFacts[];
  /** Column sets unique together, each made a unique index. */
  readonly uniqueTogether?: readonly (readonly string[])[];
  /** For tables without an `id`: the columns that name a row. */
  readonly primaryKey?: readonly string[];
}

export interface TableState {
  readonly columns: Readonly<Record<string, Column>>;
  readonly primaryKey: readonly string[];
}

export interface IndexState {
  readonly table: string;
  readonly columns: readonly string[];
  readonly unique?: boolean;
  readonly ignoreCase?: boolean;
  readonly trigram?: boolean;
  readonly hash?: boolean;
}

/**
 * The tables and indexes one migration history leads to. Indexes are kept apart from tables, by
 * name, so an app may index a table another history owns (the framework's `users`).
 */
export interface SchemaState {
  readonly tables: Readonly<Record<string, TableState>>;
  readonly indexes: Readonly<Record<string, IndexState>>;
}

/** An index's default name: `<table>_<columns>_idx`, `_key` when unique, `_trgm_idx` for trigram. */
export function indexName(table: string, index: IndexFacts): string {
  const columns = index.columns.map((column) => column.replace(/ desc$/, '')).join('_');
  return index.name ?? `${table}_${columns}_${index.trigram ? 'trgm_idx' : index.unique ? 'key' : 'idx'}`;
}

/** An index's facts as its state records them (false options left out, so states compare as JSON). */
export function indexState(table: string, index: IndexFacts): IndexState {
  if (index.hash && (index.columns.length !== 1 || index.columns[0]!.endsWith(' desc') || index.unique || index.ignoreCase || index.trigram)) {
    throw new Error(`${table}: a hash index is on one column, in no order, neither unique nor ignoring case (${index.columns.join(', ')}).`);
  }
  return {
    table,
    columns: [...index.columns],
    ...(index.unique && { unique: true }),
    ...(index.ignoreCase && { ignoreCase: true }),
    ...(index.trigram && { trigram: true }),
    ...(index.hash && { hash: true }),
  };
}

/**
 * The longest varchar whose every value fits a B-tree entry on every dialect: 600 characters are at
 * most 2 400 bytes in UTF-8, under PostgreSQL's bound of 2 704 bytes an entry.
 */
const BTREE_MAX_LENGTH = 600;

/**
 * The index a filtered or ordered column gets unasked, by its storage: none for JSON (its lookups,
 * `has_key` and `isnull`, no B-tree serves, and a document may exceed an entry's bound), a hash
 * index for text that may exceed a B-tree entry (equality lookups use it; ordering sorts), a
 * B-tree for everything else.
 */
export function automaticIndex(column: string, storage: Column): IndexFacts | undefined {
  if (storage.type === 'json') return undefined;
  const unbounded = storage.type === 'text' || (storage.type === 'varchar' && (storage.maxLength ?? Infinity) > BTREE_MAX_LENGTH);
  return { columns: [column], ...(unbounded && { hash: true }) };
}
