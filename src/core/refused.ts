/** A write the database refused for what the record says (a unique clash, a reference to nothing). */

export class RecordRefused extends Error {
  /**
   * `details`: field → messages (`non_field_errors` when the database does not say which field);
   * `index`: the refused record's place in a write of several; `clashing`: the fields of a unique
   * clash, whose messages name them (so a layer that shows fields under other names rebuilds them: see clashDetails).
   */
  constructor(
    readonly details: Readonly<Record<string, string[]>>,
    readonly index?: number,
    readonly clashing?: readonly string[],
  ) {
    super(Object.values(details).flat().join(' '));
    this.name = 'RecordRefused';
  }
}

/** A unique clash's details: each clashing field, by the name `shown` gives it, → the message naming them all. */
export function clashDetails(clashing: readonly string[], shown: (field: string) => string = (field) => field): Record<string, string[]> {
  const message = `A record with this ${clashing.map(shown).join(', ') || 'value'} already exists.`;
  return clashing.length ? Object.fromEntries(clashing.map((field) => [shown(field), [message]])) : { non_field_errors: [message] };
}

/** A delete the database refused: rows of `tables` still refer to the record (by a foreign key whose on_delete is `restrict`). */
export class RecordProtected extends Error {
  constructor(readonly tables: readonly string[]) {
    super(`Rows of ${tables.join(', ')} still refer to this record.`);
    this.name = 'RecordProtected';
  }
}
