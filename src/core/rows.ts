/** Rows as the store reads and writes them, and what a read selects. */

export type Row = Record<string, unknown>;

/**
 * A value the store computes from related rows in the read's own statement (no query per record):
 * how many there are (`count`), whether there is one (`exists`), their ids in order (`ids`). Related
 * rows are those of `table` whose `via` column names the record; with `where`, only those whose
 * column equals the value as well (the requesting user's id, say).
 */
export interface Aggregate {
  readonly name: string;
  readonly kind: 'count' | 'exists' | 'ids';
  readonly table: string;
  readonly via: string;
  /** The related rows' column `ids` lists (default `id`): a join table's other key, for a many-to-many. */
  readonly column?: string;
  readonly where?: { readonly column: string; readonly value: unknown };
}

/** What the store must read for a serializer: own columns, one join per nested field, and the aggregates. */
export interface Selection {
  readonly table: string;
  readonly columns: readonly string[];
  readonly joins: readonly { name: string; table: string; via: string; columns: readonly string[] }[];
  readonly aggregates?: readonly Aggregate[];
}
