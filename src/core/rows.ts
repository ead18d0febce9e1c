/** Rows as the store reads and writes them, and what a read selects. */
import type { Condition } from './conditions.js';
import type { Field } from './fields.js';

/** A record as read or written: field names to values. */
export type Row = Record<string, unknown>;

/**
 * A value the store computes from related rows in the read's own statement (no query per record):
 * how many there are (`count`), whether there is one (`exists`), their ids in order (`ids`), or the
 * sum, average, least or greatest of a value of theirs (`of`). Related rows are those of `table`
 * whose `via` column names the record (or, with `through`, those a join table's rows naming the
 * record link it to); with `where`, only those whose column equals the value as well (the
 * requesting user's id, say); with `filter`, only those meeting its conditions too.
 */
export interface Aggregate {
  readonly name: string;
  readonly kind: 'count' | 'exists' | 'ids' | NumericAggregate;
  readonly table: string;
  /** The column naming the record: `table`'s, or with `through`, the join table's. */
  readonly via: string;
  /** The record's column that `via` names (default `id`): `author_id`, for rows about the record's author. */
  readonly on?: string;
  /** The related rows' column `ids` lists (default `id`): a join table's other key, for a many-to-many. */
  readonly column?: string;
  /** `ids` of a text column whose values hold no comma (permission names): listed as they are, not as integers. */
  readonly text?: true;
  readonly where?: { readonly column: string; readonly value: unknown };
  /** A many-to-many: the join table, whose `via` names the record and whose `to` names a row of `table`. */
  readonly through?: { readonly table: string; readonly to: string };
  /** Conditions the related rows meet too, over `table`'s fields (declared by the app, never a request's). */
  readonly filter?: { readonly fields: Readonly<Record<string, Field>>; readonly conditions: readonly Condition[] };
  /** sum, avg, min, max: the related rows' columns whose product is aggregated (one column: its value). */
  readonly of?: readonly string[];
  /** sum, avg, min, max: what the product of `of` is (a decimal at `places`: its sum, least and greatest are too, its average is rounded there). */
  readonly value?: AggregateValue;
  /** sum, avg, min, max: the value where there is no related row (else null). */
  readonly default?: number;
  /**
   * `all`: every related row, whatever the request may see of the related table (Django's
   * `annotate`, which knows no row-level security); by default only the rows it may see.
   */
  readonly visibility?: 'all';
}

export type NumericAggregate = 'sum' | 'avg' | 'min' | 'max';

export type AggregateValue = { readonly type: 'integer' | 'float' } | { readonly type: 'decimal'; readonly places: number };

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
  /** The unique column one record is found by (a collection's record key, among `columns`); `id` when left out. */
  readonly recordKey?: string;
}

const relatedReadsOf = new WeakMap<Selection, readonly { readonly table: string }[]>();

/**
 * Everything a selection reads beside its own table's columns: its joins, and the aggregates (its own
 * and its joins', and their join tables). Listed once per selection (a selection is not changed once made): every write asks.
 */
export function relatedReads(selection: Selection): readonly { readonly table: string }[] {
  let reads = relatedReadsOf.get(selection);
  if (!reads) {
    const aggregates = [...selection.joins.flatMap((join) => join.aggregates ?? []), ...(selection.aggregates ?? [])];
    // A many-to-many's join table is read too.
    reads = [...selection.joins, ...aggregates, ...aggregates.flatMap(({ through }) => (through ? [through] : []))];
    relatedReadsOf.set(selection, reads);
  }
  return reads;
}

/** The column a selection's record is found by. */
export const recordKeyOf = (selection: Selection): string => selection.recordKey ?? 'id';
