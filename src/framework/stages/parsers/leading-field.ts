/**
 * A field read from the first parts of a multipart body, before any file, and the bytes read put
 * back, so that the body is then parsed whole as it came: what lets a form's CSRF field (first, as
 * Django's forms put it) be checked before a byte of its files is read. At most `maxBytes` are read.
 */
import type { Readable } from 'node:stream';
import busboy from 'busboy';

/** The field's value; undefined when a file part, the end of the body or `maxBytes` comes first, or the body is malformed. */
export function leadingField(body: Readable, contentType: string, name: string, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, defParamCharset: 'utf8', limits: { fieldSize: maxBytes } });
    } catch {
      resolve(undefined);
      return;
    }
    const read: Buffer[] = [];
    let length = 0;
    let done = false;
    const finish = (value: string | undefined): void => {
      if (done) return;
      done = true;
      body.off('readable', onReadable);
      body.off('end', onEnd);
      body.off('error', onEnd);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      parser.destroy();
      if (read.length > 0 && !body.readableEnded) body.unshift(Buffer.concat(read));
      resolve(value);
    };
    parser.on('field', (field, value) => {
      if (field === name) finish(value);
    });
    parser.on('file', (_field, file) => {
      // Destroyed unread with the parser, which it tells as an error of its own.
      file.on('error', () => undefined);
      finish(undefined);
    });
    parser.on('error', () => finish(undefined));
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
    const onEnd = (): void => finish(undefined);
    body.on('readable', onReadable);
    body.once('end', onEnd);
    body.once('error', onEnd);
  });
}
