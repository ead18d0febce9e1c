// Conduit's comments as a reader's page sees them without polling: the article's stream
// (`/api/articles/:slug/comments/events`) sends each new comment and each deletion, and nothing of
// other articles'. t.liveEvents reads the stream in-process.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { expectStatus, testApp, type TestApp } from 'restfold/testing';
import conduit from '../app.js';

describe('Conduit: comments', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp(conduit);
  });
  after(() => t?.close());
  beforeEach(() => t.reset());

  const article = (title: string) => ({ article: { title, description: 'A test.', body: 'Text.' } });

  // #region live-events
  it("streams an article's new and deleted comments to its readers, and no other article's", async () => {
    const jake = await t.createUser({ username: 'jake', email: 'jake@example.com' });
    const jane = t.client().as(await t.createUser({ username: 'jane', email: 'jane@example.com' }));
    const dragons = expectStatus(await t.client().as(jake).post('/api/articles', article('Dragons')), 201).json.article;
    const other = expectStatus(await t.client().as(jake).post('/api/articles', article('Other')), 201).json.article;

    // The stream as jake reads it; without `as`, an anonymous reader's.
    const events = await t.liveEvents(`/api/articles/${dragons.slug}/comments/events`, { as: jake });
    assert.equal(events.status, 200);
    expectStatus(await jane.post(`/api/articles/${other.slug}/comments`, { comment: { body: 'Elsewhere.' } }), 200);
    const { comment } = expectStatus(await jane.post(`/api/articles/${dragons.slug}/comments`, { comment: { body: 'First!' } }), 200).json;

    const created = await events.next(); // waits up to 5 s, then fails naming what arrived
    assert.equal(created.event, 'created');
    assert.deepEqual([created.data.id, created.data.body, created.data.author.username], [comment.id, 'First!', 'jane']);
    expectStatus(await jane.delete(`/api/articles/${dragons.slug}/comments/${comment.id}`), 204);
    const deleted = await events.next();
    assert.deepEqual([deleted.event, deleted.data], ['deleted', { id: comment.id }]);
    events.close(); // t.close() ends any left open
  });
  // #endregion live-events
});
