/**
 * The RealWorld (Conduit) backend in examples/realworld, black-box over HTTP: articles, the feed,
 * favourites and tags. The contract is the public spec, gothinkster/realworld `api/openapi.yml`
 * (1.1.0; paths under `/api`), with the behaviours RealWorld's own API tests check
 * (`api/Conduit.postman_collection.json`) and the spec's pages on endpoints and errors. Operations
 * here: GetArticles (tag, author, favorited, limit, offset), GetArticlesFeed, CreateArticle,
 * GetArticle, UpdateArticle, DeleteArticle, CreateArticleFavorite, DeleteArticleFavorite, GetTags.
 * Runs on SQLite, or PostgreSQL with RESTFOLD_TEST_DB=postgres; needs `npm run build` first.
 *
 * Every test makes its own users, and its own tags where it filters by tag, so the tests hold in any
 * order on the one database the file shares.
 */
import { describe, expect, it } from 'vitest';
import {
  createArticle,
  expectArticle,
  expectArticles,
  expectErrors,
  expectStatus,
  expectTags,
  register,
  slugs,
  tagOrder,
  useConduit,
  type Account,
  type Article,
} from './support.js';

const call = useConduit();

/** Articles by `author` titled `<prefix> 1` … `<prefix> n`, created one after another (so the last is the most recent). */
async function createMany(author: Account, prefix: string, n: number): Promise<Article[]> {
  const created: Article[] = [];
  for (let i = 1; i <= n; i++) created.push(await createArticle(call, author, { title: `${prefix} ${i}` }));
  return created;
}

/** The slugs of `articles`, most recent first: the order every list of the spec is in. */
const newestFirst = (articles: readonly Article[]) => articles.map((article) => article.slug).reverse();

describe('POST /articles (CreateArticle)', () => {
  it('creates an article: 201, slug from the title, sorted tags, no favourites, its author as a profile', async () => {
    const author = await register(call, 'dragonrider');
    const body = { article: { title: 'How to train your dragon', description: 'Ever wonder how?', body: 'Very carefully.', tagList: ['training', 'dragons'] } };
    const article = expectArticle(await call('POST', '/articles', { token: author.token, body }), 201);
    expect(article).toMatchObject({
      slug: 'how-to-train-your-dragon',
      title: 'How to train your dragon',
      description: 'Ever wonder how?',
      body: 'Very carefully.',
      tagList: tagOrder(['training', 'dragons']),
      favorited: false,
      favoritesCount: 0,
      author: { username: 'dragonrider', bio: null, image: null, following: false },
    });
    expect(article.updatedAt >= article.createdAt).toBe(true);
    expect(expectArticle(await call('GET', `/articles/${article.slug}`))).toStrictEqual(article);
  });

  it('keeps an article without tagList with an empty one', async () => {
    const author = await register(call, 'untagged');
    const article = await createArticle(call, author, { title: 'Nothing to tag here' });
    expect(article.tagList).toStrictEqual([]);
  });

  it('gives two articles with one title two slugs, each serving its own article', async () => {
    const first = await createArticle(call, await register(call, 'firstwriter'), { title: 'Same old title' });
    const second = await createArticle(call, await register(call, 'secondwriter'), { title: 'Same old title' });
    expect(first.slug).toBe('same-old-title');
    expect(second.slug).not.toBe(first.slug);
    expect(second.slug).toMatch(/^same-old-title/);
    expect(expectArticle(await call('GET', `/articles/${first.slug}`)).author.username).toBe('firstwriter');
    expect(expectArticle(await call('GET', `/articles/${second.slug}`)).author.username).toBe('secondwriter');
  });

  it.each(['title', 'description', 'body'])('refuses an article without %s, or with it blank: 422 naming it', async (field) => {
    const author = await register(call, `no${field}`);
    const article: Record<string, string> = { title: `Missing ${field}`, description: 'd', body: 'b' };
    delete article[field];
    expectErrors(await call('POST', '/articles', { token: author.token, body: { article } }), new RegExp(field, 'i'));
    expectErrors(await call('POST', '/articles', { token: author.token, body: { article: { ...article, [field]: '' } } }), new RegExp(field, 'i'));
    expect(expectArticles(await call('GET', `/articles?author=no${field}`)).articlesCount).toBe(0);
  });

  it('refuses a tagList that is not an array of strings, and a body without the "article" wrapper: 422', async () => {
    const author = await register(call, 'badtags');
    const article = { title: 'Bad tags', description: 'd', body: 'b' };
    expectErrors(await call('POST', '/articles', { token: author.token, body: { article: { ...article, tagList: 'dragons' } } }), /tagList/);
    expectErrors(await call('POST', '/articles', { token: author.token, body: { article: { ...article, tagList: [1, 2] } } }), /tagList/);
    expectErrors(await call('POST', '/articles', { token: author.token, body: article }));
  });

  it('is 401 without a token', async () => {
    expectStatus(await call('POST', '/articles', { body: { article: { title: 'Anonymous', description: 'd', body: 'b' } } }), 401);
  });

  it('serves an article titled "Feed" at its own slug, which GET /articles/feed (the feed) cannot shadow', async () => {
    const author = await register(call, 'slugwriter');
    const reader = await register(call, 'slugreader');
    const article = await createArticle(call, author, { title: 'Feed' });
    expect(article.slug).not.toBe('feed');
    expect(article.slug).toMatch(/^feed/);
    expect(expectArticle(await call('GET', `/articles/${article.slug}`))).toStrictEqual(article);
    // The feed is still the feed: reader follows no one.
    expect(expectArticles(await call('GET', '/articles/feed', { token: reader.token }))).toStrictEqual({ articles: [], articlesCount: 0 });
    // Retitled "feed!", another article gets a slug of its own too.
    const other = await createArticle(call, author, { title: 'Not the feed' });
    const renamed = expectArticle(await call('PUT', `/articles/${other.slug}`, { token: author.token, body: { article: { title: 'feed!' } } }));
    expect(renamed.slug).not.toBe('feed');
    expect(expectArticle(await call('GET', `/articles/${renamed.slug}`)).title).toBe('feed!');
    expectStatus(await call('POST', `/articles/${renamed.slug}/favorite`, { token: reader.token }), 200);
  });
});

