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
  /** The record's column that `via` names (default `id`): `author_id`, for rows about the record's author. */
  readonly on?: string;
  /** The related rows' column `ids` lists (default `id`): a join table's other key, for a many-to-many. */
  readonly column?: string;
  readonly where?: { readonly column: string; readonly value: unknown };
}

/** A nested record: the row of `table` that the column `via` names, read by a join (null where the request may not see it). */
export interface Join {
  readonly name: string;
  readonly table: string;
  readonly via: string;
  readonly columns: readonly string[];
  /** Those of `columns` read exactly beyond 2^53, as Selection's. */
  readonly int64?: readonly string[];
  /** The nested record's own aggregates, correlated to the joined row in the same statement. */
  readonly aggregates?: readonly Aggregate[];
}

/**
 * Related records shown nested in a list (a reverse or many-to-many relation): read for all the
 * records read at once (a page's, or the one), in one statement of their own, in id order. They are
 * the rows of `table` whose column `via` names the record, or those a join table (`through`) links
 * it to.
 */
export interface Batch {
  readonly name: string;
  /** The related table (`selection`'s). */
  readonly table: string;
  /** What is read of each related record: its serializer's selection. */
  readonly selection: Selection;
  /** The related table's column naming the record, where there is no join table. */
  readonly via?: string;
  /** The join table: its column naming the record (`from`) and the one naming the related record (`to`). */
  readonly through?: { readonly table: string; readonly from: string; readonly to: string };
}

/** What the store must read for a serializer: own columns, one join per nested field, and the aggregates. */
export interface Selection {
  readonly table: string;
  readonly columns: readonly string[];
  /**
   * Those of `columns` holding 64-bit integers that may pass 2^53 (bigint fields): read as a number
   * while it is exact, as the text of their digits beyond, on both databases (capabilities.exactInteger).
   */
  readonly int64?: readonly string[];
  readonly joins: readonly Join[];
  readonly aggregates?: readonly Aggregate[];
  /** Related records read after the records, a statement per batch (see Batch). */
  readonly batches?: readonly Batch[];
  /** The unique column one record is found by (a collection's lookup field, among `columns`); `id` when left out. */
  readonly key?: string;
}

const relatedReadsOf = new WeakMap<Selection, readonly { readonly table: string }[]>();

/**
 * Everything a selection reads beside its own table's columns: its joins, and the aggregates (its own
 * and its joins'). Listed once per selection (a selection is not changed once made): every write asks.
 */
export function relatedReads(selection: Selection): readonly { readonly table: string }[] {
  let reads = relatedReadsOf.get(selection);
  if (!reads) {
    reads = [...selection.joins, ...selection.joins.flatMap((join) => join.aggregates ?? []), ...(selection.aggregates ?? [])];
    relatedReadsOf.set(selection, reads);
  }
  return reads;
}

/** The column a selection's record is found by. */
export const keyOf = (selection: Selection): string => selection.key ?? 'id';
