/**
 * The Conduit example streams an article's comments as they are written and deleted
 * (`GET /api/articles/:slug/comments/events`, Server-Sent Events): what a reader's page shows
 * without polling, the comment in the shape the comments list renders it.
 */
import { describe, expect, it } from 'vitest';
import { openEvents } from '../support/event-stream.js';
import { createArticle, expectComment, register, useConduit } from './support.js';

const call = useConduit();

describe("an article's comments, live", () => {
  it('reach an anonymous reader as they are made and deleted, and only that article’s', async () => {
    const author = await register(call, 'live_author');
    const reader = await register(call, 'live_reader');
    const article = await createArticle(call, author, { title: 'Streams of comments' });
    const other = await createArticle(call, author, { title: 'Another article' });
    const events = await openEvents(`${call.url()}/api/articles/${article.slug}/comments/events`);
    try {
      expect(events.status).toBe(200);
      await call('POST', `/articles/${other.slug}/comments`, { token: reader.token, body: { comment: { body: 'elsewhere' } } });
      const made = expectComment(await call('POST', `/articles/${article.slug}/comments`, { token: reader.token, body: { comment: { body: 'First!' } } }));
      const created = await events.next();
      expect(created).toMatchObject({ event: 'created', data: { id: made.id, body: 'First!', author: { username: 'live_reader' } } });

      expect((await call('DELETE', `/articles/${article.slug}/comments/${made.id}`, { token: reader.token })).status).toBe(204);
      expect(await events.next()).toMatchObject({ event: 'deleted', data: { id: made.id } });
    } finally {
      events.close();
    }
  });
});
