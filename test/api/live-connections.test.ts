/**
 * Streams cannot lock out ordinary requests (SECURITY.md): with the default settings, 30 accounts
 * opening 5 streams each against one process take at most LIVE_MAX_STREAMS (half of
 * MAX_CONNECTIONS) of its connections; the streams past that are refused with 503 in the error
 * envelope, and /healthz and a list still answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';
import { openEvents, type EventStreamClient } from '../support/event-stream.js';
import { startServer, type SpawnedServer } from '../support/spawned-server.js';

const ACCOUNTS = 30;
const STREAMS_EACH = 5;
/** The default LIVE_MAX_STREAMS: half of the default MAX_CONNECTIONS (128 at 1 MiB bodies). */
const BOUND = 64;

let server: SpawnedServer;
let database: TestDatabase | undefined;
const streams: EventStreamClient[] = [];

beforeAll(async () => {
  database = testDialect === 'postgres' ? await createTestDatabase() : undefined;
  // Throttles off: the accounts are made and logged in quickly; nothing else is changed from the defaults.
  server = await startServer({ env: { THROTTLE_USER: 'off', THROTTLE_ANON: 'off', THROTTLE_LOGIN: 'off', ...(database && { DATABASE_URL: database.url }) } });
}, 60_000);
afterAll(async () => {
  streams.forEach((stream) => stream.close());
  await server?.stop();
  await database?.drop();
});

async function call(method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; json: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary shapes
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(token && { authorization: `Bearer ${token}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

describe('streams against the connection cap', () => {
  it('refuse the streams past the bound with 503 and Retry-After, and leave ordinary requests answering', async () => {
    server.cli(['createuser', '--username', 'root', '--password', 'root-password', '--superuser']);
    const root = server.cli(['token', 'create', '--username', 'root']).trim();
    const tokens = await Promise.all(
      Array.from({ length: ACCOUNTS }, async (_, n) => {
        const username = `subscriber${n}`;
        expect((await call('POST', '/api/v1/users/', root, { username, email: `${username}@example.com`, password: 'subscriber-password' })).status).toBe(201);
        const obtained = await call('POST', '/api/v1/auth/token/', undefined, { username, password: 'subscriber-password' });
        expect(obtained.status).toBe(200);
        return obtained.json.token as string;
      }),
    );
    const statuses: number[] = [];
    for (const token of tokens) {
      for (let n = 0; n < STREAMS_EACH; n++) {
        const stream = await openEvents(`${server.url}/api/v1/articles/events/`, { authorization: `Bearer ${token}` });
        if (stream.status === 200) streams.push(stream);
        else stream.close();
        statuses.push(stream.status);
      }
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(BOUND);
    expect(statuses.filter((status) => status === 503)).toHaveLength(ACCOUNTS * STREAMS_EACH - BOUND);
    // One more refused, read whole: the usual error envelope, with the request id a 5xx carries.
    const refused = await fetch(`${server.url}/api/v1/articles/events/`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${tokens[0]}` } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused.json()).toMatchObject({ code: 'service_unavailable', error: expect.any(String), request_id: expect.any(String) });
    expect((await call('GET', '/healthz')).status).toBe(200);
    const list = await call('GET', '/api/v1/articles/', tokens[ACCOUNTS - 1]);
    expect(list.status).toBe(200);
    expect(list.json.results).toEqual([]);
  }, 120_000);
});