describe("an article's tags (tagList), at most 10", () => {
  const tags = (n: number, prefix = 'bound') => Array.from({ length: n }, (_, index) => `${prefix}-${index}`);

  it('takes 10 tags; 11 is 422 naming tagList, and nothing is stored', async () => {
    const author = await register(call, 'boundtagger');
    expect((await createArticle(call, author, { title: 'Ten tags', tagList: tags(10) })).tagList).toStrictEqual(tagOrder(tags(10)));
    const refused = { title: 'Eleven tags', description: 'd', body: 'b', tagList: tags(11, 'eleven') };
    expectErrors(await call('POST', '/articles', { token: author.token, body: { article: refused } }), /tagList.*10/);
    expect(expectArticles(await call('GET', '/articles?author=boundtagger')).articlesCount).toBe(1);
    expect(expectTags(await call('GET', '/tags'))).not.toContain('eleven-0');
  });

  it('refuses a list of 60 000 tags whole, on create and on update: 422 naming tagList, the article unchanged', async () => {
    const author = await register(call, 'floodtagger');
    const flood = tags(60_000, 'flood');
    expectErrors(await call('POST', '/articles', { token: author.token, body: { article: { title: 'Flooded', description: 'd', body: 'b', tagList: flood } } }), /tagList.*10/);
    const article = await createArticle(call, author, { title: 'Kept tags', tagList: ['kept'] });
    expectErrors(await call('PUT', `/articles/${article.slug}`, { token: author.token, body: { article: { tagList: flood } } }), /tagList.*10/);
    expect(expectArticle(await call('GET', `/articles/${article.slug}`))).toStrictEqual(article);
    expect(expectArticles(await call('GET', '/articles?author=floodtagger')).articlesCount).toBe(1);
  });
});

describe('GET /articles/{slug} (GetArticle)', () => {
  it('is open to anyone; favorited and author.following depend on who asks', async () => {
    const author = await register(call, 'famous');
    const reader = await register(call, 'devotee');
    const { slug } = await createArticle(call, author, { title: 'Read me' });
    await call('POST', '/profiles/famous/follow', { token: reader.token });
    await call('POST', `/articles/${slug}/favorite`, { token: reader.token });
    expect(expectArticle(await call('GET', `/articles/${slug}`))).toMatchObject({ favorited: false, favoritesCount: 1, author: { following: false } });
    expect(expectArticle(await call('GET', `/articles/${slug}`, { token: reader.token }))).toMatchObject({ favorited: true, favoritesCount: 1, author: { following: true } });
    expect(expectArticle(await call('GET', `/articles/${slug}`, { token: author.token }))).toMatchObject({ favorited: false, favoritesCount: 1, author: { following: false } });
  });

  it('is 404 for a slug no article has', async () => {
    expectStatus(await call('GET', '/articles/no-such-article'), 404);
  });
});

