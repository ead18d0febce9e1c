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

/** What deleting a referenced row does to the rows whose foreign key names it. */
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

/** A constant a constraint compares with. */
export type ConstraintValue = string | number | boolean;

/** Another field of the same row, as a constraint's operand (Django's `F('end')`). */
export interface FieldReference {
  readonly field: string;
}

/**
 * A condition over one row, in the query language's vocabulary: each key a field with an optional
 * lookup (`stock__gte`, `status`, `ends_at__isnull`), each value a constant, a list for `in`, a
 * boolean for `isnull`, or `{ field: 'other' }`; all must hold. `not` negates a condition, `or`
 * holds when any of its conditions does. Compiled into the table's DDL with the constants as literals.
 */
export interface RowCondition {
  readonly [term: string]: ConstraintValue | null | FieldReference | readonly ConstraintValue[] | RowCondition | readonly RowCondition[];
}

interface ConstraintReport {
  /** The constraint's name in the database (an identifier, unique in the schema). */
  readonly name: string;
  /** What a write that breaks it is answered (400 `validation_failed`). */
  readonly message?: string;
  /** The field(s) that message is reported under. */
  readonly field?: string | readonly string[];
}

/** A check every row must pass (`CHECK`): a write that breaks it is refused. A NULL operand passes, as in SQL. */
export interface CheckConstraint extends ConstraintReport {
  readonly check: RowCondition;
}

/** Fields unique together among the rows that meet `condition` (all rows without one): a unique index, partial with a condition. */
export interface UniqueConstraint extends ConstraintReport {
  readonly unique: readonly string[];
  readonly condition?: RowCondition;
}

/** A model's constraint: a check, or fields unique together (optionally among the rows meeting a condition). */
export type ConstraintFacts = CheckConstraint | UniqueConstraint;

/** The table-level facts a model may declare beside its fields. */
export interface TableFacts {
  readonly indexes?: readonly IndexFacts[];
  /** Checks and (conditional) unique constraints, reported per field when a write breaks one. */
  readonly constraints?: readonly ConstraintFacts[];
  /** Column sets unique together, each made a unique index. */
  readonly uniqueTogether?: readonly (readonly string[])[];
  /** For tables without an `id`: the columns that name a row. */
  readonly primaryKey?: readonly string[];
}

export interface TableState {
  readonly columns: Readonly<Record<string, Column>>;
  readonly primaryKey: readonly string[];
  /** Check constraints by name; left out when the table has none. */
  readonly checks?: Readonly<Record<string, RowCondition>>;
}

export interface IndexState {
  readonly table: string;
  readonly columns: readonly string[];
  readonly unique?: boolean;
  readonly ignoreCase?: boolean;
  readonly trigram?: boolean;
  readonly hash?: boolean;
  /** A partial index's condition: only the rows that meet it are indexed (and unique). */
  readonly where?: RowCondition;
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
