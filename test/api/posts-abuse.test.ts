/**
 * Surface B against an anonymous flood (issue 18, item 1): bounded content, creates and updates
 * throttled per client address, and a list streamed from the database as the client reads it.
 */
import { get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KyselyPlugin } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { defineApp, sendJsonArray } from '../../src/framework/index.js';
import type { StoreDatabase } from '../../src/store/connection/database.js';
import { startApi, type TestApi } from '../support/api.js';
import { withPublicNotes } from './pipeline-support.js';

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(env: Record<string, string> = {}, definition?: Parameters<typeof startApi>[1]): Promise<TestApi> {
  api = await startApi(env, definition);
  return api;
}

/** A request from a given client address, as the service sees it. */
async function from(address: string, method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) {
  const response = await api!.app.inject({
    method,
    url,
    remoteAddress: address,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.statusCode, headers: response.headers, body: response.body };
}

const post = { title: 'Hello', content: 'First post.', published: true };

describe('posts: content is bounded', () => {
  it.each([
    ['ASCII', 'a'],
    ['four-byte (astral)', '😀'],
  ])('accepts 100 000 characters of content (%s) and refuses 100 001 with 400 naming content', async (_name, char) => {
    const { request } = await start();
    const exact = await request('POST', '/api/posts', { body: { ...post, content: char.repeat(100_000) } });
    expect(exact.status).toBe(201);
    expect(exact.json.content).toBe(char.repeat(100_000));

    const over = await request('POST', '/api/posts', { body: { ...post, content: char.repeat(100_001) } });
    expect(over.status).toBe(400);
    expect(over.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(over.body).toBe('content: Ensure this field has no more than 100000 characters.');

    const update = await request('PUT', `/api/posts/${exact.json.id}`, { body: { content: char.repeat(100_001) } });
    expect(update.status).toBe(400);
    expect(update.body).toBe('content: Ensure this field has no more than 100000 characters.');
    const list = await request('GET', '/api/posts');
    expect(list.json.map((stored: { content: string }) => stored.content.length)).toEqual([char.repeat(100_000).length]);
  });
});

describe('posts: creates and updates are throttled per client address', () => {
  it('counts creates and updates against THROTTLE_ANON, then answers 429 as plain text with Retry-After', async () => {
    await start({ THROTTLE_ANON: '3/min' });
    const created = await from('10.0.0.1', 'POST', '/api/posts', post);
    expect(created.status).toBe(201);
    expect(created.headers['ratelimit-limit']).toBe('3');
    expect(created.headers['ratelimit-remaining']).toBe('2');
    const id = JSON.parse(created.body).id;
    expect((await from('10.0.0.1', 'PUT', `/api/posts/${id}`, { title: 'Edited' })).headers['ratelimit-remaining']).toBe('1');
    expect((await from('10.0.0.1', 'POST', '/api/posts', post)).headers['ratelimit-remaining']).toBe('0');

    for (const [method, url] of [['POST', '/api/posts'], ['PUT', `/api/posts/${id}`]] as const) {
      const over = await from('10.0.0.1', method, url, { ...post, title: 'Too many' });
      expect(over.status).toBe(429);
      expect(over.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(over.body).toMatch(/throttled/);
      const retryAfter = Number(over.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(over.headers['ratelimit-limit']).toBe('3');
      expect(over.headers['ratelimit-remaining']).toBe('0');
      expect(Number(over.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    }
    // Nothing the throttled requests carried was stored; reads are not counted.
    const list = await from('10.0.0.1', 'GET', '/api/posts');
    expect(list.status).toBe(200);
    expect(JSON.parse(list.body).map((stored: { title: string }) => stored.title)).toEqual(['Hello', 'Edited']);
    expect((await from('10.0.0.1', 'GET', `/api/posts/${id}`)).status).toBe(200);
    // Another address has its own window.
    expect((await from('10.0.0.2', 'POST', '/api/posts', post)).status).toBe(201);
  });

  it('counts posts in a window of their own, apart from the collections', async () => {
    await start({ THROTTLE_ANON: '1/min' }, withPublicNotes());
    expect((await from('10.0.0.1', 'POST', '/api/posts', post)).status).toBe(201);
    expect((await from('10.0.0.1', 'POST', '/api/posts', post)).status).toBe(429);
    expect((await from('10.0.0.1', 'GET', '/api/v1/notes/')).status).toBe(200);
    expect((await from('10.0.0.1', 'GET', '/api/v1/notes/')).status).toBe(429);
  });
});

/** Published posts of `size` characters, written straight into the table (a flood's aftermath). */
async function seedPosts(count: number, size: number): Promise<void> {
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  for (let first = 0; first < count; first += 500) {
    const rows = Array.from({ length: Math.min(500, count - first) }, (_, offset) => {
      const at = new Date(start + (first + offset) * 1000).toISOString();
      return { title: `post ${first + offset}`, content: 'x'.repeat(size), published: 1, created_at: at, updated_at: at };
    });
    await api!.database.db.insertInto('posts').values(rows).execute();
  }
}

interface Opened {
  readonly response: IncomingMessage;
  readonly first: Buffer;
}

/** Starts GET `path` over a real socket; resolves once its first bytes arrived, with the response paused. */
async function openPaused(path: string): Promise<Opened> {
  await api!.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = api!.app.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      response.once('data', (first: Buffer) => {
        response.pause();
        resolve({ response, first });
      });
    }).on('error', reject);
  });
}

/** The rest of the body, after its first bytes. */
const bodyOf = ({ response, first }: Opened): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [first];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
    response.resume();
  });