describe('PUT /articles/{slug} (UpdateArticle)', () => {
  it('lets the author change some fields: the others stay, createdAt stays, updatedAt moves on', async () => {
    const author = await register(call, 'editor');
    const before = await createArticle(call, author, { title: 'Draft title', description: 'first', body: 'first body', tagList: ['drafts'] });
    const after = expectArticle(await call('PUT', `/articles/${before.slug}`, { token: author.token, body: { article: { body: 'With two hands' } } }));
    expect(after).toMatchObject({ slug: before.slug, title: 'Draft title', description: 'first', body: 'With two hands', tagList: ['drafts'], createdAt: before.createdAt });
    expect(after.updatedAt >= before.updatedAt).toBe(true);
    expect(expectArticle(await call('GET', `/articles/${before.slug}`)).body).toBe('With two hands');
  });

  it('moves the slug with the title: the new slug serves the article, the old one is 404', async () => {
    const author = await register(call, 'retitler');
    const before = await createArticle(call, author, { title: 'Train your dragon' });
    const after = expectArticle(await call('PUT', `/articles/${before.slug}`, { token: author.token, body: { article: { title: 'Did you train your dragon' } } }));
    expect(after).toMatchObject({ title: 'Did you train your dragon', slug: 'did-you-train-your-dragon', description: before.description, body: before.body });
    expect(expectArticle(await call('GET', '/articles/did-you-train-your-dragon')).title).toBe('Did you train your dragon');
    expectStatus(await call('GET', `/articles/${before.slug}`), 404);
  });

  it('is 403 for another user, 401 without a token, and the article is unchanged', async () => {
    const author = await register(call, 'owner');
    const other = await register(call, 'meddler');
    const article = await createArticle(call, author, { title: 'Not yours' });
    expectStatus(await call('PUT', `/articles/${article.slug}`, { token: other.token, body: { article: { body: 'mine now' } } }), 403);
    expectStatus(await call('PUT', `/articles/${article.slug}`, { body: { article: { body: 'anyone' } } }), 401);
    expect(expectArticle(await call('GET', `/articles/${article.slug}`))).toStrictEqual(article);
  });

  it('refuses a blank title: 422 naming it; is 404 for an unknown slug', async () => {
    const author = await register(call, 'blanker');
    const article = await createArticle(call, author, { title: 'Keep my title' });
    expectErrors(await call('PUT', `/articles/${article.slug}`, { token: author.token, body: { article: { title: '' } } }), /title/i);
    expect(expectArticle(await call('GET', `/articles/${article.slug}`)).title).toBe('Keep my title');
    expectStatus(await call('PUT', '/articles/no-such-article', { token: author.token, body: { article: { body: 'x' } } }), 404);
  });
});

describe('DELETE /articles/{slug} (DeleteArticle)', () => {
  it('lets only the author delete: 403 for others, 401 anonymous, then 204 and gone', async () => {
    const author = await register(call, 'deleter');
    const other = await register(call, 'vandal');
    const article = await createArticle(call, author, { title: 'Short lived' });
    expectStatus(await call('DELETE', `/articles/${article.slug}`, { token: other.token }), 403);
    expectStatus(await call('DELETE', `/articles/${article.slug}`), 401);
    expectArticle(await call('GET', `/articles/${article.slug}`));

    const deleted = await call('DELETE', `/articles/${article.slug}`, { token: author.token });
    expectStatus(deleted, 204);
    expect(deleted.text).toBe('');
    expectStatus(await call('GET', `/articles/${article.slug}`), 404);
    expect(expectArticles(await call('GET', '/articles?author=deleter'))).toStrictEqual({ articles: [], articlesCount: 0 });
    expectStatus(await call('DELETE', `/articles/${article.slug}`, { token: author.token }), 404);
  });
});

