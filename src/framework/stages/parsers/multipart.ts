/**
 * `multipart/form-data` bodies (DRF's MultiPartParser), read as a stream: each file part is judged
 * by its first bytes (content.ts) and stored as it arrives, never whole in memory; the ordinary
 * fields are a form's, read by the serializer as an urlencoded form's are. Limits: the body's bytes
 * in all, its parts, its header sizes, and each file field's maxBytes. What a refused body had
 * stored is removed before the error is answered.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import type { FastifyRequest } from 'fastify';
import { UploadedFile, type CappedRules, type StoredFile } from '../../../core/file-fields.js';
import { FieldError } from '../../../core/fields.js';
import type { FileStorage } from '../../../store/files/storage.js';
import { ApiError, emptyDetails, parseError, validationFailed, type ErrorDetails } from '../../base/errors.js';
import { fileTransfer } from '../../base/transfer-heap.js';
import { checkedForm } from '../parsers.js';
import { HEAD_BYTES, judgeContent } from './content.js';

export interface UploadLimits {
  /** The body's bytes in all. */
  readonly maxBodyBytes: number;
  readonly maxParts: number;
  /** An ordinary field's bytes (MAX_BODY_BYTES, a JSON body's limit). */
  readonly maxFieldBytes: number;
  /** A file's bytes in any field (FILES_MAX_BYTES): each field's own maxBytes is bounded by it. */
  readonly maxFileBytes: number;
}

export interface UploadTarget {
  readonly storage: FileStorage;
  /** The file field a part's name names, or undefined (then it is refused as an unknown file). */
  rulesOf(name: string): CappedRules | undefined;
  /** The largest maxBytes of the file fields (what the parser itself stops a file part at). */
  readonly largestFile: number;
  /** The folder keys are made in (the table's name). */
  readonly prefix: string;
  /** Keys stored so far: the write removes them if it fails. */
  readonly stored: string[];
}

export function isMultipart(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]!.trim().toLowerCase() === 'multipart/form-data';
}

/** A refused body is read on up to this many times the cap (then the connection is closed), as the protocol stage drains others. */
export const DRAINED_LIMITS = 4;

const tooLarge = (message: string, details?: ErrorDetails): ApiError => new ApiError(413, 'payload_too_large', message, details);

/** A random key, never the client's file name; it starts with the time it was made (base 36 milliseconds), which a sweep reads. */
const newKey = (prefix: string): string => `${prefix.replace(/[^A-Za-z0-9_-]/g, '_') || 'files'}/${Date.now().toString(36)}-${randomBytes(18).toString('base64url')}`;

/** When the object a key names was stored (milliseconds), where the key says. */
export function storedAt(key: string): number | undefined {
  const time = /\/([0-9a-z]{1,10})-[^/]*$/.exec(key)?.[1];
  return time === undefined ? undefined : parseInt(time, 36);
}

/** The stream's first `size` bytes (fewer when it ends first), the stream paused after them. */
function readHead(stream: Readable, size: number): Promise<{ head: Buffer; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const finish = (ended: boolean): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', reject);
      stream.pause();
      resolve({ head: Buffer.concat(chunks), ended });
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= size) finish(false);
    };
    const onEnd = (): void => finish(true);
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', reject);
  });
}

/**
 * One file judged by its first bytes and stored under a new key (pushed to `target.stored`) as it
 * streams; on refusal (FieldError, or a 413 ApiError over maxBytes) the rest of it is drained, so
 * a multipart body reads on.
 */
export async function storeFile(file: Readable, fileName: string, rules: CappedRules, target: Pick<UploadTarget, 'storage' | 'prefix' | 'stored'>): Promise<StoredFile> {
  // What the storage reads: the file's bytes, counted against maxBytes on their way, and a stream of
  // its own, which the storage may destroy (a parser's file stream destroyed stops the whole body).
  // Fed by push, not a PassThrough's write and transform: one stream's work per chunk, not two.
  let body: Readable | undefined;
  try {
    const { head, ended } = await readHead(file, Math.min(HEAD_BYTES, rules.maxBytes + 1));
    if (head.length > rules.maxBytes) throw tooLarge('A file is too large.');
    const judged = await judgeContent(head, rules);
    const key = newKey(target.prefix);
    let size = head.length;
    body = new Readable({ read: () => void file.resume() });
    body.push(head);
    if (ended) body.push(null);
    else {
      const into = body;
      file.on('data', (chunk: Buffer) => {
        // Destroyed (over the limit, or the storage failed): the rest of the file is read and dropped.
        if (into.destroyed) return;
        size += chunk.length;
        if (size > rules.maxBytes) into.destroy(tooLarge('A file is too large.'));
        else if (!into.push(chunk)) file.pause();
      });
      // A body cut short (over its limit, or malformed) destroys the file with an error: the stored object is then abandoned.
      file.once('error', (error) => into.destroy(error));
      // The chunk that filled the head may have been the file's last: its end was then told while the head was judged.
      if (file.readableEnded) into.push(null);
      else file.once('end', () => into.push(null));
      file.resume();
    }
    const stored = await target.storage.put(key, body, judged.contentType);
    target.stored.push(key);
    const name = fileName.slice(0, 255);
    return { key, name, size: stored.size, content_type: judged.contentType, ...(judged.width !== undefined && { width: judged.width, height: judged.height }) };
  } finally {
    // Stored or failed, the storage reads no more of it: what is left of the file is dropped, never waited on.
    body?.destroy();
    file.resume();
  }
}

