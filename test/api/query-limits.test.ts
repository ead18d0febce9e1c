/**
 * The limits the contract puts on list queries and request text (issue 18, items 2 and 9):
 * search terms and string filter values of at most 200 characters, at most 1000 `in` members
 * (bare dates included), and NUL refused in every JSON body by the field it is in. Each answers
 * 200 or a 400 naming the parameter or field, on SQLite and PostgreSQL alike, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let admin: TestUser;

/** A 200-character search term made of one repeated character: the worst case for a naive matcher. */
const TERM = 'x'.repeat(200);
const ARTICLES = 3000;
/** Every hundredth article has TERM inside its body, between other text. */
const MATCHING = ARTICLES / 100;

beforeAll(async () => {
  api = await startApi();
  admin = await api.user('admin', { superuser: true });
  const rows = Array.from({ length: ARTICLES }, (_, i) => ({
    title: `${i} ${'x'.repeat(195)}`,
    body: i % 100 === 0 ? `before ${TERM.toUpperCase()} after` : `${'x'.repeat(150)} y ${'x'.repeat(150)}`,
    author_id: admin.id,
    created_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
  }));
  for (let start = 0; start < rows.length; start += 500) {
    await api.database.db.insertInto('articles').values(rows.slice(start, start + 500)).execute();
  }
  // Users who joined on known days (at an hour, the day's last millisecond, its first), for `in` with bare dates.
  await api.database.db
    .insertInto('users')
    .values(
      [
        [3, 3_600_000],
        [500, 86_399_999],
        [999, 0],
      ].map(([day, time]) => ({
        username: `joined${day}`,
        email: '',
        is_active: 1,
        password: 'scrypt$unused',
        date_joined: joinedAt(day!, time!),
      })),
    )
    .execute();
});
afterAll(() => api.close());

const joinedAt = (day: number, time: number): string => new Date(Date.UTC(2000, 0, 1) + day * 86_400_000 + time).toISOString();

const list = (resource: string, query: string): Promise<Reply> => api.request('GET', `/api/v1/${resource}/?${query}`, { token: admin.token });

function expectRefused(reply: Reply, parameter: string, message: RegExp): void {
  expect(reply.status, reply.body.slice(0, 300)).toBe(400);
  expect(reply.json.code).toBe('validation_failed');
  expect(Object.keys(reply.json.details)).toEqual([parameter]);
  expect(reply.json.details[parameter][0]).toMatch(message);
}

describe('search terms and string filter values of at most 200 characters', () => {
  it('finds a 200-character term, in any case, over thousands of rows', async () => {
    const reply = await list('articles', `search=${TERM}&page_size=100`);
    expect(reply.status).toBe(200);
    expect(reply.json.count).toBe(MATCHING);
    for (const article of reply.json.results) expect(article.body.toLowerCase()).toContain(TERM);
  });

  it('finds every term of a search of several 200-character terms', async () => {
    const reply = await list('articles', `search=${TERM}+${'X'.repeat(200)}+before+after`);
    expect(reply.status).toBe(200);
    expect(reply.json.count).toBe(MATCHING);
  });

  it('refuses a 201-character search term, naming search', async () => {
    expectRefused(await list('articles', `search=short+${'x'.repeat(201)}`), 'search', /no more than 200 characters/);
  });

  it('counts characters, not UTF-16 units: 200 emoji are a valid term', async () => {
    const emoji = encodeURIComponent('😀'.repeat(200));
    expect((await list('articles', `search=${emoji}`)).status).toBe(200);
    expectRefused(await list('articles', `search=${emoji}${encodeURIComponent('😀')}`), 'search', /no more than 200 characters/);
  });

  it.each([
    ['title', 'x'],
    ['title__iexact', 'x'],
    ['title__icontains', 'x'],
    ['title__contains', 'x'],
    ['title__startswith', 'A'],
    ['title__endswith', 'x'],
    ['title__gte', 'A'],
  ])('%s: a 200-character value is used, a 201-character one refused', async (parameter, character) => {
    const fine = await list('articles', `${parameter}=${character.repeat(200)}`);
    expect(fine.status, fine.body.slice(0, 300)).toBe(200);
    expectRefused(await list('articles', `${parameter}=${character.repeat(201)}`), parameter, /no more than 200 characters/);
  });

  it('finds 200-character matches with icontains over thousands of rows', async () => {
    const reply = await list('articles', `title__icontains=${'X'.repeat(195)}`);
    expect(reply.json.count).toBe(ARTICLES);
  });

  it('applies to each member of in and each bound of range', async () => {
    expect((await list('articles', `title__in=a,${'x'.repeat(200)}`)).status).toBe(200);
    expectRefused(await list('articles', `title__in=a,${'x'.repeat(201)},b`), 'title__in', /no more than 200 characters/);
    expect((await list('articles', `title__range=0,${'z'.repeat(200)}`)).json.count).toBe(ARTICLES);
    expectRefused(await list('articles', `title__range=0,${'z'.repeat(201)}`), 'title__range', /no more than 200 characters/);
  });

  it('leaves values of other types to their own rules', async () => {
    expect((await list('users', `id__in=${Array.from({ length: 300 }, (_, i) => i + 1).join(',')}`)).status).toBe(200);
  });
});

