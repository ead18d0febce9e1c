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
  readonly where?: { readonly column: string; readonly value: unknown };
}

/** What the store must read for a serializer: own columns, one join per nested field, and the aggregates. */
export interface Selection {
  readonly table: string;
  readonly columns: readonly string[];
  readonly joins: readonly { name: string; table: string; via: string; columns: readonly string[] }[];
  readonly aggregates?: readonly Aggregate[];
  /** The unique column one record is found by (a collection's lookup field, among `columns`); `id` when left out. */
  readonly key?: string;
}

/** The column a selection's record is found by. */
export const keyOf = (selection: Selection): string => selection.key ?? 'id';