/**
 * The body's ordinary fields (as a form, read into `form`, which holds those read so far if the
 * body is refused) and its files, stored. Over a limit: 413; a file its field refuses: 400 naming
 * the field; a malformed body: 400. Resolves only once the whole body is read.
 */
export function parseMultipart(request: FastifyRequest, limits: UploadLimits, target: UploadTarget, form = new URLSearchParams()): Promise<{ form: URLSearchParams; files: Record<string, UploadedFile> }> {
  const declared = Number(request.headers['content-length']);
  if (declared > limits.maxBodyBytes) {
    return dropRest(request.raw, DRAINED_LIMITS * limits.maxBodyBytes).then(() => {
      throw tooLarge(`The body is larger than ${limits.maxBodyBytes} bytes.`);
    });
  }
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: request.headers,
        defParamCharset: 'utf8',
        limits: { fieldSize: limits.maxFieldBytes, parts: limits.maxParts, fileSize: target.largestFile + 1, headerPairs: 20 },
      });
    } catch (error) {
      void dropRest(request.raw, DRAINED_LIMITS * limits.maxBodyBytes).then(() => reject(parseError(`Malformed multipart body: ${(error as Error).message}`)));
      return;
    }
    const transferred = fileTransfer();
    const files: Record<string, UploadedFile> = {};
    const seen = new Set<string>();
    const details = emptyDetails();
    const tasks: Promise<void>[] = [];
    let failure: unknown;
    const fail = (error: unknown): void => {
      failure ??= error;
    };
    let received = 0;
    const raw = request.raw;
    // A client gone before its body ended: the parser stops, destroying the file being stored.
    let aborted = false;
    const onClose = (): void => {
      // An injected request (light-my-request) never sets `complete`: its end is `readableEnded`.
      if (raw.complete || raw.readableEnded) return;
      aborted = true;
      parser.destroy(new Error('the client closed the connection before the body ended'));
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limits.maxBodyBytes) {
        fail(tooLarge(`The body is larger than ${limits.maxBodyBytes} bytes.`));
        raw.unpipe(parser);
        parser.destroy();
        settle();
      }
    };
    parser.on('field', (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated) fail(tooLarge(`A field is larger than ${limits.maxFieldBytes} bytes.`, { [name]: [`Ensure this field has at most ${limits.maxFieldBytes} bytes.`] }));
      else form.append(name, value);
    });
    parser.on('file', (name, file, info) => {
      const rules = target.rulesOf(name);
      // A browser sends an empty part with no file name for a file input left empty: nothing sent.
      if (!rules || !info.filename || seen.has(name) || failure !== undefined) {
        if (!rules) details[name] = ['Not a file field.'];
        else if (info.filename && seen.has(name)) details[name] = ['Send one file in this field.'];
        file.resume();
        return;
      }
      seen.add(name);
      tasks.push(
        storeFile(file, info.filename, rules, target).then(
          (stored) => {
            files[name] = new UploadedFile(stored);
          },
          (error: unknown) => {
            if (error instanceof FieldError) details[name] = error.messages;
            else if (error instanceof ApiError && error.status === 413) fail(tooLarge(`A file is larger than this field allows (${rules.maxBytes} bytes).`, { [name]: [`Ensure this file has at most ${rules.maxBytes} bytes.`] }));
            else fail(error instanceof ApiError || aborted ? error : uploadFailed(request, error));
          },
        ),
      );
    });
    for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) parser.on(limit, () => fail(tooLarge(`Send at most ${limits.maxParts} parts.`)));
    parser.on('error', (error: Error) => {
      fail(parseError(`Malformed multipart body: ${error.message}`));
      raw.unpipe(parser);
      settle();
    });
    let settled = false;
    function settle(): void {
      if (settled) return;
      settled = true;
      raw.off('data', onData);
      raw.off('close', onClose);
      void Promise.all([...tasks, dropRest(raw, DRAINED_LIMITS * limits.maxBodyBytes)]).then(() => {
        transferred();
        if (failure === undefined && Object.keys(details).length > 0) failure = validationFailed(details);
        if (failure !== undefined) reject(failure as Error);
        else {
          try {
            resolve({ form: checkedForm(form), files });
          } catch (error) {
            reject(error as Error);
          }
        }
      });
    }
    parser.on('close', settle);
    raw.on('data', onData);
    raw.once('close', onClose);
    raw.pipe(parser);
  });
}

/**
 * The rest of a refused body read and dropped before it is answered, so the client, which may still
 * be sending, reads the answer and may send its next request on the connection; past `most` more
 * bytes the connection is closed instead.
 */
export function dropRest(raw: IncomingMessage, most: number): Promise<void> {
  return new Promise((resolve) => {
    // An injected request (light-my-request: tests, the test kit) never sets `complete`: its end is `readableEnded`.
    if (raw.complete || raw.readableEnded || raw.destroyed) return resolve();
    let dropped = 0;
    raw.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      // The request's destroy ends its connection (and an in-process request's, which has no socket of its own).
      if (dropped > most) raw.destroy();
    });
    raw.once('end', () => resolve());
    raw.once('close', () => resolve());
    raw.resume();
  });
}

/** A storage failure: logged, answered as the server's error (the upload itself was fine). */
function uploadFailed(request: FastifyRequest, error: unknown): unknown {
  request.log.error({ err: error }, 'storing an upload failed');
  return error;
}
