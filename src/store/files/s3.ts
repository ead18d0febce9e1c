/**
 * FileStorage on an S3-compatible bucket (AWS S3, MinIO, R2, ...) through the
 * AWS SDK. Settings: s3-settings.ts.
 */
import { Transform, pipeline, type Readable } from 'node:stream';
import {
  S3Client,
  GetObjectCommand,
  HeadObjectCommand,
  DeleteObjectCommand,
  ListObjectsV2Command,
  type GetObjectCommandOutput,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { checkedKey, type FileStorage, type OpenedObject, type StoredObject } from './storage.js';
import { parseS3Settings, type S3Settings } from './s3-settings.js';

/**
 * An upload holds at most (QUEUE_SIZE + 1) parts of PART_BYTES in memory at once, whatever the
 * file's size: one being filled from the request, one being sent. 5 MiB is S3's smallest part; at
 * 10,000 parts that allows files up to ~48 GiB. How many uploads are sent at once is the
 * settings' `uploads` (the rest wait, their requests paused): together they bound the memory.
 */
const PART_BYTES = 5 * 1_048_576;
const QUEUE_SIZE = 1;

/** At most `size` holders at once; the others wait in order. */
function slots(size: number): { take(): Promise<void>; give(): void } {
  let free = size;
  const waiting: (() => void)[] = [];
  return {
    async take() {
      if (free > 0) free -= 1;
      else await new Promise<void>((resolve) => waiting.push(resolve));
    },
    give() {
      const next = waiting.shift();
      if (next) next();
      else free += 1;
    },
  };
}

/** The store's status, name and message only: an SDK error's other fields can carry the key id or what was signed. */
class S3StorageError extends Error {
  constructor(operation: string, bucket: string, error: unknown, secrets: readonly string[]) {
    const failure = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    let text = `S3 ${operation} in bucket ${bucket} failed: ${failure.$metadata?.httpStatusCode ?? 'no response'} ${failure.name ?? 'Error'}: ${failure.message ?? ''}`;
    for (const secret of secrets) text = text.split(secret).join('***');
    super(text);
    this.name = 'S3StorageError';
  }
}

const isKey = (key: string): boolean => {
  try {
    return checkedKey(key) === key;
  } catch {
    return false;
  }
};

/** No such key: never a missing bucket, which must fail loudly rather than make every file look absent. */
const isNoSuchKey = (error: unknown): boolean => (error as { name?: string }).name === 'NoSuchKey';
/** HEAD answers carry no error code: any 404 reads as absent (a missing bucket shows on the other calls). */
const isHeadNotFound = (error: unknown): boolean => (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404;

function client(settings: S3Settings): S3Client {
  return new S3Client({
    region: settings.region,
    endpoint: settings.endpoint,
    forcePathStyle: settings.forcePathStyle,
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
    // The newer checksum trailers are not understood by every S3-compatible store; S3 accepts both.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // A store that stops answering (or a download whose reader stalls a minute) fails instead of holding a socket forever.
    requestHandler: { connectionTimeout: 10_000, socketTimeout: 60_000 },
  });
}

/** Counts the bytes that pass, so put can answer the size without asking the store again. */
function counter(): Transform & { bytes: number } {
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      stream.bytes += chunk.length;
      done(null, chunk);
    },
  }) as Transform & { bytes: number };
  stream.bytes = 0;
  return stream;
}

export function s3Storage(url: string, env: Readonly<Record<string, string | undefined>>): FileStorage {
  const settings = parseS3Settings(url, env);
  const s3 = client(settings);
  const { bucket } = settings;
  const sending = slots(settings.uploads);
  const secrets = [settings.credentials?.secretAccessKey, settings.credentials?.accessKeyId, settings.credentials?.sessionToken].filter(
    (secret): secret is string => !!secret,
  );
  const objectKey = (key: string): string => (settings.prefix ? `${settings.prefix}/${checkedKey(key)}` : checkedKey(key));
  const failed = (operation: string, error: unknown): S3StorageError => new S3StorageError(operation, bucket, error, secrets);

  async function send(key: string, body: Readable, contentType: string): Promise<StoredObject> {
    const Key = objectKey(key);
    const counted = counter();
    // pipeline destroys `counted` (and so fails the upload's read) when `body` fails, and `body` when `counted` is destroyed.
    pipeline(body, counted, () => {});
    const upload = new Upload({ client: s3, params: { Bucket: bucket, Key, Body: counted, ContentType: contentType }, partSize: PART_BYTES, queueSize: QUEUE_SIZE });
    try {
      // A failed multipart upload is aborted by Upload itself (its parts removed): no object appears under Key.
      await upload.done();
    } catch (error) {
      // The body's own failure (a client gone, a size limit) tells the caller more than the store's echo of it.
      const cut = body.errored ?? (body.destroyed && !body.readableEnded ? new Error('The file’s stream closed before its end.') : null);
      counted.destroy();
      throw cut ?? failed('PutObject', error);
    }
    return { size: counted.bytes };
  }

  return {
    kind: 's3',

    async put(key: string, body: Readable, contentType: string): Promise<StoredObject> {
      await sending.take();
      try {
        return await send(key, body, contentType);
      } finally {
        sending.give();
      }
    },

    async open(key: string): Promise<OpenedObject | null> {
      let size: number;
      try {
        size = (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(key) }))).ContentLength ?? 0;
      } catch (error) {
        if (isHeadNotFound(error)) return null;
        throw failed('HeadObject', error);
      }
      return {
        size,
        // Nothing is held open between the two requests: an object removed in between reads as null.
        async read(range) {
          let output: GetObjectCommandOutput;
          try {
            output = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }));
          } catch (error) {
            if (isNoSuchKey(error)) return null;
            throw failed('GetObject', error);
          }
          // In Node the SDK's body is the HTTP response itself, a Readable.
          return output.Body as Readable;
        },
        close() {},
      };
    },

    async remove(key: string): Promise<void> {
      try {
        await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
      } catch (error) {
        // S3 answers 204 for an absent key; some compatible stores say NoSuchKey.
        if (!isNoSuchKey(error)) throw failed('DeleteObject', error);
      }
    },

    async *list(prefix: string): AsyncIterable<string> {
      // `prefix` names whole segments: list('a') finds a/x, never ab/x.
      const under = (settings.prefix ? `${settings.prefix}/` : '') + (prefix ? `${checkedKey(prefix)}/` : '');
      const base = settings.prefix ? settings.prefix.length + 1 : 0;
      let ContinuationToken: string | undefined;
      do {
        let page;
        try {
          page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: under, ContinuationToken }));
        } catch (error) {
          throw failed('ListObjectsV2', error);
        }
        for (const object of page.Contents ?? []) {
          const key = object.Key?.slice(base);
          // Objects someone else put under the prefix are not ours to report (or to sweep away).
          if (key && isKey(key)) yield key;
        }
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },

    async presign(key, options): Promise<string> {
      const command = new GetObjectCommand({
        Bucket: bucket,
        Key: objectKey(key),
        ResponseContentType: options.contentType,
        ResponseContentDisposition: options.contentDisposition,
      });
      try {
        return await getSignedUrl(s3, command, { expiresIn: options.expiresIn });
      } catch (error) {
        throw failed('presign', error);
      }
    },

    async close(): Promise<void> {
      s3.destroy();
    },
  };
}
