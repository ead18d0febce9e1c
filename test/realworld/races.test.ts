/**
 * The RealWorld (Conduit) backend under concurrent requests: what one client may send several times
 * at once (a double-clicked button, a retried request, a second tab) answers as if sent one after
 * another. Same-title articles all get slugs of their own; favouriting and following are idempotent
 * whatever else runs at once. On PostgreSQL the requests run on parallel connections; on SQLite
 * its write transactions run one at a time, and the answers must be the same.
 * Runs on SQLite, or PostgreSQL with RESTFOLD_TEST_DB=postgres; needs `npm run build` first.
 */
import { describe, expect, it } from 'vitest';
import { createArticle, expectArticle, expectProfile, register, useConduit, type Article, type Reply } from './support.js';
import { statusCounts } from '../support/replies.js';

const call = useConduit();

/** How many replies had each status: `{ 200: 20 }`, shown whole when one differs. */

/** `count` requests made by `request(index)`, all sent at once. */
const atOnce = (count: number, request: (index: number) => Promise<Reply>): Promise<Reply[]> => Promise.all(Array.from({ length: count }, (_, index) => request(index)));

describe('concurrent same-title creates', () => {
  it('10 articles with one title at once: all 201, 10 distinct slugs starting with the title', async () => {
    const author = await register(call, 'prolific');
    // New tags, named in either order: each is made once, and no two creates wait for each other's.
    const article = (i: number) => ({ title: 'Concurrent Dragons', description: 'again', body: 'and again', tagList: i % 2 === 0 ? ['race-b', 'race-a'] : ['race-a', 'race-b'] });
    const replies = await atOnce(10, (i) => call('POST', '/articles', { token: author.token, body: { article: article(i) } }));
    expect(statusCounts(replies)).toEqual({ 201: 10 });
    const slugs = replies.map((reply) => expectArticle(reply, 201).slug);
    expect(new Set(slugs).size).toBe(10);
    for (const slug of slugs) expect(slug).toMatch(/^concurrent-dragons(-\d+)?$/);
    for (const reply of replies) expect(expectArticle(reply, 201).tagList).toEqual(['race-a', 'race-b']);
  });

  it('titles that may want one slug ("Twin", "Twin 2") at once: all 201, distinct slugs', async () => {
    const author = await register(call, 'twins');
    const replies = await atOnce(10, (i) => call('POST', '/articles', { token: author.token, body: { article: { title: i % 2 === 0 ? 'Twin' : 'Twin 2', description: 'd', body: 'b' } } }));
    expect(statusCounts(replies)).toEqual({ 201: 10 });
    expect(new Set(replies.map((reply) => expectArticle(reply, 201).slug)).size).toBe(10);
  });

  it('10 renames to one title at once: all 200, 10 distinct slugs', async () => {
    const author = await register(call, 'renamer');
    const created: Article[] = [];
    for (let i = 0; i < 10; i++) created.push(await createArticle(call, author, { title: `Draft ${i}` }));
    const replies = await atOnce(10, (i) => call('PUT', `/articles/${created[i]!.slug}`, { token: author.token, body: { article: { title: 'Final Title' } } }));
    expect(statusCounts(replies)).toEqual({ 200: 10 });
    const slugs = replies.map((reply) => expectArticle(reply).slug);
    expect(new Set(slugs).size).toBe(10);
    for (const slug of slugs) expect(slug).toMatch(/^final-title(-\d+)?$/);
  });
});

describe('concurrent favourites', () => {
  it('10 favourites of one article by one user at once: all 200, and it is favourited once', async () => {
    const author = await register(call, 'favauthor');
    const fan = await register(call, 'eagerfan');
    const { slug } = await createArticle(call, author, { title: 'Favourite me' });
    const replies = await atOnce(10, () => call('POST', `/articles/${slug}/favorite`, { token: fan.token }));
    expect(statusCounts(replies)).toEqual({ 200: 10 });
    for (const reply of replies) expect(expectArticle(reply)).toMatchObject({ favorited: true, favoritesCount: 1 });
    expect(expectArticle(await call('GET', `/articles/${slug}`, { token: fan.token }))).toMatchObject({ favorited: true, favoritesCount: 1 });
  });

  it('20 favourites and unfavourites mixed at once: all 200, each answering its own change, and at most one favourite stays', async () => {
    const author = await register(call, 'mixedauthor');
    const fan = await register(call, 'fickle');
    const { slug } = await createArticle(call, author, { title: 'Love me, love me not' });
    const replies = await atOnce(20, (i) => call(i % 2 === 0 ? 'POST' : 'DELETE', `/articles/${slug}/favorite`, { token: fan.token }));
    expect(statusCounts(replies)).toEqual({ 200: 20 });
    replies.forEach((reply, i) => expect(expectArticle(reply).favorited).toBe(i % 2 === 0));
    const { favorited, favoritesCount } = expectArticle(await call('GET', `/articles/${slug}`, { token: fan.token }));
    expect(favoritesCount).toBe(favorited ? 1 : 0);
  });
});

describe('concurrent follows', () => {
  it('10 follows of one profile by one user at once: all 200, and it is followed once', async () => {
    await register(call, 'celebrity');
    const follower = await register(call, 'keenfollower');
    const replies = await atOnce(10, () => call('POST', '/profiles/celebrity/follow', { token: follower.token }));
    expect(statusCounts(replies)).toEqual({ 200: 10 });
    for (const reply of replies) expect(expectProfile(reply).following).toBe(true);
    expect(expectProfile(await call('GET', '/profiles/celebrity', { token: follower.token })).following).toBe(true);
  });

  it('20 follows and unfollows mixed at once: all 200, each answering its own change', async () => {
    await register(call, 'starlet');
    const follower = await register(call, 'waverer');
    const replies = await atOnce(20, (i) => call(i % 2 === 0 ? 'POST' : 'DELETE', '/profiles/starlet/follow', { token: follower.token }));
    expect(statusCounts(replies)).toEqual({ 200: 20 });
    replies.forEach((reply, i) => expect(expectProfile(reply).following).toBe(i % 2 === 0));
  });
});
