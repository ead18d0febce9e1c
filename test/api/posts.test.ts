import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApi, type Reply, type TestApi } from '../support/api.js';
import { testDialect } from '../support/database.js';

let api: TestApi;

beforeEach(async () => {
  api = await startApi();
});
afterEach(() => api.close());

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const post = { title: 'Hello', content: 'First post.', published: true };

async function create(body: Record<string, unknown> = post): Promise<Record<string, unknown>> {
  const reply = await api.request('POST', '/api/posts', { body });
  expect(reply.status).toBe(201);
  return reply.json;
}

/** A plain-text error: the status, the media type, and the body's text. */
function expectTextError(reply: Reply, status: number): string {
  expect(reply.status).toBe(status);
  expect(reply.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(reply.body.length).toBeGreaterThan(0);
  return reply.body;
}

/** Sets a post's timestamps directly in the database. */
async function stamp(id: unknown, created_at: string, updated_at = created_at): Promise<void> {
  await api.database.db.updateTable('posts').set({ created_at, updated_at }).where('id', '=', id).execute();
}

describe('posts: create and detail', () => {
  it('answers 201 with the full record as JSON, the same as its detail', async () => {
    const reply = await api.request('POST', '/api/posts', { body: post });
    expect(reply.status).toBe(201);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Object.keys(reply.json)).toEqual(['id', 'title', 'content', 'published', 'created_at', 'updated_at']);
    expect(reply.json).toMatchObject(post);
    expect(typeof reply.json.id).toBe('number');
    expect(reply.json.created_at).toMatch(TIMESTAMP);
    expect(reply.json.updated_at).toBe(reply.json.created_at);

    const detail = await api.request('GET', `/api/posts/${reply.json.id}`);
    expect(detail.status).toBe(200);
    expect(detail.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(detail.json).toEqual(reply.json);
  });

  it('defaults published to false', async () => {
    const created = await create({ title: 'Draft', content: 'Not yet.' });
    expect(created.published).toBe(false);
  });

  it('ignores id, created_at, updated_at and unknown fields in the body', async () => {
    const created = await create({
      ...post,
      id: 999,
      created_at: '2000-01-01T00:00:00.000Z',
      updated_at: '2000-01-01T00:00:00.000Z',
      author: 'someone',
    });
    expect(created.id).not.toBe(999);
    expect(String(created.created_at).startsWith('2000')).toBe(false);
    expect(String(created.updated_at).startsWith('2000')).toBe(false);
    expect(created).not.toHaveProperty('author');
  });

  it('needs no authentication, and ignores a bad credential', async () => {
    const reply = await api.request('POST', '/api/posts', { body: post, token: 'not-a-token' });
    expect(reply.status).toBe(201);
    const detail = await api.request('GET', `/api/posts/${reply.json.id}`, { token: 'not-a-token' });
    expect(detail.status).toBe(200);
  });

  it('reads the body as JSON whatever its Content-Type', async () => {
    const reply = await api.request('POST', '/api/posts', {
      body: JSON.stringify(post),
      headers: { 'content-type': 'text/plain' },
    });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject(post);
  });
});

describe('posts: validation', () => {
  it.each([
    [{ content: 'c' }, 'title'],
    [{ title: 't' }, 'content'],
    [{ title: 42, content: 'c' }, 'title'],
    [{ title: null, content: 'c' }, 'title'],
    [{ title: 't', content: ['c'] }, 'content'],
    [{ title: '', content: 'c' }, 'title'],
    [{ title: 't', content: '' }, 'content'],
    [{ title: 't', content: 'c', published: 'yes' }, 'published'],
    [{ title: 't', content: 'c', published: 1 }, 'published'],
    [{ title: 't', content: 'c', published: null }, 'published'],
  ])('refuses %j with 400 naming %s', async (body, field) => {
    const text = expectTextError(await api.request('POST', '/api/posts', { body }), 400);
    expect(text).toMatch(new RegExp(`^${field}: `));
    const list = await api.request('GET', '/api/posts');
    expect(list.json).toEqual([]);
  });

  it('names every failing field', async () => {
    const text = expectTextError(await api.request('POST', '/api/posts', { body: { published: 'no' } }), 400);
    expect(text.split('\n').map((line) => line.split(':')[0]).sort()).toEqual(['content', 'published', 'title']);
  });

  it.each([
    ['ASCII', 'a'],
    ['two-byte', 'é'],
    ['four-byte (astral)', '😀'],
  ])('counts title length in characters (%s): 200 accepted, 201 refused', async (_name, char) => {
    const exact = await api.request('POST', '/api/posts', { body: { title: char.repeat(200), content: 'c' } });
    expect(exact.status).toBe(201);
    expect(exact.json.title).toBe(char.repeat(200));
    const over = await api.request('POST', '/api/posts', { body: { title: char.repeat(201), content: 'c' } });
    expect(expectTextError(over, 400)).toBe('title: Ensure this field has no more than 200 characters.');
  });

  it.each([
    ['invalid JSON', '{"title": "t",'],
    ['an empty body', ''],
    ['trailing garbage', '{"title": "t", "content": "c"} x'],
  ])('answers %s with 400 and the parse failure as text', async (_name, body) => {
    const reply = await api.request('POST', '/api/posts', { body, headers: { 'content-type': 'application/json' } });
    expect(expectTextError(reply, 400)).toMatch(/^JSON parse error: /);
  });

  it.each([['[1, 2]'], ['"a string"'], ['null'], ['42']])('refuses the JSON value %s: not an object', async (body) => {
    const reply = await api.request('POST', '/api/posts', { body, headers: { 'content-type': 'application/json' } });
    expect(expectTextError(reply, 400)).toBe('Expected a JSON object.');
  });

  it('refuses a body that is not UTF-8', async () => {
    const reply = await api.app.inject({
      method: 'POST',
      url: '/api/posts',
      headers: { 'content-type': 'application/json' },
      payload: Buffer.from([0x7b, 0xff, 0x7d]),
    });
    expect(reply.statusCode).toBe(400);
    expect(reply.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(reply.body).toBe('The body is not valid UTF-8.');
  });
});

describe('posts: ids', () => {
  it.each(['abc', '1.5', '1e3', '9223372036854775808', '-9223372036854775809', '123456789012345678901234', '0x10', ' 1'])(
    'answers 400 for the id %j on detail, update and delete',
    async (id) => {
      const path = `/api/posts/${encodeURIComponent(id)}`;
      for (const [method, body] of [['GET'], ['PUT', post], ['DELETE']] as const) {
        const text = expectTextError(await api.request(method, path, { body }), 400);
        expect(text).toBe('Invalid post id: it must be a 64-bit integer.');
      }
    },
  );

  it.each(['0', '-1', '9223372036854775807', '-9223372036854775808', '12345'])(
    'answers 404 for the well-formed unknown id %s on detail, update and delete',
    async (id) => {
      await create();
      for (const [method, body] of [['GET'], ['PUT', post], ['DELETE']] as const) {
        const text = expectTextError(await api.request(method, `/api/posts/${id}`, { body }), 404);
        expect(text).toBe('Post not found.');
      }
    },
  );

  it('loads the post before reading the body, so an unknown id with a bad body is 404', async () => {
    const reply = await api.request('PUT', '/api/posts/12345', { body: '{oops', headers: { 'content-type': 'application/json' } });
    expect(expectTextError(reply, 404)).toBe('Post not found.');
  });
});

describe('posts: list', () => {
  it('is an empty bare array when nothing is published', async () => {
    await create({ title: 'Draft', content: 'c' });
    const reply = await api.request('GET', '/api/posts');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.json).toEqual([]);
  });

  it('lists only published posts, newest first, equal created_at by id descending', async () => {
    const a = await create({ ...post, title: 'a' });
    const b = await create({ ...post, title: 'b' });
    const draft = await create({ title: 'draft', content: 'c', published: false });
    const c = await create({ ...post, title: 'c' });
    const newest = await create({ ...post, title: 'newest' });
    const oldest = await create({ ...post, title: 'oldest' });
    for (const { id } of [a, b, c, draft]) await stamp(id, '2024-05-01T12:00:00.000Z');
    await stamp(newest.id, '2024-06-01T00:00:00.000Z');
    await stamp(oldest.id, '2024-01-01T00:00:00.000Z');

    const reply = await api.request('GET', '/api/posts');
    expect(reply.status).toBe(200);
    expect(Array.isArray(reply.json)).toBe(true);
    expect(reply.json.map((p: { title: string }) => p.title)).toEqual(['newest', 'c', 'b', 'a', 'oldest']);
    expect(reply.json[1]).toEqual({ ...c, created_at: '2024-05-01T12:00:00.000Z', updated_at: '2024-05-01T12:00:00.000Z' });
  });

  it('shows a post once it is published, and hides it when unpublished', async () => {
    const draft = await create({ title: 'draft', content: 'c' });
    await api.request('PUT', `/api/posts/${draft.id}`, { body: { published: true } });
    expect((await api.request('GET', '/api/posts')).json.map((p: { id: number }) => p.id)).toEqual([draft.id]);
    await api.request('PUT', `/api/posts/${draft.id}`, { body: { published: false } });
    expect((await api.request('GET', '/api/posts')).json).toEqual([]);
  });
});

describe('posts: update', () => {
  it('applies the body over the stored post: fields not sent keep their values', async () => {
    const created = await create();
    const reply = await api.request('PUT', `/api/posts/${created.id}`, { body: { title: 'Renamed' } });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.json).toMatchObject({ id: created.id, title: 'Renamed', content: post.content, published: true });
    const detail = await api.request('GET', `/api/posts/${created.id}`);
    expect(detail.json).toEqual(reply.json);
  });

  it('sets updated_at on every save and keeps created_at', async () => {
    const created = await create();
    await stamp(created.id, '2020-01-01T00:00:00.000Z');
    const reply = await api.request('PUT', `/api/posts/${created.id}`, { body: {} });
    expect(reply.status).toBe(200);
    expect(reply.json.created_at).toBe('2020-01-01T00:00:00.000Z');
    expect(reply.json.updated_at).toMatch(TIMESTAMP);
    expect(reply.json.updated_at > '2020-01-01T00:00:00.000Z').toBe(true);
    expect((await api.request('GET', `/api/posts/${created.id}`)).json).toEqual(reply.json);
  });

  it('ignores id, created_at, updated_at and unknown fields, so a GET result can be PUT back', async () => {
    const created = await create();
    const reply = await api.request('PUT', `/api/posts/${created.id}`, {
      body: { ...created, id: 999, created_at: '2000-01-01T00:00:00.000Z', updated_at: '2000-01-01T00:00:00.000Z', x: 1 },
    });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ ...created, updated_at: reply.json.updated_at });
    expect(reply.json.updated_at.startsWith('2000')).toBe(false);
    expect((await api.request('GET', '/api/posts/999')).status).toBe(404);
  });

  it('refuses an invalid body with 400 naming the field, and keeps the stored post', async () => {
    const created = await create();
    const path = `/api/posts/${created.id}`;
    expect(expectTextError(await api.request('PUT', path, { body: { title: 'x'.repeat(201) } }), 400)).toMatch(/^title: /);
    expect(expectTextError(await api.request('PUT', path, { body: { published: 'true' } }), 400)).toMatch(/^published: /);
    expect(expectTextError(await api.request('PUT', path, { body: { content: null } }), 400)).toMatch(/^content: /);
    const broken = await api.request('PUT', path, { body: '{"title":', headers: { 'content-type': 'application/json' } });
    expect(expectTextError(broken, 400)).toMatch(/^JSON parse error: /);
    expect(expectTextError(await api.request('PUT', path, { body: '[]' }), 400)).toBe('Expected a JSON object.');
    expect((await api.request('GET', path)).json).toEqual(created);
  });

  it('leaves a post equal to exactly one of 20 concurrent complete PUTs', async () => {
    const created = await create();
    const bodies = Array.from({ length: 20 }, (_, i) => ({
      title: `title ${i}`,
      content: `content ${i}`,
      published: i % 2 === 0,
    }));
    const replies = await Promise.all(
      bodies.map((body) => api.request('PUT', `/api/posts/${created.id}`, { body })),
    );
    replies.forEach((reply, i) => {
      expect(reply.status).toBe(200);
      expect(reply.json).toMatchObject(bodies[i]!);
    });
    const stored = (await api.request('GET', `/api/posts/${created.id}`)).json;
    const { title, content, published } = stored;
    expect(bodies).toContainEqual({ title, content, published });
    expect(stored.created_at).toBe(created.created_at);
  });
});

