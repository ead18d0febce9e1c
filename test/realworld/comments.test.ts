/**
 * The RealWorld (Conduit) backend in examples/realworld, black-box over HTTP: comments, a
 * collection nested under its article. The contract is the public spec, gothinkster/realworld
 * `api/openapi.yml` (1.1.0; paths under `/api`), with the behaviours RealWorld's own API tests check
 * (`api/Conduit.postman_collection.json`) and the spec's pages on endpoints and errors. Operations
 * here: GetArticleComments, CreateArticleComment, DeleteArticleComment. Runs on SQLite, or
 * PostgreSQL with RESTFOLD_TEST_DB=postgres; needs `npm run build` first.
 */
import { describe, expect, it } from 'vitest';
import { createArticle, expectComment, expectComments, expectErrors, expectStatus, register, useConduit } from './support.js';

const call = useConduit();

/** The bodies of `comments` by id, so lists compare whatever order the app serves them in (the spec names none). */
const byId = (comments: readonly { id: number; body: string }[]) => comments.map(({ id, body }) => ({ id, body })).sort((a, b) => a.id - b.id);

describe('POST /articles/{slug}/comments (CreateArticleComment)', () => {
  it('adds a comment: 200 (as the spec says, not 201) with its id, body, timestamps and author', async () => {
    const author = await register(call, 'host');
    const guest = await register(call, 'guest');
    const { slug } = await createArticle(call, author, { title: 'Comment on me' });
    const comment = expectComment(await call('POST', `/articles/${slug}/comments`, { token: guest.token, body: { comment: { body: 'Thank you so much!' } } }));
    expect(comment).toMatchObject({ body: 'Thank you so much!', author: { username: 'guest', bio: null, image: null, following: false } });
    expect(comment.updatedAt >= comment.createdAt).toBe(true);
    expect(expectComments(await call('GET', `/articles/${slug}/comments`))).toStrictEqual([comment]);
  });

  it('refuses a comment without a body, or a blank one: 422 naming it', async () => {
    const author = await register(call, 'silent');
    const { slug } = await createArticle(call, author, { title: 'Say something' });
    expectErrors(await call('POST', `/articles/${slug}/comments`, { token: author.token, body: { comment: {} } }), /body/i);
    expectErrors(await call('POST', `/articles/${slug}/comments`, { token: author.token, body: { comment: { body: '' } } }), /body/i);
    expectErrors(await call('POST', `/articles/${slug}/comments`, { token: author.token, body: { body: 'no wrapper' } }));
    expect(expectComments(await call('GET', `/articles/${slug}/comments`))).toStrictEqual([]);
  });

  it('is 401 without a token and 404 under an unknown article', async () => {
    const author = await register(call, 'closed');
    const { slug } = await createArticle(call, author, { title: 'No anonymous comments' });
    expectStatus(await call('POST', `/articles/${slug}/comments`, { body: { comment: { body: 'anonymous' } } }), 401);
    expectStatus(await call('POST', '/articles/no-such-article/comments', { token: author.token, body: { comment: { body: 'lost' } } }), 404);
    expect(expectComments(await call('GET', `/articles/${slug}/comments`))).toStrictEqual([]);
  });
});

