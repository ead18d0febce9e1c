/** A write the database refused for what the record says (a unique clash, a reference to nothing). */

export class RecordRefused extends Error {
  /**
   * `details`: field → messages (`non_field_errors` when the database does not say which field);
   * `index`: the refused record's place in a write of several.
   */
  constructor(
    readonly details: Readonly<Record<string, string[]>>,
    readonly index?: number,
  ) {
    super(Object.values(details).flat().join(' '));
    this.name = 'RecordRefused';
  }
}

/** A delete the database refused: rows of `tables` still refer to the record (by a foreign key whose on_delete is `restrict`). */
export class RecordProtected extends Error {
  constructor(readonly tables: readonly string[]) {
    super(`Rows of ${tables.join(', ')} still refer to this record.`);
    this.name = 'RecordProtected';
  }
}
