/**
 * On a SQLite file, reads that run JavaScript for every row they scan (search, LIKE lookups) run
 * on a reader thread: however long one takes, the server keeps answering meanwhile. Run against
 * the built server (dist/), as a user starts it.
 */
import SQLite from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type SpawnedServer } from '../support/spawned-server.js';

let server: SpawnedServer;
let token: string;

const ARTICLES = 40_000;
const WORDS = 'the quick brown fox jumps over lazy dog while seven wizards quietly hex bold jackdaws near old stone walls'.split(' ');
/** Every word is in every body: each term is tested against each row's title and body. */
const SEARCH = WORDS.join('+');

beforeAll(async () => {
  server = await startServer({ env: { THROTTLE_ANON: 'off', THROTTLE_USER: 'off', METRICS: 'true' } });
  server.cli(['createuser', '--username', 'admin', '--password', 'admin-password-1', '--superuser']);
  token = server.cli(['token', 'create', '--username', 'admin']).trim();
  const database = new SQLite(join(server.folder, 'db.sqlite3'));
  const insert = database.prepare('INSERT INTO articles (title, body, author_id, created_at) VALUES (?, ?, 1, ?)');
  database.transaction(() => {
    for (let i = 0; i < ARTICLES; i++) insert.run(`Article ${i}`, `${WORDS.join(' ')} ${i}`, new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString());
  })();
  database.close();
}, 120_000);
afterAll(() => server?.stop());

const get = (path: string) => fetch(server.url + path, { headers: { authorization: `Bearer ${token}` } });

describe('reads that scan with LIKE, on a SQLite file', () => {
  it('are answered correctly, and see writes made just before', async () => {
    const created = await fetch(`${server.url}/api/v1/articles/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Zebra crossing', body: 'unique-marker' }),
    });
    expect(created.status).toBe(201);
    const found = await (await get('/api/v1/articles/?search=UNIQUE-marker')).json();
    expect(found.results.map((article: { title: string }) => article.title)).toEqual(['Zebra crossing']);
    const titled = await (await get('/api/v1/articles/?title__icontains=ARTICLE%201999&page_size=100')).json();
    expect(titled.count).toBe(11); // 1999 and 19990–19999
  });

  it('leave the event loop free: /healthz keeps answering while a long search runs', async () => {
    const answered: number[] = [];
    let searching = true;
    const polling = (async () => {
      while (searching) {
        await (await fetch(`${server.url}/healthz`)).arrayBuffer();
        answered.push(performance.now());
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    const search = await get(`/api/v1/articles/?search=${SEARCH}`);
    const finished = performance.now();
    searching = false;
    await polling;
    expect(search.status).toBe(200);
    expect((await search.json()).count).toBe(ARTICLES);
    // On the event loop, the count and the page each hold it for about half the search: no
    // /healthz answer comes in that long. Here the longest silence is a small part of the search.
    const during = [started, ...answered.filter((time) => time > started && time < finished), finished];
    const longestSilence = Math.max(...during.slice(1).map((time, index) => time - during[index]!));
    const duration = finished - started;
    expect(duration).toBeGreaterThan(150);
    expect(longestSilence).toBeLessThan(duration / 4);
  });

  it('are counted in /metrics: the threads running and their heaps, which the process heap metrics leave out', async () => {
    await get('/api/v1/articles/?search=unique-marker');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
    expect(value('restfold_sqlite_reader_threads')).toBeGreaterThanOrEqual(1);
    // A V8 runtime of its own: a few MiB at least, reported after each read.
    expect(value('restfold_sqlite_reader_heap_bytes')).toBeGreaterThan(2 ** 20);
  });
});