describe('GET /articles (GetArticles)', () => {
  it('pages 20 at a time by default, most recent first, articlesCount counting all', async () => {
    const author = await register(call, 'prolific');
    const created = await createMany(author, 'Prolific post', 22);
    const page = expectArticles(await call('GET', '/articles?author=prolific'));
    expect(page.articlesCount).toBe(22);
    expect(slugs(page)).toStrictEqual(newestFirst(created).slice(0, 20));
    // A listed article is the article as created, less its body.
    const newest = created[21]!;
    expect({ ...page.articles[0], body: newest.body }).toStrictEqual(newest);
  });

  it('takes limit and offset', async () => {
    const author = await register(call, 'pager');
    const newest = newestFirst(await createMany(author, 'Paged post', 7));
    const middle = expectArticles(await call('GET', '/articles?author=pager&limit=3&offset=2'));
    expect(middle).toMatchObject({ articlesCount: 7 });
    expect(slugs(middle)).toStrictEqual(newest.slice(2, 5));
    const tail = expectArticles(await call('GET', '/articles?author=pager&limit=5&offset=5'));
    expect(slugs(tail)).toStrictEqual(newest.slice(5));
    expect(expectArticles(await call('GET', '/articles?author=pager&offset=7'))).toStrictEqual({ articles: [], articlesCount: 7 });
  });

  it('lists every author without a filter, the newest article first', async () => {
    const latest = await createArticle(call, await register(call, 'latecomer'), { title: 'The very latest' });
    const page = expectArticles(await call('GET', '/articles?limit=1'));
    expect(slugs(page)).toStrictEqual([latest.slug]);
    expect(page.articlesCount).toBeGreaterThan(1);
    expect(expectArticles(await call('GET', `/articles?offset=${page.articlesCount}`))).toStrictEqual({ articles: [], articlesCount: page.articlesCount });
  });

  it('filters by tag, by author and by who favourited, alone and together', async () => {
    const ann = await register(call, 'ann');
    const ben = await register(call, 'ben');
    const fan = await register(call, 'collector');
    const annCats = await createArticle(call, ann, { title: 'Ann on cats', tagList: ['filter-cats', 'filter-pets'] });
    const annDogs = await createArticle(call, ann, { title: 'Ann on dogs', tagList: ['filter-dogs', 'filter-pets'] });
    const benCats = await createArticle(call, ben, { title: 'Ben on cats', tagList: ['filter-cats'] });
    await call('POST', `/articles/${annCats.slug}/favorite`, { token: fan.token });
    await call('POST', `/articles/${benCats.slug}/favorite`, { token: fan.token });

    const list = async (query: string) => {
      const page = expectArticles(await call('GET', `/articles?${query}`));
      expect(page.articlesCount).toBe(page.articles.length);
      return slugs(page);
    };
    expect(await list('tag=filter-cats')).toStrictEqual([benCats.slug, annCats.slug]);
    expect(await list('tag=filter-pets')).toStrictEqual([annDogs.slug, annCats.slug]);
    expect(await list('author=ann')).toStrictEqual([annDogs.slug, annCats.slug]);
    expect(await list('favorited=collector')).toStrictEqual([benCats.slug, annCats.slug]);
    expect(await list('tag=filter-cats&author=ann')).toStrictEqual([annCats.slug]);
    expect(await list('tag=filter-pets&favorited=collector')).toStrictEqual([annCats.slug]);
    expect(await list('tag=filter-nobody-uses')).toStrictEqual([]);
    expect(await list('author=nobody-by-this-name')).toStrictEqual([]);
    expect(await list('favorited=ann')).toStrictEqual([]);
  });

  it('lists tags in the same order as the article shows them', async () => {
    const author = await register(call, 'tagorder');
    const article = await createArticle(call, author, { title: 'Ordered tags', tagList: ['zebra-tag', 'apple-tag', 'mango-tag'] });
    const [listed] = expectArticles(await call('GET', '/articles?tag=mango-tag')).articles;
    expect(listed!.tagList).toStrictEqual(tagOrder(['zebra-tag', 'apple-tag', 'mango-tag']));
    expect(article.tagList).toStrictEqual(listed!.tagList);
  });

  it('tells each caller whether they favourited each article and follow each author', async () => {
    const author = await register(call, 'shown');
    const reader = await register(call, 'shownreader');
    const liked = await createArticle(call, author, { title: 'Liked one' });
    const other = await createArticle(call, author, { title: 'Other one' });
    await call('POST', `/articles/${liked.slug}/favorite`, { token: reader.token });
    await call('POST', '/profiles/shown/follow', { token: reader.token });

    const mine = expectArticles(await call('GET', '/articles?author=shown', { token: reader.token })).articles;
    expect(mine.map(({ slug, favorited, favoritesCount, author }) => ({ slug, favorited, favoritesCount, following: author.following }))).toStrictEqual([
      { slug: other.slug, favorited: false, favoritesCount: 0, following: true },
      { slug: liked.slug, favorited: true, favoritesCount: 1, following: true },
    ]);
    const anonymous = expectArticles(await call('GET', '/articles?author=shown')).articles;
    expect(anonymous.map(({ favorited, author }) => [favorited, author.following])).toStrictEqual([
      [false, false],
      [false, false],
    ]);
  });

  it.each(['limit=0', 'limit=-1', 'limit=many', 'offset=-1', 'offset=first'])('refuses %s: 422 naming the parameter', async (query) => {
    expectErrors(await call('GET', `/articles?${query}`), new RegExp(query.split('=')[0]!));
  });

  it('is 401 with a bad token, though open without one', async () => {
    expectStatus(await call('GET', '/articles', { token: 'not.a.token' }), 401);
  });
});

