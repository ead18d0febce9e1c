/**
 * SIGTERM drains before it stops (docs/deploying.md, Rolling deploys): /readyz turns 503 at once,
 * in the API's error envelope, while clients sending on kept-alive connections go on being served,
 * each reply saying `Connection: close`; then the server stops accepting, lets a request in flight
 * finish, ends live streams with a `retry:`, and exits 0. SIGINT stops at once.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { openEvents } from '../support/event-stream.js';
import { eventually, send, sleep, spawnServer, userWithToken, type SpawnedServer } from '../postgres/spawned.js';

const folder = mkdtempSync(join(tmpdir(), 'restfold-drain-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A request through `agent` (kept-alive connections, as a load balancer's). */
function call(agent: Agent, port: number, method: string, path: string, body?: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest({ host: '127.0.0.1', port, method, path, agent, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }));
    });
    sent.on('error', reject);
    sent.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** Whether a new connection to `port` is refused: the server no longer accepts. */
const refused = (port: number): Promise<true | undefined> =>
  send(port, 'GET', '/healthz').then(() => undefined, (error: NodeJS.ErrnoException) => (error.code === 'ECONNREFUSED' ? true : undefined));

/** Clients at once, each sending on its own kept-alive connection. */
const CLIENTS = 4;
/** Requests each client still sends once /readyz has said 503, as a load balancer does before its check takes the server out. */
const AFTER_NOTICE = 10;

it('drains on SIGTERM: /readyz 503 at once, every request still served with Connection: close, the one in flight finished, streams ended with retry:, exit 0', async () => {
  const url = `sqlite:${join(folder, 'drain.sqlite3')}`;
  const { token } = await userWithToken(url, 'reader');
  // A drain far longer than the test needs: the clients stop sending well within it, as a balancer would.
  server = await spawnServer({ DATABASE_URL: url, SHUTDOWN_DRAIN_MS: '4000', BODY_MIN_BYTES_PER_SECOND: '1' });
  const { port } = server;
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS + 1 });
  const stream = await openEvents(`http://127.0.0.1:${port}/api/v1/articles/events/`, { authorization: `Bearer ${token}` });
  expect(stream.status).toBe(200);
  // Proxies are told to pass events on as they come (docs/deploying.md, Taking a server out of rotation).
  expect([stream.headers['x-accel-buffering'], stream.headers['cache-control']]).toEqual(['no', 'no-cache, no-transform']);

  const replies: { reply: Reply; afterNotice: boolean }[] = [];
  let noticed = false;
  const client = async (index: number): Promise<void> => {
    for (let after = 0; after < AFTER_NOTICE; ) {
      const afterNotice = noticed;
      const reply = index % 2 === 0 ? await call(agent, port, 'POST', '/api/posts', { title: `post ${index}`, content: 'x' }) : await call(agent, port, 'GET', '/api/posts');
      replies.push({ reply, afterNotice });
      if (afterNotice) after += 1;
    }
  };
  const clients = Array.from({ length: CLIENTS }, (_, index) => client(index));
  await eventually(async () => (replies.length >= 20 ? true : undefined), 'the clients to be under way');

  server.kill('SIGTERM');
  // The bound the issue names: within 100 ms of the signal, the process says it is going.
  await sleep(100);
  const ready = await call(agent, port, 'GET', '/readyz');
  noticed = true;
  expect(ready.status).toBe(503);
  expect(Number(ready.headers['retry-after'])).toBeGreaterThan(0);
  expect(JSON.parse(ready.body)).toEqual({ error: expect.stringMatching(/shutting down/), code: 'service_unavailable', request_id: ready.headers['x-request-id'] });
  expect(ready.headers.connection).toBe('close');

  // A request begun during the drain, its body not all sent until the server has stopped accepting.
  const body = JSON.stringify({ title: 'in flight', content: 'y'.repeat(1000) });
  const inFlight = new Promise<Reply>((resolve, reject) => {
    const slow = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/api/posts', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }));
    });
    slow.on('error', reject);
    slow.write(body.slice(0, 100));
    void eventually(() => refused(port), 'the server to stop accepting').then(() => slow.end(body.slice(100)), reject);
  });

  await Promise.all(clients);
  const statuses = replies.map(({ reply }) => reply.status);
  expect(statuses.filter((status) => status !== 200 && status !== 201)).toEqual([]);
  // Before the signal connections were kept; every reply after /readyz said 503 closed its connection.
  expect(replies.filter(({ afterNotice }) => afterNotice)).toHaveLength(CLIENTS * AFTER_NOTICE);
  expect(replies.filter(({ afterNotice, reply }) => afterNotice && reply.headers.connection !== 'close')).toEqual([]);
  expect(replies[0]!.reply.headers.connection).toBe('keep-alive');

  const finished = await inFlight;
  expect(finished.status).toBe(201);
  expect(JSON.parse(finished.body)).toMatchObject({ title: 'in flight' });
  // The stream was ended by the server, asking its client to come back (the first retry: opened it).
  await stream.ended();
  expect(stream.retries).toHaveLength(2);
  expect(await server.exited).toBe(0);
  expect(server.output().split('\n').filter((line) => line.includes('"level":50'))).toEqual([]);
  agent.destroy();
}, 60_000);

it('stops at once on SIGINT, as Ctrl-C in a terminal', async () => {
  server = await spawnServer({ DATABASE_URL: `sqlite:${join(folder, 'interrupt.sqlite3')}`, SHUTDOWN_DRAIN_MS: '60000' });
  server.kill('SIGINT');
  expect(await server.exited).toBe(0);
  expect(server.output()).toMatch(/"signal":"SIGINT","drain_ms":0,"msg":"shutting down"/);
});

it('passes the drain to every worker under WORKERS=2, and exits 0 once they all have', async () => {
  server = await spawnServer({ DATABASE_URL: `sqlite:${join(folder, 'workers.sqlite3')}`, WORKERS: '2', SHUTDOWN_DRAIN_MS: '3000' });
  const { port } = server;
  /** The workers that answered /readyz with `status`, asked on new connections (which the cluster hands out in turn). */
  const workersAnswering = async (status: number): Promise<Set<string>> => {
    const answered = new Set<string>();
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const reply = await send(port, 'GET', '/readyz');
      if (reply.status === status) answered.add(String(reply.headers['x-worker-id']));
    }
    return answered;
  };
  await eventually(async () => ((await workersAnswering(200)).size === 2 ? true : undefined), 'both workers to serve');
  server.kill('SIGTERM');
  await eventually(async () => ((await workersAnswering(503)).size === 2 ? true : undefined), 'both workers to drain');
  expect(await server.exited).toBe(0);
}, 60_000);