describe('posts: delete', () => {
  it('answers 204 with an empty body, after which the post is gone', async () => {
    const created = await create();
    const reply = await api.request('DELETE', `/api/posts/${created.id}`);
    expect(reply.status).toBe(204);
    expect(reply.body).toBe('');
    expectTextError(await api.request('GET', `/api/posts/${created.id}`), 404);
    expectTextError(await api.request('DELETE', `/api/posts/${created.id}`), 404);
    expect((await api.request('GET', '/api/posts')).json).toEqual([]);
  });
});

describe('posts: routes', () => {
  it('has no trailing-slash or versioned variants', async () => {
    const created = await create();
    expectTextError(await api.request('GET', '/api/posts/'), 404);
    expectTextError(await api.request('GET', `/api/posts/${created.id}/`), 404);
    expectTextError(await api.request('GET', `/api/posts/${created.id}/comments`), 404);
    expect((await api.request('GET', '/api/v1/posts/')).status).toBe(404);
  });

  it('answers another method on a known path with 405 and Allow', async () => {
    const created = await create();
    const patch = await api.request('PATCH', `/api/posts/${created.id}`, { body: { title: 'x' } });
    expectTextError(patch, 405);
    expect(patch.headers.allow).toBe('GET, PUT, DELETE, HEAD');
    const del = await api.request('DELETE', '/api/posts');
    expectTextError(del, 405);
    expect(del.headers.allow).toBe('GET, POST, HEAD');
  });
});

