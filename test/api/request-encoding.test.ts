/**
 * A request body's Content-Encoding: gzip, deflate and br are decoded, bounded by MAX_BODY_BYTES
 * (a bomb stops at the limit: 413, never the memory it would fill); bytes that are no such coding
 * are a 400; any other coding a 415. Never are compressed bytes read as JSON.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let admin: TestUser;

beforeAll(async () => {
  api = await startApi({ MAX_BODY_BYTES: '65536' });
  admin = await api.user('admin', { superuser: true });
});
afterAll(() => api.close());

const create = (body: Buffer, encoding: string) =>
  api.app
    .inject({
      method: 'POST',
      url: '/api/v1/users/',
      headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json', 'content-encoding': encoding },
      payload: body,
    })
    .then((response) => ({ status: response.statusCode, json: response.json() as Record<string, unknown> }));

let counter = 0;
const newUser = () => Buffer.from(JSON.stringify({ username: `enc${(counter += 1)}`, password: 'pw' }));

describe('a request body with a Content-Encoding', () => {
  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
    ['GZip', gzipSync],
    ['identity', (bytes: Buffer) => bytes],
  ])('is decoded from %s', async (encoding, encode) => {
    const reply = await create(encode(newUser()), encoding);
    expect(reply.status).toBe(201);
    expect(reply.json.username).toBe(`enc${counter}`);
  });

  it('answers 413 for a bomb: a few compressed bytes past the limit once decoded', async () => {
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"username": "bomb", "password": "pw", "email": "'), Buffer.alloc(50_000_000, 'a'), Buffer.from('"}')]));
    expect(bomb.length).toBeLessThan(65536);
    const reply = await create(bomb, 'gzip');
    expect(reply.status).toBe(413);
    expect(reply.json.code).toBe('payload_too_large');
  });

  it('answers 400 for bytes that are not the coding named, and 415 for a coding it does not decode', async () => {
    const garbled = await create(newUser(), 'gzip');
    expect(garbled.status).toBe(400);
    expect(garbled.json).toMatchObject({ code: 'parse_error', error: 'The body is not valid gzip.' });
    for (const encoding of ['compress', 'zstd', 'gzip, br']) {
      const reply = await create(gzipSync(newUser()), encoding);
      expect(reply.status).toBe(415);
      expect(reply.json.code).toBe('unsupported_media_type');
    }
  });
});
