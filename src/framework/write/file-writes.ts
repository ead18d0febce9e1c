/**
 * A request's stored files, kept so that nothing is lost and nothing orphaned (as Active Storage's
 * purge_later): the bytes are stored before the row commits; if the write fails (validation, a
 * hook, a constraint, a rollback) what it stored is removed; once it commits, the objects the rows
 * it replaced or deleted named are removed (a field's `keep: true` keeps them). A crash between the
 * two leaves an object no row names, for `restfold files sweep`.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { StoredFile } from '../../core/file-fields.js';
import type { Field } from '../../core/fields.js';
import type { Row } from '../../core/rows.js';
import type { FileStorage } from '../../store/files/storage.js';

/** The key a row's file field names, or undefined. */
export function fileKeyOf(field: Field, value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  return (field.render(value) as StoredFile | null)?.key;
}

export class FileWrites {
  /** Keys this request stored (the parsing stage pushes them as each upload completes). */
  readonly stored: string[] = [];
  private readonly replaced: string[] = [];
  private committed = false;

  constructor(
    private readonly storage: FileStorage,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * The write committed: `old` (the row as written over, or deleted) gave way to `row` (none for a
   * delete); the keys `old` named that `row` does not are removed after the request's write.
   */
  committedOver(fields: Readonly<Record<string, Field>>, old: Row | undefined, row: Row | undefined): void {
    this.committed = true;
    if (!old) return;
    for (const [name, field] of Object.entries(fields)) {
      if (!field.file || field.file.keep || !(name in old)) continue;
      const before = fileKeyOf(field, old[name]);
      if (before !== undefined && before !== (row && fileKeyOf(field, row[name]))) this.replaced.push(before);
    }
  }

  /** The write failed: what it stored goes (nothing, once it committed: the rows name it). */
  async discard(): Promise<void> {
    if (!this.committed) await this.remove(this.stored.splice(0));
  }

  /** The write stands: the objects it replaced go. */
  async settle(): Promise<void> {
    await this.remove(this.replaced.splice(0));
  }

  private async remove(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      try {
        await this.storage.remove(key);
      } catch (error) {
        // The write stands either way; a sweep finds what is left.
        this.log.error({ err: error, key }, 'removing a stored file failed');
      }
    }
  }
}
