/** Rows as the store reads and writes them, and what a read selects. */
import type { RecordScope } from './list-query.js';

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
  /** The record's column that `via` names (default `id`): `author_id`, for rows about the record's author. */
  readonly on?: string;
  /** The related rows' column `ids` lists (default `id`): a join table's other key, for a many-to-many. */
  readonly column?: string;
  readonly where?: { readonly column: string; readonly value: unknown };
  /** Only related rows within one of these scopes at least (the request's scopes of the collections serving `table`). */
  readonly within?: readonly RecordScope[];
}

/** A nested record: the row of `table` that the column `via` names, read by a join; none (null) outside `within`, as Aggregate's. */
export interface Join {
  readonly name: string;
  readonly table: string;
  readonly via: string;
  readonly columns: readonly string[];
  readonly within?: readonly RecordScope[];
}

/** What the store must read for a serializer: own columns, one join per nested field, and the aggregates. */
export interface Selection {
  readonly table: string;
  readonly columns: readonly string[];
  readonly joins: readonly Join[];
  readonly aggregates?: readonly Aggregate[];
  /** The unique column one record is found by (a collection's lookup field, among `columns`); `id` when left out. */
  readonly key?: string;
}

/** The column a selection's record is found by. */
export const keyOf = (selection: Selection): string => selection.key ?? 'id';
