/**
 * On a SQLite file, every list read runs on a reader thread: the slowest filters the RealWorld
 * example allows (across its many-to-many tags and its favourites) answer correctly on 100 000
 * articles, and a list read right after a write sees it. Run against the built server (dist/) as a
 * user starts it. How fast a bystander is answered meanwhile is timing: bench/sqlite-bystander.mjs.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedArticles } from '../../bench/realworld-articles.mjs';
import { startServer, type SpawnedServer } from '../support/spawned-server.js';

const ARTICLES = 100_000;

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
  seedArticles(join(server.folder, 'db.sqlite3'), ARTICLES);
}, 120_000);
afterAll(() => server?.stop());

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

  it('answer the filters across favourites and the deep pages', async () => {
    const { body: favorited } = await get('slow', '/api/articles?favorited=bystander');
    expect(favorited).toEqual({ articlesCount: 0, articles: [] });
    const { body: deep } = await get('slow', '/api/articles?tag=common&offset=99990');
    expect(deep.articlesCount).toBe(ARTICLES);
    expect((deep.articles as { slug: string }[]).map((article) => article.slug)).toEqual(Array.from({ length: 10 }, (_, i) => `article-${9 - i}`));
  });
});