describe('posts: storage failures', () => {
  /** Makes every write to posts fail inside the database, with a message that must not leak. */
  async function breakWrites(): Promise<void> {
    const { db } = api.database;
    if (testDialect === 'postgres') {
      await sql`CREATE FUNCTION posts_refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'secret-disk-fault'; END $$ LANGUAGE plpgsql`.execute(db);
      await sql`CREATE TRIGGER posts_refuse BEFORE INSERT OR UPDATE OR DELETE ON posts FOR EACH ROW EXECUTE FUNCTION posts_refuse()`.execute(db);
    } else {
      for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
        await sql.raw(`CREATE TRIGGER posts_refuse_${event} BEFORE ${event} ON posts BEGIN SELECT RAISE(ABORT, 'secret-disk-fault'); END`).execute(db);
      }
    }
  }

  it('answers a failed write with 500 and a plain-text message, without the cause', async () => {
    const created = await create();
    await breakWrites();
    const replies = {
      'Could not save the post.': [
        await api.request('POST', '/api/posts', { body: post }),
        await api.request('PUT', `/api/posts/${created.id}`, { body: { title: 'new' } }),
      ],
      'Could not delete the post.': [await api.request('DELETE', `/api/posts/${created.id}`)],
    };
    for (const [message, list] of Object.entries(replies)) {
      for (const reply of list) {
        expect(expectTextError(reply, 500)).toBe(message);
        expect(reply.body).not.toMatch(/secret-disk-fault|trigger|INSERT|UPDATE|DELETE|at /);
      }
    }
    expect((await api.request('GET', `/api/posts/${created.id}`)).json).toEqual(created);
  });
});

describe('posts: limits', () => {
  it('answers a body over MAX_BODY_BYTES with 413 as plain text', async () => {
    await api.close();
    api = await startApi({ MAX_BODY_BYTES: '1024' });
    const reply = await api.request('POST', '/api/posts', { body: { title: 't', content: 'x'.repeat(2000) } });
    expectTextError(reply, 413);
  });
});
