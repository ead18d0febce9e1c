/**
 * A record store's files: sources the app's code gives (a Buffer, a readable stream, a `file:` URL)
 * judged and stored as an upload is (sniffed type, maxBytes, an image's bounds), before the row is
 * written and removed if the write fails; the objects a committed update replaced or a delete left
 * removed after it; and the rendered file objects given links under the app's first router.
 */
import { createReadStream, type ReadStream } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { UploadedFile, withinCap, type StoredFile } from '../../core/file-fields.js';
import { FieldError } from '../../core/fields.js';
import { isJsonObject } from '../../core/json.js';
import type { Row } from '../../core/rows.js';
import { storeDatabase, type Database } from '../../store/connection/database.js';
import { attachedFiles } from '../../store/files/attached.js';
import { ApiError, validationFailed, type ErrorDetails } from '../base/errors.js';
import type { Serializer } from '../declare/serializer.js';
import { fileKeyOf } from '../write/file-writes.js';
import { storeFile } from '../stages/parsers/multipart.js';

/**
 * A source's bytes and the name the file is shown under. A plain string is no source: a body may
 * come from a client, whose text must never name a file on the server (a path is a `file:` URL).
 */
function opened(source: unknown, field: string): { stream: Readable; name: string } | undefined {
  if (Buffer.isBuffer(source)) return { stream: Readable.from([source]), name: field };
  if (source instanceof URL && source.protocol === 'file:') return { stream: createReadStream(source), name: basename(fileURLToPath(source)) };
  if (source instanceof Readable) {
    const path = (source as Partial<ReadStream>).path;
    return { stream: source, name: typeof path === 'string' ? basename(path) : field };
  }
  return undefined;
}

export interface RecordFiles {
  /**
   * Runs `write` with `body`'s file sources stored and replaced by what the serializer takes; when
   * `write` (or a source) fails, what was stored is removed.
   */
  storing<T>(body: unknown, write: (body: unknown) => Promise<T>): Promise<T>;
  /**
   * Removes the objects `old` named that `row` (none: deleted) does not, fields with `keep: true`
   * aside. Inside a transaction the caller opened they are left to `restfold files sweep`: it may
   * still roll back, and the rows then name them again.
   */
  replaced(old: Row, row: Row | undefined): Promise<void>;
  /** The rendered record with a link in each file object (null where the app serves no path to it). */
  linked(rendered: Row, row: Row): Row;
  /** Whether the model has file fields (a delete then reads the record first). */
  readonly any: boolean;
}

export function recordFiles(database: Database, serializer: Serializer): RecordFiles {
  const { model } = serializer;
  const names = Object.keys(model.fields).filter((name) => model.fields[name]!.file);
  const shownFiles = serializer.fields.filter((name) => model.fields[name]?.file);
  const files = attachedFiles(database);
  const remove = async (keys: readonly string[]): Promise<void> => {
    // The write stands either way; what a failed removal leaves, a sweep finds.
    await Promise.all(keys.map((key) => files?.storage.remove(key).catch(() => undefined)));
  };

  async function stored(body: Record<string, unknown>, keys: string[]): Promise<Record<string, unknown>> {
    const out = { ...body };
    const details: ErrorDetails = {};
    for (const name of shownFiles) {
      const shown = serializer.shown(name);
      const source = opened(out[shown], shown);
      if (!source) continue;
      if (!files) throw new Error(`${model.table}: storing a file needs the app's storage: use the database the app hands out (a hook's, an action's, the test kit's).`);
      const rules = withinCap(model.fields[name]!.file!, files.maxFileBytes);
      try {
        out[shown] = new UploadedFile(await storeFile(source.stream, source.name, rules, { storage: files.storage, prefix: model.table, stored: keys }));
      } catch (error) {
        if (error instanceof FieldError) details[shown] = error.messages;
        else if (error instanceof ApiError && error.status === 413) details[shown] = [`Ensure this file has at most ${rules.maxBytes} bytes.`];
        else throw error;
      } finally {
        source.stream.destroy();
      }
    }
    if (Object.keys(details).length > 0) throw validationFailed(details);
    return out;
  }

  return {
    any: names.length > 0,
    async storing(body, write) {
      if (!isJsonObject(body) || shownFiles.length === 0) return write(body);
      const keys: string[] = [];
      try {
        return await write(await stored(body, keys));
      } catch (error) {
        await remove(keys);
        throw error;
      }
    },
    async replaced(old, row) {
      if (storeDatabase(database).db.isTransaction) return;
      const gone = names.flatMap((name) => {
        const field = model.fields[name]!;
        const before = fileKeyOf(field, old[name]);
        return before !== undefined && !field.file!.keep && before !== (row && fileKeyOf(field, row[name])) ? [before] : [];
      });
      await remove(gone);
    },
    linked(rendered, row) {
      if (!files) return rendered;
      for (const name of shownFiles) {
        const shown = serializer.shown(name);
        const object = rendered[shown] as Record<string, unknown> | null | undefined;
        const file = object && (model.fields[name]!.render(row[name]) as StoredFile | null);
        if (object && file) object.url = files.link(model.table, row, shown, file);
      }
      return rendered;
    },
  };
}
