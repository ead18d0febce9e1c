/**
 * examples/realworld (the Conduit backend, as far as it can be declared), in-process on SQLite or
 * PostgreSQL: Conduit's paths under /api without slashes, its envelopes, `Token` credentials and
 * 422 errors; profiles and following, articles by slug with favourites and the feed, comments under
 * their article, tags; and an article list that takes as many statements for twenty articles, with
 * their authors, tags, favourites and who follows whom, as for one. Users come from the test
 * database (Conduit's own registration and login cannot be declared yet: the example's README).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import conduit from '../../examples/realworld/app.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { recording } from '../support/statements.js';

let api: TestApi;
let jake: TestUser;
let anne: TestUser;
let reader: TestUser;
const sent: string[] = [];

beforeAll(async () => {
  api = await startApi({}, conduit, { appDatabase: recording(sent) });
  jake = await api.user('jake');
  anne = await api.user('anne');
  reader = await api.user('reader');
});
afterAll(() => api.close());
beforeEach(() => {
  sent.length = 0;
});

/** A request as Conduit's clients send it: `Authorization: Token …`. */
const call = (method: string, path: string, user?: TestUser, body?: unknown) =>
  api.request(method, `/api${path}`, { body, headers: user ? { authorization: `Token ${user.token}` } : {} });

const publish = async (author: TestUser, title: string, tagList: string[] = []) => {
  const reply = await call('POST', '/articles', author, { article: { title, description: `about ${title}`, body: `all of ${title}`, tagList } });
  expect(reply.status).toBe(201);
  return reply.json.article;
};