/** The app's database, counting the SELECTs it sends through the query builder. */
function countingSelects(counter: { selects: number }): (database: StoreDatabase) => StoreDatabase {
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      if (node.kind === 'SelectQueryNode') counter.selects += 1;
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return (database) => ({ ...database, db: database.db.withPlugin(plugin) });
}

// More than the socket buffers between server and client hold, so a client that stops reading stalls the server.
const FLOOD = { count: 3000, size: 10_000 };

describe('posts: the list is streamed from the database', () => {
  it('answers 200 with a JSON array of every published post in order, and HEAD with no body', async () => {
    await start();
    await seedPosts(450, 100);
    const reply = await api!.app.inject({ method: 'GET', url: '/api/posts' });
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    const titles = (JSON.parse(reply.body) as { title: string }[]).map(({ title }) => title);
    expect(titles).toEqual(Array.from({ length: 450 }, (_, index) => `post ${449 - index}`));
    const head = await api!.app.inject({ method: 'HEAD', url: '/api/posts' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
  });

  it('reads posts only as fast as the client takes them, and serves /healthz meanwhile', async () => {
    await start();
    await seedPosts(FLOOD.count, FLOOD.size);
    const opened = await openPaused('/api/posts');
    expect(opened.response.statusCode).toBe(200);
    expect(opened.response.headers['content-length']).toBeUndefined();
    // The client reads nothing more: the server fills the socket's buffers and waits.
    await sleep(300);
    expect((await api!.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    // Posts deleted now are past what the server has read: a streamed list never shows them.
    await api!.database.db.deleteFrom('posts').execute();
    const posts = JSON.parse(await bodyOf(opened)) as { title: string }[];
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.length).toBeLessThan(FLOOD.count / 2);
    expect(posts[0]!.title).toBe(`post ${FLOOD.count - 1}`);
  });

  it('stops reading the database when the client goes away, and keeps serving', async () => {
    const counter = { selects: 0 };
    api = await startApi({}, undefined, { appDatabase: countingSelects(counter) });
    await seedPosts(FLOOD.count, FLOOD.size);
    const { response } = await openPaused('/api/posts');
    response.destroy();
    await sleep(300);
    const afterLeaving = counter.selects;
    await sleep(300);
    expect(counter.selects).toBe(afterLeaving);
    // A list of 3000 posts takes 15 batches: the server stopped well before.
    expect(afterLeaving).toBeLessThan(10);
    expect(api.database.poolStats()?.waiting ?? 0).toBe(0);
    const list = await api.app.inject({ method: 'GET', url: '/api/posts' });
    expect(list.statusCode).toBe(200);
    expect(JSON.parse(list.body)).toHaveLength(FLOOD.count);
  });
});

describe('posts: a list that fails before its first byte', () => {
  it('answers the usual plain-text 503 with Retry-After', async () => {
    const outage = new Error('connection refused');
    const failing: KyselyPlugin = {
      transformQuery: ({ node }) => {
        if (node.kind === 'SelectQueryNode') throw outage;
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    // Reads fail whichever way they are sent: built by Kysely, or compiled once and run by `run`.
    api = await startApi({}, undefined, {
      appDatabase: (database) => ({
        ...database,
        db: database.db.withPlugin(failing),
        run: (text, parameters, options) => (/^(select|with)\b/.test(text) ? Promise.reject(outage) : database.run(text, parameters, options)),
        isUnavailable: (error) => error === outage,
      }),
    });
    const reply = await api.app.inject({ method: 'GET', url: '/api/posts' });
    expect(reply.statusCode).toBe(503);
    expect(reply.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(reply.headers['retry-after']).toBeDefined();
  });
});

describe('sendJsonArray: an error after the first byte', () => {
  it('cuts the connection (never a complete-looking body) and logs the error', async () => {
    const lines: string[] = [];
    async function* failing() {
      for (let index = 0; index < 100; index++) yield { index, padding: 'x'.repeat(10_000) };
      throw new Error('the database went away');
    }
    const definition = defineApp({
      collections: [],
      routes: (app) => {
        app.get('/items', (_request, reply) => sendJsonArray(reply, failing()));
      },
    });
    const logStream = new Writable({
      write(line: Buffer, _encoding, done) {
        lines.push(line.toString('utf8'));
        done();
      },
    });
    api = await startApi({ LOG_LEVEL: 'error' }, definition, { logStream });
    const opened = await openPaused('/items');
    expect(opened.response.statusCode).toBe(200);
    const outcome = await bodyOf(opened).then(
      (body) => `ended: ${body.length}`,
      (error: Error) => `failed: ${error.message}`,
    );
    expect(outcome).toBe('failed: aborted');
    expect(lines.join('\n')).toMatch(/the database went away/);
  });
});
