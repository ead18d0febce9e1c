/**
 * A body over MAX_BODY_BYTES is answered 413 in a way an ordinary client reads: Node's own fetch,
 * still sending when the answer comes, gets the 413 and its JSON, not EPIPE or ECONNRESET, whether
 * the body's length is declared or it is chunked, on the API and on the posts routes alike; and
 * the server goes on answering. Against the built server in a process of its own, as a client meets it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type SpawnedServer } from '../support/spawned-server.js';

const LIMIT = 1_048_576;
let server: SpawnedServer;

beforeAll(async () => {
  server = await startServer({ env: { MAX_BODY_BYTES: String(LIMIT) } });
});
afterAll(() => server.stop());

/** A body of `size` bytes sent in chunks of 64 KiB, of no declared length. */
const chunked = (size: number): ReadableStream<Uint8Array> => {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const chunk = new Uint8Array(Math.min(65_536, size - sent)).fill(0x20);
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
};

const post = (path: string, body: BodyInit) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);

describe('a body over the limit', () => {
  it.each([
    ['twice the limit, of a declared length', '/api/v1/tags/', () => Buffer.alloc(2 * LIMIT, 0x20)],
    ['twice the limit, chunked', '/api/v1/tags/', () => chunked(2 * LIMIT)],
    ['eight times the limit, of a declared length', '/api/v1/tags/', () => Buffer.alloc(8 * LIMIT, 0x20)],
    ['twice the limit, on the posts routes', '/posts/', () => Buffer.alloc(2 * LIMIT, 0x20)],
  ])('%s: Node fetch reads 413 payload_too_large', async (_name, path, body) => {
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        const reply = await post(path, body());
        outcomes.push(`${reply.status} ${await reply.text()}`);
      } catch (error) {
        outcomes.push(String((error as { cause?: { code?: string } }).cause?.code ?? error));
      }
    }
    expect(new Set(outcomes.map((outcome) => outcome.split(' ')[0]))).toEqual(new Set(['413']));
    // Each client got the server's answer, and the server still answers.
    expect(outcomes[0]).toMatch(/payload_too_large|too large/i);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});