describe('articles', () => {
  it('are created in the article envelope: slug from the title, sorted tags, the author as a profile', async () => {
    const article = await publish(jake, 'How to train your dragon', ['training', 'dragons', 'training']);
    expect(article).toStrictEqual({
      slug: 'how-to-train-your-dragon',
      title: 'How to train your dragon',
      description: 'about How to train your dragon',
      body: 'all of How to train your dragon',
      tagList: ['dragons', 'training'],
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      favorited: false,
      favoritesCount: 0,
      author: { username: 'jake', bio: null, image: null, following: false },
    });
    const read = await call('GET', `/articles/${article.slug}`);
    expect(read).toMatchObject({ status: 200, json: { article } });
  });

  it('get another slug when their title is taken, and keep theirs when it is their own', async () => {
    const first = await publish(jake, 'Same old title');
    const second = await publish(anne, 'Same old title');
    expect([first.slug, second.slug]).toStrictEqual(['same-old-title', 'same-old-title-2']);
    expect((await call('GET', '/articles/same-old-title-2')).json.article.author.username).toBe('anne');
    const kept = await call('PUT', '/articles/same-old-title-2', anne, { article: { title: 'Same old title', body: 'again' } });
    expect(kept.json.article).toMatchObject({ slug: 'same-old-title-2', body: 'again' });
  });

  it('are listed without their body; one article shows it', async () => {
    const article = await publish(jake, 'Listed without body');
    const { body, ...listed } = article;
    expect(body).toBe('all of Listed without body');
    const page = (await call('GET', '/articles?limit=100')).json;
    expect(page.articles.find((row: { slug: string }) => row.slug === article.slug)).toStrictEqual(listed);
  });

  it('answers invalid input 422 with Conduit’s errors, naming the field', async () => {
    const missing = await call('POST', '/articles', jake, { article: { description: 'd', body: 'b' } });
    expect(missing).toMatchObject({ status: 422, json: { errors: { body: [expect.stringMatching(/^title /)] } } });
    expect((await call('POST', '/articles', jake, { title: 'no envelope' })).status).toBe(422);
    expect((await call('POST', '/articles', jake, '{"article": {')).status).toBe(422);
    const badLimit = await call('GET', '/articles?limit=0');
    expect(badLimit).toMatchObject({ status: 422, json: { errors: { body: [expect.stringMatching(/^limit /)] } } });
  });

  it('are changed (PUT with some fields) and deleted by their author only; the slug follows the title', async () => {
    const { slug } = await publish(anne, 'Draft title');
    expect((await call('PUT', `/articles/${slug}`, jake, { article: { body: 'mine now' } })).status).toBe(403);
    expect((await call('PUT', `/articles/${slug}`, undefined, { article: { body: 'anyone' } })).status).toBe(401);
    // Conduit has no PATCH.
    expect((await call('PATCH', `/articles/${slug}`, anne, { article: { body: 'patched' } })).status).toBe(405);
    const changed = await call('PUT', `/articles/${slug}`, anne, { article: { title: 'Final title' } });
    expect(changed).toMatchObject({ status: 200, json: { article: { slug: 'final-title', title: 'Final title', description: 'about Draft title' } } });
    expect((await call('GET', `/articles/${slug}`)).status).toBe(404);
    expect((await call('DELETE', '/articles/final-title', jake)).status).toBe(403);
    expect((await call('DELETE', '/articles/final-title', anne)).status).toBe(204);
    expect((await call('GET', '/articles/final-title')).status).toBe(404);
  });

  it('are favourited and unfavourited idempotently, at one path, by signed-in users', async () => {
    const { slug } = await publish(jake, 'Worth a star');
    expect((await call('POST', `/articles/${slug}/favorite`)).status).toBe(401);
    for (let round = 0; round < 2; round++) {
      expect(await call('POST', `/articles/${slug}/favorite`, reader)).toMatchObject({ status: 200, json: { article: { slug, favorited: true, favoritesCount: 1 } } });
    }
    expect((await call('GET', `/articles/${slug}`, anne)).json.article).toMatchObject({ favorited: false, favoritesCount: 1 });
    for (let round = 0; round < 2; round++) {
      expect(await call('DELETE', `/articles/${slug}/favorite`, reader)).toMatchObject({ status: 200, json: { article: { favorited: false, favoritesCount: 0 } } });
    }
    expect((await call('POST', '/articles/no-such-article/favorite', reader)).status).toBe(404);
  });

  it('are listed newest first with limit and offset, under articles and articlesCount', async () => {
    const author = await api.user('pager');
    const slugs: string[] = [];
    for (let i = 1; i <= 5; i++) slugs.push((await publish(author, `Paged post ${i}`)).slug);
    const page = await call('GET', '/articles?limit=2&offset=1');
    expect(page.status).toBe(200);
    expect(Object.keys(page.json).sort()).toStrictEqual(['articles', 'articlesCount']);
    expect(page.json.articles.map((article: { slug: string }) => article.slug)).toStrictEqual([slugs[3], slugs[2]]);
    expect(page.json.articlesCount).toBeGreaterThanOrEqual(5);
  });

  it('take the Token keyword only: a Bearer credential is not Conduit’s, and leaves the caller anonymous', async () => {
    const { slug } = await publish(jake, 'Keyword check');
    await call('POST', `/articles/${slug}/favorite`, reader);
    const bearer = await api.request('GET', `/api/articles/${slug}`, { token: reader.token });
    expect(bearer).toMatchObject({ status: 200, json: { article: { favorited: false } } });
    expect((await call('GET', `/articles/${slug}`, reader)).json.article.favorited).toBe(true);
    expect((await api.request('GET', `/api/articles/${slug}`, { headers: { authorization: `Token ${reader.token}x` } })).status).toBe(401);
  });
});

describe('profiles and the feed', () => {
  it('follow and unfollow at one path; following shows in profiles, articles and the feed', async () => {
    const star = await api.user('star');
    const fan = await api.user('fan');
    const { slug } = await publish(star, 'Star post');
    await publish(jake, 'Not followed');
    expect((await call('GET', '/profiles/star')).json).toStrictEqual({ profile: { username: 'star', bio: null, image: null, following: false } });
    expect((await call('POST', '/profiles/star/follow')).status).toBe(401);
    for (let round = 0; round < 2; round++) {
      expect(await call('POST', '/profiles/star/follow', fan)).toMatchObject({ status: 200, json: { profile: { username: 'star', following: true } } });
    }
    expect((await call('GET', '/profiles/star', fan)).json.profile.following).toBe(true);
    expect((await call('GET', '/profiles/star', reader)).json.profile.following).toBe(false);
    expect((await call('GET', `/articles/${slug}`, fan)).json.article.author).toStrictEqual({ username: 'star', bio: null, image: null, following: true });

    const feed = await call('GET', '/articles/feed', fan);
    expect(feed).toMatchObject({ status: 200, json: { articlesCount: 1, articles: [{ slug, author: { following: true } }] } });
    expect((await call('GET', '/articles/feed')).status).toBe(401);

    expect(await call('DELETE', '/profiles/star/follow', fan)).toMatchObject({ status: 200, json: { profile: { following: false } } });
    expect((await call('GET', '/articles/feed', fan)).json).toStrictEqual({ articles: [], articlesCount: 0 });
    expect((await call('GET', '/profiles/nobody-here')).status).toBe(404);
    expect((await call('POST', '/profiles/nobody-here/follow', fan)).status).toBe(404);
  });
});