describe('GET /articles/{slug}/comments (GetArticleComments)', () => {
  it("lists only this article's comments, to anyone; author.following depends on who asks", async () => {
    const author = await register(call, 'lister');
    const talker = await register(call, 'talker');
    const follower = await register(call, 'listfollower');
    const first = await createArticle(call, author, { title: 'First thread' });
    const second = await createArticle(call, author, { title: 'Second thread' });
    const one = expectComment(await call('POST', `/articles/${first.slug}/comments`, { token: talker.token, body: { comment: { body: 'one' } } }));
    const two = expectComment(await call('POST', `/articles/${first.slug}/comments`, { token: author.token, body: { comment: { body: 'two' } } }));
    const elsewhere = expectComment(await call('POST', `/articles/${second.slug}/comments`, { token: talker.token, body: { comment: { body: 'elsewhere' } } }));
    await call('POST', '/profiles/talker/follow', { token: follower.token });

    expect(byId(expectComments(await call('GET', `/articles/${first.slug}/comments`)))).toStrictEqual(byId([one, two]));
    expect(byId(expectComments(await call('GET', `/articles/${second.slug}/comments`)))).toStrictEqual(byId([elsewhere]));

    const following = (comments: readonly { author: { username: string; following: boolean } }[]) =>
      Object.fromEntries(comments.map(({ author }) => [author.username, author.following]));
    expect(following(expectComments(await call('GET', `/articles/${first.slug}/comments`)))).toStrictEqual({ talker: false, lister: false });
    expect(following(expectComments(await call('GET', `/articles/${first.slug}/comments`, { token: follower.token })))).toStrictEqual({ talker: true, lister: false });
  });

  it('is 404 under an unknown article, and 401 with a bad token', async () => {
    const author = await register(call, 'checker');
    const { slug } = await createArticle(call, author, { title: 'Checked thread' });
    expectStatus(await call('GET', '/articles/no-such-article/comments'), 404);
    expectStatus(await call('GET', `/articles/${slug}/comments`, { token: 'not.a.token' }), 401);
  });
});

describe('DELETE /articles/{slug}/comments/{id} (DeleteArticleComment)', () => {
  it("lets only the comment's author delete it: 403 for others, the article's author included; then 204 and gone", async () => {
    const author = await register(call, 'moderator');
    const commenter = await register(call, 'commenter');
    const stranger = await register(call, 'stranger');
    const { slug } = await createArticle(call, author, { title: 'Moderated thread' });
    const comment = expectComment(await call('POST', `/articles/${slug}/comments`, { token: commenter.token, body: { comment: { body: 'keep me' } } }));
    const path = `/articles/${slug}/comments/${comment.id}`;

    expectStatus(await call('DELETE', path, { token: stranger.token }), 403);
    expectStatus(await call('DELETE', path, { token: author.token }), 403);
    expectStatus(await call('DELETE', path), 401);
    expect(expectComments(await call('GET', `/articles/${slug}/comments`))).toStrictEqual([comment]);

    const deleted = await call('DELETE', path, { token: commenter.token });
    expectStatus(deleted, 204);
    expect(deleted.text).toBe('');
    expect(expectComments(await call('GET', `/articles/${slug}/comments`))).toStrictEqual([]);
    expectStatus(await call('DELETE', path, { token: commenter.token }), 404);
  });

  it('is 404 for a comment of another article, an unknown id, an id that is not a number, or an unknown article', async () => {
    const author = await register(call, 'crosser');
    const here = await createArticle(call, author, { title: 'Here' });
    const there = await createArticle(call, author, { title: 'There' });
    const comment = expectComment(await call('POST', `/articles/${there.slug}/comments`, { token: author.token, body: { comment: { body: 'over there' } } }));

    expectStatus(await call('DELETE', `/articles/${here.slug}/comments/${comment.id}`, { token: author.token }), 404);
    expectStatus(await call('DELETE', `/articles/${here.slug}/comments/999999`, { token: author.token }), 404);
    expectStatus(await call('DELETE', `/articles/${here.slug}/comments/first`, { token: author.token }), 404);
    expectStatus(await call('DELETE', `/articles/no-such-article/comments/${comment.id}`, { token: author.token }), 404);
    expect(expectComments(await call('GET', `/articles/${there.slug}/comments`))).toStrictEqual([comment]);
  });

  it('lets an author delete an article that has comments (204): the thread goes with it', async () => {
    const author = await register(call, 'cleaner');
    const { slug } = await createArticle(call, author, { title: 'Soon gone' });
    expectComment(await call('POST', `/articles/${slug}/comments`, { token: author.token, body: { comment: { body: 'going too' } } }));
    expectStatus(await call('DELETE', `/articles/${slug}`, { token: author.token }), 204);
    expectStatus(await call('GET', `/articles/${slug}/comments`), 404);
  });
});
