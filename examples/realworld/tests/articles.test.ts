// Conduit's articles as their authors and readers meet them: slugs, the author's rights, favourites
// sent at once, the feed of those one follows. The app passes its migrations, so testApp needs none.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { expectStatus, testApp, type TestApp, type TestClient } from 'restfold/testing';
import conduit from '../app.js';

describe('Conduit: articles', () => {
  let t: TestApp;
  let jake: TestClient;
  let jane: TestClient;
  before(async () => {
    t = await testApp(conduit);
  });
  after(() => t?.close());
  beforeEach(async () => {
    await t.reset();
    // Conduit's users log in by e-mail, which its user model requires.
    jake = t.client().as(await t.createUser({ username: 'jake', email: 'jake@example.com' }));
    jane = t.client().as(await t.createUser({ username: 'jane', email: 'jane@example.com' }));
  });

  const dragons = { article: { title: 'How to train your dragon', description: 'Ever wonder how?', body: 'Very carefully.', tagList: ['dragons'] } };

  it("gives an article its title's slug, and lets its author alone change it", async () => {
    const { article } = expectStatus(await jake.post('/api/articles', dragons), 201).json;
    assert.equal(article.slug, 'how-to-train-your-dragon');
    assert.equal(article.author.username, 'jake');

    expectStatus(await jane.put(`/api/articles/${article.slug}`, { article: { body: 'Mine now.' } }), 403);
    const changed = expectStatus(await jake.put(`/api/articles/${article.slug}`, { article: { title: 'Training dragons' } }), 200).json;
    assert.equal(changed.article.slug, 'training-dragons');
    // A second article of the same title takes the next slug.
    assert.equal(expectStatus(await jane.post('/api/articles', { article: { ...dragons.article, title: 'Training dragons' } }), 201).json.article.slug, 'training-dragons-2');
  });

  it('counts each reader once among the favourites, however many times at once they ask', async () => {
    const { article } = expectStatus(await jake.post('/api/articles', dragons), 201).json;
    const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => (index % 2 ? jane : jake).post(`/api/articles/${article.slug}/favorite`)));
    for (const answer of answers) expectStatus(answer, 200);
    assert.equal(expectStatus(await jane.get(`/api/articles/${article.slug}`), 200).json.article.favoritesCount, 2);
  });

  it("feeds a reader the articles of those they follow, and no one else's", async () => {
    expectStatus(await jake.post('/api/articles', dragons), 201);
    assert.equal(expectStatus(await jane.get('/api/articles/feed'), 200).json.articlesCount, 0);
    expectStatus(await jane.post('/api/profiles/jake/follow'), 200);
    const feed = expectStatus(await jane.get('/api/articles/feed'), 200).json;
    assert.deepEqual(feed.articles.map((article: { slug: string }) => article.slug), ['how-to-train-your-dragon']);
    expectStatus(await t.client().get('/api/articles/feed'), 401);
  });
});