describe('comments', () => {
  it('live under their article: listed to anyone, deleted by their author only, 404 elsewhere', async () => {
    const first = await publish(jake, 'Comment on me');
    const second = await publish(jake, 'Another thread');
    const created = await call('POST', `/articles/${first.slug}/comments`, anne, { comment: { body: 'Thank you!' } });
    // The spec's 200 for a new comment.
    expect(created.status).toBe(200);
    expect(created.json).toStrictEqual({
      comment: { id: expect.any(Number), body: 'Thank you!', createdAt: expect.any(String), updatedAt: expect.any(String), author: { username: 'anne', bio: null, image: null, following: false } },
    });
    const { id } = created.json.comment;
    expect((await call('GET', `/articles/${first.slug}/comments`)).json).toStrictEqual({ comments: [created.json.comment] });
    expect((await call('GET', `/articles/${second.slug}/comments`)).json).toStrictEqual({ comments: [] });
    expect((await call('POST', `/articles/${first.slug}/comments`, anne, { comment: { body: '' } })).status).toBe(422);
    expect((await call('POST', '/articles/no-such-article/comments', anne, { comment: { body: 'lost' } })).status).toBe(404);

    expect((await call('DELETE', `/articles/${second.slug}/comments/${id}`, anne)).status).toBe(404);
    expect((await call('DELETE', `/articles/${first.slug}/comments/${id}`, jake)).status).toBe(403);
    expect((await call('DELETE', `/articles/${first.slug}/comments/${id}`, anne)).status).toBe(204);
    expect((await call('GET', `/articles/${first.slug}/comments`)).json).toStrictEqual({ comments: [] });
  });
});

describe('operations Conduit does not have', () => {
  it('are absent: 404, or 405 where the path answers another method', async () => {
    const { slug } = await publish(jake, 'Absent operations');
    expect((await call('GET', '/profiles')).status).toBe(404);
    expect((await call('GET', `/articles/feed/${slug}`, jake)).status).toBe(404);
    expect((await call('POST', '/tags', jake, { tag: { name: 'new' } })).status).toBe(405);
    const comment = (await call('POST', `/articles/${slug}/comments`, jake, { comment: { body: 'One' } })).json.comment;
    const read = await call('GET', `/articles/${slug}/comments/${comment.id}`);
    expect(read.status).toBe(405);
    expect(read.headers.allow).toBe('DELETE, OPTIONS');
    expect(Object.keys((await call('GET', '')).json)).toStrictEqual(['users', 'articles', 'tags']);
  });

  it('are not in the OpenAPI document, whose operations answer as Conduit\'s do', async () => {
    const { paths } = (await call('GET', '/schema')).json;
    const methods = (path: string) => Object.keys(paths[path] ?? {});
    expect(methods('/api/articles/{slug}')).toStrictEqual(['get', 'put', 'delete']);
    expect(methods('/api/articles/{parent}/comments/{id}')).toStrictEqual(['delete']);
    expect(methods('/api/profiles/{username}')).toStrictEqual(['get']);
    expect(methods('/api/tags')).toStrictEqual(['get']);
    expect(methods('/api/articles/feed')).toStrictEqual(['get']);
    expect(paths['/api/profiles']).toBeUndefined();
    expect(Object.keys(paths['/api/articles/{parent}/comments'].post.responses)).toContain('200');
  });

  it('documents tagList as at most 10 tag names', async () => {
    const { schemas } = (await call('GET', '/schema')).json.components;
    for (const name of ['Article', 'ArticleListItem', 'ArticleCreate', 'ArticlePartialUpdate']) {
      expect(schemas[name].properties.tagList, name).toStrictEqual({ type: 'array', items: { type: 'string', maxLength: 100, minLength: 1 }, maxItems: 10 });
    }
  });
});

