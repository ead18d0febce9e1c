/**
 * On a SQLite file, every list read runs on a reader thread, not only the ones that match LIKE
 * patterns: while one user runs the slowest filters the RealWorld example allows (filters across
 * its many-to-many tags and its favourites) as fast as their own throttle lets them, a bystander's
 * cheap request is answered about as fast as on an idle server. Run against the built server
 * (dist/), with its default throttles, as a user starts it.
 */
import SQLite from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type SpawnedServer } from '../support/spawned-server.js';

const ARTICLES = 100_000;
/** Requests each phase of the bystander's measure: well within THROTTLE_USER's default 1000/min for the whole test. */
const SAMPLES = 150;

let server: SpawnedServer;
const tokens: Record<string, string> = {};

const register = async (username: string) => {
  const answer = await fetch(`${server.url}/api/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user: { username, email: `${username}@example.com`, password: `${username}-password-1` } }),
  });
  expect(answer.status).toBe(201);
  tokens[username] = ((await answer.json()) as { user: { token: string } }).user.token;
};

const get = async (username: string, path: string) => {
  const answer = await fetch(server.url + path, { headers: { authorization: `Token ${tokens[username]}` } });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  server = await startServer({ appArgs: ['--app', 'examples/realworld/app.ts'] });
  await register('slow');
  await register('bystander');
  // Seeded straight into the file, written by the bystander, in one transaction: the API would take minutes (and the throttle).
  const database = new SQLite(join(server.folder, 'db.sqlite3'));
  const insert = database.prepare('INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at) VALUES (?, ?, ?, ?, 2, ?, ?)');
  const tag = database.prepare('INSERT INTO tags (name) VALUES (?)');
  const link = database.prepare('INSERT INTO articles_tags (article_id, tag_id) VALUES (?, ?)');
  database.transaction(() => {
    const names = [...Array.from({ length: 100 }, (_, i) => `tag-${i}`), ...Array.from({ length: 7 }, (_, i) => `topic-${i}`), 'common'];
    const tagIds = new Map(names.map((name) => [name, Number(tag.run(name).lastInsertRowid)]));
    for (let i = 0; i < ARTICLES; i++) {
      const at = new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString();
      const article = Number(insert.run(`article-${i}`, `Article ${i}`, 'About a thing', `Body of article ${i}`, at, at).lastInsertRowid);
      for (const name of [`tag-${i % 100}`, `topic-${i % 7}`, 'common']) link.run(article, tagIds.get(name));
    }
  })();
  database.close();
}, 120_000);
afterAll(() => server?.stop());

/** The median time of `SAMPLES` requests for one article, one after another (a little apart, so the slow user's reads run between them). */
async function bystanderMedian(): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    const { status } = await get('bystander', `/api/articles/article-${(i * 997) % ARTICLES}`);
    times.push(performance.now() - started);
    expect(status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

describe('the slowest filters on a large SQLite table', () => {
  it('answer correctly, and a list read right after a write sees it', async () => {
    const { body: tagged } = await get('slow', '/api/articles?tag=tag-42&limit=1');
    expect(tagged.articlesCount).toBe(ARTICLES / 100);
    const created = await fetch(`${server.url}/api/articles`, {
      method: 'POST',
      headers: { authorization: `Token ${tokens.slow}`, 'content-type': 'application/json' },
      body: JSON.stringify({ article: { title: 'Fresh', description: 'Just written', body: 'Now.', tagList: ['only-here'] } }),
    });
    expect(created.status).toBe(201);
    const { body: fresh } = await get('slow', '/api/articles?tag=only-here');
    expect(fresh).toMatchObject({ articlesCount: 1, articles: [{ slug: 'fresh', tagList: ['only-here'] }] });
    const { body: byAuthor } = await get('slow', '/api/articles?author=slow');
    expect(byAuthor).toMatchObject({ articlesCount: 1, articles: [{ slug: 'fresh' }] });
  });

  it("leave a bystander's requests as fast as on an idle server while one user runs them back to back", async () => {
    const idle = await bystanderMedian();

    // One user, one request at a time, each joining every article to its tags (and counting them),
    // or every article for a favourite across a relation: the filters Conduit's clients send.
    let running = true;
    let slowRequests = 0;
    const slow = (async () => {
      const paths = ['/api/articles?tag=absent', '/api/articles?favorited=bystander', '/api/articles?tag=common&offset=99000'];
      while (running) {
        const { status } = await get('slow', paths[slowRequests % paths.length]!);
        expect(status).toBe(200);
        slowRequests++;
      }
    })();
    // The slow user's reads under way before the measure starts.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const loaded = await bystanderMedian();
    running = false;
    await slow;

    expect(slowRequests).toBeGreaterThan(5);
    expect(loaded).toBeLessThan(2 * idle);
  }, 60_000);
});