describe('GET /articles/feed (GetArticlesFeed)', () => {
  it("lists only the followed authors' articles, most recent first, with limit and offset", async () => {
    const reader = await register(call, 'feedreader');
    const liked = await register(call, 'feedliked');
    const alsoLiked = await register(call, 'feedalso');
    const ignored = await register(call, 'feedignored');
    await call('POST', '/profiles/feedliked/follow', { token: reader.token });
    await call('POST', '/profiles/feedalso/follow', { token: reader.token });

    const a = await createArticle(call, liked, { title: 'Feed one' });
    await createArticle(call, ignored, { title: 'Not in the feed' });
    const b = await createArticle(call, alsoLiked, { title: 'Feed two' });
    const c = await createArticle(call, liked, { title: 'Feed three' });
    await createArticle(call, reader, { title: 'My own, not in my feed' });

    const feed = expectArticles(await call('GET', '/articles/feed', { token: reader.token }));
    expect(feed.articlesCount).toBe(3);
    expect(slugs(feed)).toStrictEqual([c.slug, b.slug, a.slug]);
    expect(feed.articles.every((article) => article.author.following)).toBe(true);

    const second = expectArticles(await call('GET', '/articles/feed?limit=1&offset=1', { token: reader.token }));
    expect(second.articlesCount).toBe(3);
    expect(slugs(second)).toStrictEqual([b.slug]);

    await call('DELETE', '/profiles/feedalso/follow', { token: reader.token });
    expect(slugs(expectArticles(await call('GET', '/articles/feed', { token: reader.token })))).toStrictEqual([c.slug, a.slug]);
  });

  it('is empty, articlesCount 0, for a user who follows no one', async () => {
    const loner = await register(call, 'loner');
    await createArticle(call, loner, { title: 'Only mine' });
    expect(expectArticles(await call('GET', '/articles/feed', { token: loner.token }))).toStrictEqual({ articles: [], articlesCount: 0 });
  });

  it('is 401 without a token', async () => {
    expectStatus(await call('GET', '/articles/feed'), 401);
  });
});