describe('tags', () => {
  it('are listed once each, as names, to anyone', async () => {
    await publish(jake, 'Tagged one', ['tags-alpha', 'tags-beta']);
    await publish(anne, 'Tagged two', ['tags-beta', 'tags-gamma']);
    const reply = await call('GET', '/tags');
    expect(reply.status).toBe(200);
    const tags: string[] = reply.json.tags;
    expect(new Set(tags).size).toBe(tags.length);
    expect(tags.filter((tag) => tag.startsWith('tags-'))).toStrictEqual(['tags-alpha', 'tags-beta', 'tags-gamma']);
  });
});

describe('the article list’s filters', () => {
  it('find by tag, author and who favourited, together; a name nothing has is an empty list; the filters are in the OpenAPI document', async () => {
    const [ben, cat] = [await api.user('ben'), await api.user('cat')];
    const { slug: cats } = await publish(ben, 'Ben on cats', ['filter-cats']);
    await publish(ben, 'Ben on dogs', ['filter-dogs']);
    await publish(cat, 'Cat on cats', ['filter-cats']);
    await call('POST', `/articles/${cats}/favorite`, cat);
    const slugsOf = async (query: string) => {
      const reply = await call('GET', `/articles?${query}`);
      expect(reply.status).toBe(200);
      expect(reply.json.articlesCount).toBe(reply.json.articles.length);
      return reply.json.articles.map((article: { slug: string }) => article.slug);
    };
    expect(await slugsOf('tag=filter-cats')).toEqual(['cat-on-cats', 'ben-on-cats']);
    expect(await slugsOf('tag=filter-cats&author=ben')).toEqual(['ben-on-cats']);
    expect(await slugsOf('favorited=cat')).toEqual(['ben-on-cats']);
    expect(await slugsOf('favorited=cat&tag=filter-dogs')).toEqual([]);
    expect(await slugsOf('author=nobody')).toEqual([]);
    const parameters = (await api.request('GET', '/api/schema')).json.paths['/api/articles'].get.parameters.map((parameter: { name: string }) => parameter.name);
    expect(parameters).toEqual(expect.arrayContaining(['tag', 'author', 'favorited', 'limit', 'offset']));
  });
});

describe('the article list’s statements', () => {
  it('are as many for twenty articles, with authors, tags, favourites and following, as for one', async () => {
    const writers = [await api.user('writer1'), await api.user('writer2'), await api.user('writer3')];
    const counter = await api.user('counter');
    for (let i = 0; i < 20; i++) {
      const { slug } = await publish(writers[i % 3]!, `Counted ${i}`, [`count-${i % 4}`, 'counted']);
      if (i % 2 === 0) await call('POST', `/articles/${slug}/favorite`, counter);
    }
    await call('POST', '/profiles/writer1/follow', counter);

    const statementsFor = async (limit: number) => {
      sent.length = 0;
      const reply = await call('GET', `/articles?limit=${limit}`, counter);
      expect(reply.status).toBe(200);
      expect(reply.json.articles).toHaveLength(limit);
      return { statements: sent.length, articles: reply.json.articles };
    };
    const one = await statementsFor(1);
    const twenty = await statementsFor(20);
    expect(twenty.statements).toBe(one.statements);
    // The page's articles carry everything that depends on the reader, read in those statements.
    expect(twenty.articles.some((article: { favorited: boolean }) => article.favorited)).toBe(true);
    expect(twenty.articles.filter((article: { author: { following: boolean } }) => article.author.following).map((article: { author: { username: string } }) => article.author.username)).toContain('writer1');
    expect(twenty.articles.every((article: { tagList: string[] }) => article.tagList.includes('counted'))).toBe(true);
  });
});
