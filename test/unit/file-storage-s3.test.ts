/**
 * The S3 FileStorage against a real S3 API (s3rver, started here on
 * 127.0.0.1): the shared FileStorage contract, then what only S3 has:
 * settings, the bucket prefix, credentials kept out of errors, paging.
 */
import { Readable } from 'node:stream';
import { S3Client, PutObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openFileStorage } from '../../src/store/files/open.js';
import { s3Storage } from '../../src/store/files/s3.js';
import { parseS3Settings, s3Redirects } from '../../src/store/files/s3-settings.js';
import { fileStorageContract, keysUnder } from '../support/file-storage-contract.js';
import { startS3Server, type S3TestServer } from '../support/s3-server.js';

let server: S3TestServer;
beforeAll(async () => {
  server = await startS3Server();
});
afterAll(async () => {
  await server?.stop();
});

/** A client of the test server's own, to see the bucket as it is rather than through the storage. */
function rawClient(): S3Client {
  return new S3Client({
    endpoint: server.env.FILES_S3_ENDPOINT,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
}

async function bucketKeys(prefix = ''): Promise<string[]> {
  const client = rawClient();
  try {
    const page = await client.send(new ListObjectsV2Command({ Bucket: server.bucket, Prefix: prefix }));
    return (page.Contents ?? []).map((object) => object.Key!).sort();
  } finally {
    client.destroy();
  }
}

describe('S3 storage: the FileStorage contract', () => {
  fileStorageContract(
    async () => ({
      storage: await openFileStorage({ url: `s3://${server.bucket}/contract`, env: server.env }),
      takenBytes: () => server.receivedBytes(),
    }),
    { presigns: true },
  );
});

describe('S3 storage: where objects go', () => {
  it('keeps objects under the URL’s prefix, and lists keys without it', async () => {
    const storage = s3Storage(`s3://${server.bucket}/tenants/one/`, server.env);
    try {
      await storage.put('files/abc', Readable.from([Buffer.from('hello')]), 'text/plain');
      expect(await bucketKeys('tenants/')).toEqual(['tenants/one/files/abc']);
      expect(await keysUnder(storage, '')).toEqual(['files/abc']);
    } finally {
      await storage.close();
    }
  });

  it('does not list (so a sweep never removes) objects under the prefix that it could not have made', async () => {
    const client = rawClient();
    try {
      await client.send(new PutObjectCommand({ Bucket: server.bucket, Key: 'shared/readme.txt', Body: 'someone else’s' }));
      await client.send(new PutObjectCommand({ Bucket: server.bucket, Key: 'shared/ours', Body: 'x' }));
    } finally {
      client.destroy();
    }
    const storage = s3Storage(`s3://${server.bucket}/shared`, server.env);
    try {
      expect(await keysUnder(storage, '')).toEqual(['ours']);
    } finally {
      await storage.close();
    }
  });

  it('fails loudly, rather than answering “no such file”, when the bucket is missing', async () => {
    const storage = s3Storage('s3://no-such-bucket/x', server.env);
    try {
      await expect(storage.remove('a')).rejects.toThrow(/DeleteObject in bucket no-such-bucket failed: 404 NoSuchBucket/);
      await expect(storage.put('a', Readable.from([Buffer.from('x')]), 'text/plain')).rejects.toThrow(/PutObject in bucket no-such-bucket failed: 404 NoSuchBucket/);
      await expect(keysUnder(storage, '')).rejects.toThrow(/ListObjectsV2 in bucket no-such-bucket failed: 404 NoSuchBucket/);
    } finally {
      await storage.close();
    }
  });

  it('lists every key across the pages S3 answers in', async () => {
    // s3rver cannot page (its continuation tokens use DES, which Node's OpenSSL 3 refuses), so the
    // pages come from a stand-in for ListObjectsV2, asserting the tokens the storage passes back.
    const pages = [
      { keys: ['paged/a1', 'paged/a2'], token: 't1' },
      { keys: ['paged/b1', 'paged/not ours'], token: 't2' },
      { keys: ['paged/c1'], token: undefined },
    ];
    const asked: (string | undefined)[] = [];
    const send = vi.spyOn(S3Client.prototype, 'send').mockImplementation(async (command: unknown) => {
      const input = (command as ListObjectsV2Command).input;
      expect(command).toBeInstanceOf(ListObjectsV2Command);
      expect(input.Prefix).toBe('paged/');
      asked.push(input.ContinuationToken);
      const page = pages[asked.length - 1]!;
      return { Contents: page.keys.map((Key) => ({ Key })), IsTruncated: page.token !== undefined, NextContinuationToken: page.token };
    });
    const storage = s3Storage(`s3://${server.bucket}/paged`, server.env);
    try {
      expect(await keysUnder(storage, '')).toEqual(['a1', 'a2', 'b1', 'c1']);
      expect(asked).toEqual([undefined, 't1', 't2']);
    } finally {
      send.mockRestore();
      await storage.close();
    }
  });

  it('asks the store to abort a multipart upload whose body failed', async () => {
    const requests: string[] = [];
    const storage = s3Storage(`s3://${server.bucket}/aborted`, server.env);
    try {
      server.onRequest((method, url) => requests.push(`${method} ${url}`));
      let sent = 0;
      const body = new Readable({
        read() {
          if (sent >= 12 * 1_048_576) return void this.destroy(new Error('cut off'));
          sent += 65_536;
          this.push(Buffer.alloc(65_536, 1));
        },
      });
      await expect(storage.put('big', body, 'application/octet-stream')).rejects.toThrow('cut off');
    } finally {
      server.onRequest(undefined);
      await storage.close();
    }
    const upload = requests.find((request) => /^POST \/restfold-test\/aborted\/big\?uploads/.test(request));
    expect(upload).toBeDefined();
    expect(requests.some((request) => /^DELETE \/restfold-test\/aborted\/big\?.*uploadId=/.test(request))).toBe(true);
    expect(requests.some((request) => /^POST \/restfold-test\/aborted\/big\?.*uploadId=/.test(request))).toBe(false);
    expect(await bucketKeys('aborted/')).toEqual([]);
  });
});

describe('S3 storage: uploads at once', () => {
  it('sends at most FILES_S3_UPLOADS uploads at once: the next starts when one ends', async () => {
    const storage = s3Storage(`s3://${server.bucket}/turns`, { ...server.env, FILES_S3_UPLOADS: '1' });
    const requests: string[] = [];
    server.onRequest((method, url) => requests.push(`${method} ${url}`));
    try {
      const first = new Readable({ read() {} });
      first.push(Buffer.from('first'));
      const firstPut = storage.put('one', first, 'text/plain');
      const secondPut = storage.put('two', Readable.from([Buffer.from('second')]), 'text/plain');
      // The second waits its turn however long the first's body takes.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(requests.filter((request) => request.includes('/turns/'))).toEqual([]);
      first.push(null);
      expect(await firstPut).toEqual({ size: 5 });
      expect(await secondPut).toEqual({ size: 6 });
      expect(requests.findIndex((request) => request.includes('/turns/one'))).toBeLessThan(requests.findIndex((request) => request.includes('/turns/two')));
    } finally {
      server.onRequest(undefined);
      await storage.close();
    }
  });
});

describe('S3 storage: credentials', () => {
  it('keeps the secret and the key id out of a failure’s message and fields', async () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const keyId = 'AKIAIOSFODNN7EXAMPLE';
    const storage = s3Storage(`s3://${server.bucket}/denied`, { ...server.env, AWS_ACCESS_KEY_ID: keyId, AWS_SECRET_ACCESS_KEY: secret });
    try {
      const failures = await Promise.all([
        storage.put('x', Readable.from([Buffer.from('bytes')]), 'text/plain').catch((error: unknown) => error),
        storage.open('x').catch((error: unknown) => error),
        storage.remove('x').catch((error: unknown) => error),
        keysUnder(storage, '').catch((error: unknown) => error),
      ]);
      for (const failure of failures) {
        expect(failure).toBeInstanceOf(Error);
        const text = `${(failure as Error).message} ${JSON.stringify(failure)} ${String((failure as Error).stack)}`;
        expect(text).toMatch(/S3 \w+ in bucket restfold-test failed: 403 InvalidAccessKeyId|S3 HeadObject in bucket restfold-test failed: 403/);
        expect(text).not.toContain(secret);
        expect(text).not.toContain(keyId);
      }
    } finally {
      await storage.close();
    }
  });
});

describe('S3 settings', () => {
  const env = { AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret' };

  it('reads the bucket, the prefix and the FILES_S3_* settings', () => {
    expect(parseS3Settings('s3://my-bucket/uploads/avatars/', { ...env, FILES_S3_ENDPOINT: 'http://127.0.0.1:9000', FILES_S3_FORCE_PATH_STYLE: 'true', FILES_S3_REGION: 'eu-west-3' })).toEqual({
      bucket: 'my-bucket',
      prefix: 'uploads/avatars',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-3',
      forcePathStyle: true,
      uploads: 2,
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
    });
    expect(parseS3Settings('s3://my.bucket', { AWS_REGION: 'us-west-2' })).toEqual({
      bucket: 'my.bucket',
      prefix: '',
      endpoint: undefined,
      region: 'us-west-2',
      forcePathStyle: false,
      uploads: 2,
      credentials: undefined,
    });
    expect(parseS3Settings('s3://bucket', { FILES_S3_UPLOADS: '6' }).uploads).toBe(6);
  });

  it.each([
    ['s3://', {}, /bucket name/],
    ['s3://UPPER/x', {}, /bucket name/],
    ['s3:/bucket/x', {}, /bucket name/],
    ['s3://bucket/../x', {}, /prefix/],
    ['s3://bucket/a//b', {}, /prefix/],
    ['s3://bucket/a b', {}, /prefix/],
    ['s3://bucket/x', { FILES_S3_ENDPOINT: 'minio:9000' }, /FILES_S3_ENDPOINT/],
    ['s3://bucket/x', { FILES_S3_FORCE_PATH_STYLE: 'maybe' }, /FILES_S3_FORCE_PATH_STYLE must be true or false/],
    ['s3://bucket/x', { FILES_S3_UPLOADS: '0' }, /FILES_S3_UPLOADS must be an integer from 1/],
    ['s3://bucket/x', { AWS_ACCESS_KEY_ID: 'id' }, /set together/],
  ])('refuses %s with %j', (url, settings, message) => {
    expect(() => parseS3Settings(url, settings)).toThrow(message);
  });

  it('reads FILES_S3_REDIRECT, off by default', () => {
    expect(s3Redirects({})).toBe(false);
    expect(s3Redirects({ FILES_S3_REDIRECT: 'true' })).toBe(true);
    expect(s3Redirects({ FILES_S3_REDIRECT: 'off' })).toBe(false);
    expect(() => s3Redirects({ FILES_S3_REDIRECT: 'sometimes' })).toThrow(/FILES_S3_REDIRECT must be true or false/);
  });
});