describe('POST and DELETE /articles/{slug}/favorite (CreateArticleFavorite, DeleteArticleFavorite)', () => {
  it('favourites and unfavourites: favorited for the caller, favoritesCount for everyone', async () => {
    const author = await register(call, 'favauthor');
    const first = await register(call, 'favfirst');
    const second = await register(call, 'favsecond');
    const { slug } = await createArticle(call, author, { title: 'Worth a star', tagList: ['starred'] });

    expect(expectArticle(await call('POST', `/articles/${slug}/favorite`, { token: first.token }))).toMatchObject({ slug, favorited: true, favoritesCount: 1 });
    expect(expectArticle(await call('POST', `/articles/${slug}/favorite`, { token: second.token }))).toMatchObject({ favorited: true, favoritesCount: 2 });
    expect(expectArticle(await call('GET', `/articles/${slug}`, { token: author.token }))).toMatchObject({ favorited: false, favoritesCount: 2 });

    expect(expectArticle(await call('DELETE', `/articles/${slug}/favorite`, { token: first.token }))).toMatchObject({ slug, favorited: false, favoritesCount: 1 });
    expect(expectArticle(await call('GET', `/articles/${slug}`, { token: second.token }))).toMatchObject({ favorited: true, favoritesCount: 1 });
    expect(slugs(expectArticles(await call('GET', '/articles?favorited=favfirst')))).toStrictEqual([]);
    expect(slugs(expectArticles(await call('GET', '/articles?favorited=favsecond')))).toStrictEqual([slug]);
  });

  it('favourites and unfavourites idempotently: twice counts once', async () => {
    const author = await register(call, 'idemauthor');
    const fan = await register(call, 'idemfan');
    const { slug } = await createArticle(call, author, { title: 'Starred twice' });
    for (let round = 0; round < 2; round++) {
      expect(expectArticle(await call('POST', `/articles/${slug}/favorite`, { token: fan.token }))).toMatchObject({ favorited: true, favoritesCount: 1 });
    }
    for (let round = 0; round < 2; round++) {
      expect(expectArticle(await call('DELETE', `/articles/${slug}/favorite`, { token: fan.token }))).toMatchObject({ favorited: false, favoritesCount: 0 });
    }
  });

  it('is 401 without a token and 404 for an unknown slug', async () => {
    const author = await register(call, 'favguard');
    const { slug } = await createArticle(call, author, { title: 'Guarded star' });
    expectStatus(await call('POST', `/articles/${slug}/favorite`), 401);
    expectStatus(await call('DELETE', `/articles/${slug}/favorite`), 401);
    expectStatus(await call('POST', '/articles/no-such-article/favorite', { token: author.token }), 404);
    expectStatus(await call('DELETE', '/articles/no-such-article/favorite', { token: author.token }), 404);
    expect(expectArticle(await call('GET', `/articles/${slug}`)).favoritesCount).toBe(0);
  });
});

describe('GET /tags (GetTags)', () => {
  it('lists only the tags some article has: not those its articles dropped, nor those of deleted articles', async () => {
    const author = await register(call, 'tagdropper');
    const kept = await createArticle(call, author, { title: 'Keeps one', tagList: ['pop-shared', 'pop-kept'] });
    const changed = await createArticle(call, author, { title: 'Drops one', tagList: ['pop-shared', 'pop-dropped'] });
    const deleted = await createArticle(call, author, { title: 'Goes away', tagList: ['pop-shared', 'pop-deleted'] });
    const popular = async () => expectTags(await call('GET', '/tags')).filter((tag) => tag.startsWith('pop-')).sort();
    expect(await popular()).toStrictEqual(['pop-deleted', 'pop-dropped', 'pop-kept', 'pop-shared']);

    expectArticle(await call('PUT', `/articles/${changed.slug}`, { token: author.token, body: { article: { tagList: ['pop-shared'] } } }));
    expectStatus(await call('DELETE', `/articles/${deleted.slug}`, { token: author.token }), 204);
    expect(await popular()).toStrictEqual(['pop-kept', 'pop-shared']);
    expect(expectArticles(await call('GET', '/articles?tag=pop-dropped')).articlesCount).toBe(0);

    // A tag in use again is listed again.
    expectArticle(await call('PUT', `/articles/${kept.slug}`, { token: author.token, body: { article: { tagList: ['pop-kept', 'pop-dropped'] } } }));
    expect(await popular()).toStrictEqual(['pop-dropped', 'pop-kept', 'pop-shared']);
  });

  it('lists every tag in use once, to anyone', async () => {
    const author = await register(call, 'tagger');
    await createArticle(call, author, { title: 'Tagged one', tagList: ['tags-alpha', 'tags-beta'] });
    await createArticle(call, author, { title: 'Tagged two', tagList: ['tags-beta', 'tags-gamma'] });
    const tags = expectTags(await call('GET', '/tags'));
    expect(new Set(tags).size).toBe(tags.length);
    expect(tags.filter((tag) => tag.startsWith('tags-')).sort()).toStrictEqual(['tags-alpha', 'tags-beta', 'tags-gamma']);
  });
});
