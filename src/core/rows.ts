/** Rows as the store reads and writes them, and what a read selects. */

export type Row = Record<string, unknown>;

/** What the store must read for a serializer: own columns and one join per nested field. */
export interface Selection {
  readonly table: string;
  readonly columns: readonly string[];
  readonly joins: readonly { name: string; table: string; via: string; columns: readonly string[] }[];
}
