/**
 * A real S3 API for the tests: s3rver (the maintained @20minutes fork, a
 * devDependency, so `npm ci` brings it and nothing downloads at run time),
 * in this process, on 127.0.0.1 at a port the system picks, keeping its
 * objects in a fresh temporary folder. It checks SigV4 signatures (headers
 * and presigned query strings) against its one account, S3RVER/S3RVER.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface S3rver {
  configureBuckets(): Promise<void>;
  callback(): (request: IncomingMessage, response: ServerResponse) => void;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rver;
const S3rver = createRequire(import.meta.url)('@20minutes/s3rver') as S3rverClass;

export interface S3TestServer {
  /** FILES_STORAGE's bucket; created empty at start. */
  readonly bucket: string;
  /** The environment a FileStorage needs to reach this server (FILES_S3_* and AWS_*). */
  readonly env: Record<string, string>;
  /** Request bytes the server has read from its connections so far (headers included). */
  receivedBytes(): number;
  /** Calls `listener` with each request's method and path (undefined: stop). */
  onRequest(listener: ((method: string, url: string) => void) | undefined): void;
  stop(): Promise<void>;
}

/**
 * Requests whose signature s3rver computes wrongly, though the SDK signs them as S3 itself checks
 * them: a bucket's own path with its trailing slash (`GET /bucket/?list-type=2`), and query values
 * with `!'()*` (an RFC 5987 `filename*=UTF-8''...` in a presigned Content-Disposition), which it
 * encodes with encodeURIComponent rather than SigV4's RFC 3986. Only these skip the signature check.
 */
function misjudged(url: string): boolean {
  const parsed = new URL(url, 'http://s3.test');
  if (/^\/[^/]+\/?$/.test(parsed.pathname)) return true;
  return [...parsed.searchParams].some(([name, value]) => /[!'()*]/.test(name + value));
}

export async function startS3Server(bucket = 'restfold-test'): Promise<S3TestServer> {
  const folder = mkdtempSync(join(tmpdir(), 'restfold-s3-'));
  const options = { silent: true, directory: folder, vhostBuckets: false, configureBuckets: [{ name: bucket }] };
  // Two views of one folder: the strict one answers every request it can judge.
  const strict = new S3rver(options);
  const lenient = new S3rver({ ...options, allowMismatchedSignatures: true });
  await strict.configureBuckets();
  const [strictHandler, lenientHandler] = [strict.callback(), lenient.callback()];
  let listener: ((method: string, url: string) => void) | undefined;
  const server = createServer((request, response) => {
    listener?.(request.method ?? '', request.url ?? '');
    (misjudged(request.url ?? '/') ? lenientHandler : strictHandler)(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  let closedBytes = 0;
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => {
      open.delete(socket);
      closedBytes += socket.bytesRead;
    });
  });
  return {
    bucket,
    env: {
      FILES_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      FILES_S3_REGION: 'us-east-1',
      FILES_S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    onRequest: (next) => {
      listener = next;
    },
    receivedBytes: () => [...open].reduce((sum, socket) => sum + socket.bytesRead, closedBytes),
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
