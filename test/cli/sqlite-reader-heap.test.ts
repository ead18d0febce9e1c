/**
 * A SQLite reader thread's memory stays bounded however many reads it runs: pages of large records,
 * read over and over, leave its JavaScript heap (`restfold_sqlite_reader_heap_bytes`) within a few
 * tens of MiB. Run against the built server (dist/), as a user starts it.
 */
import SQLite from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type SpawnedServer } from '../support/spawned-server.js';

let server: SpawnedServer;
let token: string;

/** Records of 20 KB: a page of 100 is 2 MB of rows, which outlive the young generation's collections while it is built. */
const ARTICLES = 500;
const BODY = 'x'.repeat(20_000);

beforeAll(async () => {
  server = await startServer({ env: { THROTTLE_ANON: 'off', THROTTLE_USER: 'off', METRICS: 'true', SQLITE_READER_THREADS: '1' } });
  server.cli(['createuser', '--username', 'admin', '--password', 'admin-password-1', '--superuser']);
  token = server.cli(['token', 'create', '--username', 'admin']).trim();
  const database = new SQLite(join(server.folder, 'db.sqlite3'));
  const insert = database.prepare('INSERT INTO articles (title, body, author_id, created_at) VALUES (?, ?, 1, ?)');
  database.transaction(() => {
    for (let i = 0; i < ARTICLES; i++) insert.run(`Article ${i}`, `${i} ${BODY}`, new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString());
  })();
  database.close();
}, 60_000);
afterAll(() => server?.stop());

const page = async (number: number) => {
  const reply = await fetch(`${server.url}/api/v1/articles/?page_size=100&page=${number}`, { headers: { authorization: `Bearer ${token}` } });
  expect(reply.status).toBe(200);
  return (await reply.json()) as { results: unknown[] };
};
const metric = async (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await (await fetch(`${server.url}/metrics`)).text())?.[1]);

describe("a SQLite reader thread's heap", () => {
  it('stays bounded over many reads of large pages', async () => {
    for (let read = 0; read < 300; read++) expect((await page(1 + (read % 5))).results).toHaveLength(100);
    // A thread measures its heap at most once a second: a read after that reports it as it is now.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await page(1);
    expect(await metric('restfold_sqlite_reader_threads')).toBe(1);
    // Left to V8 its young generation alone grew to 32 MiB; bounded, the whole heap stays under 24 MiB.
    expect(await metric('restfold_sqlite_reader_heap_bytes')).toBeLessThan(24 * 2 ** 20);
  }, 120_000);
});