describe('in with up to 1000 members', () => {
  const days = (count: number): string[] =>
    Array.from({ length: count }, (_, i) => new Date(Date.UTC(2000, 0, 1) + i * 86_400_000).toISOString().slice(0, 10));

  it('1000 bare dates each mean their whole day', async () => {
    const reply = await list('users', `date_joined__in=${days(1000).join(',')}&ordering=username`);
    expect(reply.status, reply.body.slice(0, 300)).toBe(200);
    expect(reply.json.results.map((user: { username: string }) => user.username)).toEqual(['joined3', 'joined500', 'joined999']);
  });

  it('bare dates mixed with a timestamp', async () => {
    const reply = await list('users', `date_joined__in=${days(999).slice(501).join(',')},${joinedAt(500, 86_399_999)},${joinedAt(999, 0)}&ordering=username`);
    expect(reply.status, reply.body.slice(0, 300)).toBe(200);
    expect(reply.json.results.map((user: { username: string }) => user.username)).toEqual(['joined500', 'joined999']);
  });

  it('a few bare dates, as many ranges', async () => {
    const reply = await list('users', `date_joined__in=${days(1000).slice(499, 502).join(',')},${days(1000)[3]}&ordering=username`);
    expect(reply.json.results.map((user: { username: string }) => user.username)).toEqual(['joined3', 'joined500']);
  });

  it('refuses 1001 members, naming the parameter', async () => {
    expectRefused(await list('users', `date_joined__in=${days(1001).join(',')}`), 'date_joined__in', /at most 1000 values/);
    expectRefused(await list('users', `username__in=${Array.from({ length: 1001 }, (_, i) => `u${i}`).join(',')}`), 'username__in', /at most 1000 values/);
  });
});

describe('ordering', () => {
  it('a field named again (thousands of times) keeps the order its first mention set', async () => {
    const reply = await list('articles', `ordering=-title,${'title,'.repeat(2500)}title&page_size=3`);
    expect(reply.status, reply.body.slice(0, 300)).toBe(200);
    const titles = reply.json.results.map((article: { title: string }) => article.title);
    expect(titles).toEqual([...titles].sort().reverse());
    expect(titles[0]).toMatch(/^999 /);
  });
});

describe('NUL in request bodies', () => {
  it.each([
    ['/api/v1/auth/jwt/', 'username'],
    ['/api/v1/auth/jwt/', 'password'],
    ['/api/v1/auth/login/', 'username'],
    ['/api/v1/auth/token/', 'username'],
    ['/api/v1/auth/token/', 'password'],
  ])('POST %s with NUL in %s: 400 naming the field', async (path, field) => {
    const body = { username: 'admin', password: PASSWORD, [field]: `${field === 'username' ? 'admin' : PASSWORD}\u0000` };
    const reply = await api.request('POST', path, { body });
    expectRefused(reply, field, /Null characters are not allowed/);
  });

  it('a credential with NUL is refused before it is looked at (refresh)', async () => {
    expectRefused(await api.request('POST', '/api/v1/auth/jwt/refresh/', { body: { refresh: 'a\u0000b' } }), 'refresh', /Null characters/);
  });

  it('names the record and field in a bulk create, and stores none of it', async () => {
    const reply = await api.request('POST', '/api/v1/articles/', { token: admin.token, body: [{ title: 'fine' }, { title: 'bad\u0000' }] });
    expectRefused(reply, '1.title', /Null characters/);
    expect((await list('articles', 'title=fine')).json.count).toBe(0);
  });

  it('names the top-level field of a nested value', async () => {
    const reply = await api.request('PATCH', `/api/v1/users/${admin.id}/`, { token: admin.token, body: { email: { deep: ['\u0000'] } } });
    expectRefused(reply, 'email', /Null characters/);
  });

  it('on /api/posts, as plain text naming the field', async () => {
    const reply = await api.request('POST', '/api/posts', { body: { title: 'a\u0000', content: 'c' } });
    expect(reply.status).toBe(400);
    expect(reply.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(reply.body).toBe('title: Null characters are not allowed.');
  });

  it('an escaped backslash before u0000 is ordinary text', async () => {
    const reply = await api.request('POST', '/api/v1/auth/token/', { body: { username: 'admin\\u0000', password: PASSWORD } });
    expect(reply.status).toBe(400);
    expect(reply.json.details).toEqual({ non_field_errors: ['Unable to log in with the provided credentials.'] });
  });
});
