/**
 * A field read from the first parts of a multipart body, before any file, and the bytes read put
 * back, so that the body is then parsed whole as it came: what lets a form's CSRF field (first, as
 * Django's forms put it) be checked before a byte of its files is read. At most `maxBytes` are read.
 */
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { parseError } from '../../base/errors.js';

const malformed = (error: unknown): Error => parseError(`Malformed multipart body: ${(error as Error).message}`);

/**
 * The field's value; undefined when a file part, the end of the body or `maxBytes` comes first.
 * Rejects with the multipart parser's 400 (parse_error) when the body is malformed before it.
 */
export function leadingField(body: Readable, contentType: string, name: string, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, defParamCharset: 'utf8', limits: { fieldSize: maxBytes } });
    } catch (error) {
      reject(malformed(error));
      return;
    }
    const read: Buffer[] = [];
    let length = 0;
    let done = false;
    const finish = (value: string | undefined, error?: Error): void => {
      if (done) return;
      done = true;
      body.off('readable', onReadable);
      body.off('end', onEnd);
      body.off('error', onError);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      parser.destroy();
      if (read.length > 0 && !body.readableEnded) body.unshift(Buffer.concat(read));
      if (error) reject(error);
      else resolve(value);
    };
    parser.on('field', (field, value) => {
      if (field === name) finish(value);
    });
    parser.on('file', (_field, file) => {
      // Destroyed unread with the parser, which it tells as an error of its own.
      file.on('error', () => undefined);
      finish(undefined);
    });
    parser.on('error', (error) => finish(undefined, malformed(error)));
    parser.on('close', () => finish(undefined));
    const onReadable = (): void => {
      let chunk: Buffer | null;
      while (!done && (chunk = body.read() as Buffer | null) !== null) {
        read.push(chunk);
        length += chunk.length;
        parser.write(chunk);
        if (length >= maxBytes) finish(undefined);
      }
    };
    // The body over before the field: the parser tells a body cut short inside a part (an error) from one that ended (close).
    const onEnd = (): void => void parser.end();
    const onError = (): void => finish(undefined);
    body.on('readable', onReadable);
    body.once('end', onEnd);
    body.once('error', onError);
  });
}
