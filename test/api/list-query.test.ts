import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let admin: TestUser;

/** Users with known values; admin (id 1) is created first and is part of every unfiltered list. */
const people = [
  { username: 'anna', email: 'anna@example.com', is_active: true, date_joined: '2024-01-01T00:00:00.000Z' },
  { username: 'Bert', email: 'bert@Example.org', is_active: false, date_joined: '2024-01-01T23:59:59.999Z' },
  { username: 'carl_1', email: '', is_active: true, date_joined: '2024-01-02T00:00:00.000Z' },
  { username: 'dora%', email: 'dora@example.com', is_active: true, date_joined: '2024-06-15T12:30:00.123Z' },
  { username: 'émile', email: 'emile@example.fr', is_active: false, date_joined: '2025-03-01T08:00:00.000Z' },
  { username: 'ÉVA', email: 'eva@example.fr', is_active: true, date_joined: '2025-03-01T08:00:00.000Z' },
];

beforeAll(async () => {
  api = await startApi();
  admin = await api.user('admin', { superuser: true });
  await api.database.db
    .updateTable('users')
    .set({ date_joined: '2026-01-01T00:00:00.000Z', email: 'admin@example.com' })
    .where('id', '=', admin.id)
    .execute();
  for (const person of people) {
    await api.database.db
      .insertInto('users')
      .values({
        ...person,
        is_active: person.is_active ? 1 : 0,
        password: 'scrypt$unused',
      })
      .execute();
  }
});
afterAll(() => api.close());

async function list(query: string): Promise<Reply> {
  return api.request('GET', `/api/v1/users/${query}`, { token: admin.token });
}
async function names(query: string): Promise<string[]> {
  const reply = await list(query);
  expect(reply.status, JSON.stringify(reply.json)).toBe(200);
  return reply.json.results.map((user: { username: string }) => user.username);
}

describe('filters on strings', () => {
  it.each([
    ['username=anna', ['anna']],
    ['username__exact=Bert', ['Bert']],
    ['username=bert', []],
    ['username__iexact=bert', ['Bert']],
    ['username__iexact=ÉMILE', ['émile']],
    ['username__contains=r', ['Bert', 'carl_1', 'dora%']],
    ['username__contains=R', []],
    ['username__icontains=R', ['Bert', 'carl_1', 'dora%']],
    ['username__icontains=éva', ['ÉVA']],
    ['username__contains=%25', ['dora%']],
    ['username__contains=_', ['carl_1']],
    ['username__startswith=d', ['dora%']],
    ['username__startswith=D', []],
    ['username__endswith=_1', ['carl_1']],
    ['username__gt=d', ['dora%', 'émile', 'ÉVA']],
    ['username__gte=dora%25', ['dora%', 'émile', 'ÉVA']],
    ['username__lt=B', []],
    ['username__lte=Bert', ['Bert']],
    ['username__in=anna,Bert,nobody', ['anna', 'Bert']],
    ['username__range=a,c', ['admin', 'anna']],
    ['username__isnull=true', []],
    ['email__isnull=false&is_active=false', ['Bert', 'émile']],
    ['email=', ['carl_1']],
    ['email__iexact=BERT@EXAMPLE.ORG', ['Bert']],
    ['email__endswith=.fr', ['émile', 'ÉVA']],
  ])('%s', async (query, expected) => {
    expect((await names(`?${query}`)).sort()).toEqual([...expected].sort());
  });
});

describe('filters on integers and booleans', () => {
  it.each([
    ['id=2', ['anna']],
    ['id__gt=5', ['émile', 'ÉVA']],
    ['id__gte=6&id__lte=6', ['émile']],
    ['id__lt=2', ['admin']],
    ['id__in=1,3,99', ['admin', 'Bert']],
    ['id__range=2,3', ['anna', 'Bert']],
    ['id__isnull=true', []],
    ['is_active=false', ['Bert', 'émile']],
    ['is_active=0', ['Bert', 'émile']],
    ['is_active__in=false', ['Bert', 'émile']],
    ['is_active=true&username__startswith=a', ['admin', 'anna']],
  ])('%s', async (query, expected) => {
    expect((await names(`?${query}`)).sort()).toEqual([...expected].sort());
  });
});

describe('filters on timestamps', () => {
  it.each([
    // A bare date means the whole UTC day for exact and for range's upper bound.
    ['date_joined=2024-01-01', ['anna', 'Bert']],
    ['date_joined__range=2024-01-01,2024-01-02', ['anna', 'Bert', 'carl_1']],
    ['date_joined__range=2024-01-02,2024-12-31', ['carl_1', 'dora%']],
    // ...and its start for the comparisons.
    ['date_joined__gt=2024-01-01', ['Bert', 'carl_1', 'dora%', 'émile', 'ÉVA', 'admin']],
    ['date_joined__gte=2025-03-01', ['émile', 'ÉVA', 'admin']],
    ['date_joined__lt=2024-01-02', ['anna', 'Bert']],
    ['date_joined__lte=2024-01-02', ['anna', 'Bert', 'carl_1']],
    ['date_joined__in=2024-01-01,2025-03-01', ['anna', 'Bert', 'émile', 'ÉVA']],
    ['date_joined=2024-06-15T12:30:00.123Z', ['dora%']],
    ['date_joined=2024-06-15T14:30:00.123%2B02:00', ['dora%']],
    ['date_joined__gt=2024-01-01T23:59:59.998Z&date_joined__lt=2024-01-02T00:00:00.001Z', ['Bert', 'carl_1']],
  ])('%s', async (query, expected) => {
    expect((await names(`?${query}`)).sort()).toEqual([...expected].sort());
  });

  it('a rendered timestamp used in an exact filter finds its own record', async () => {
    const all = await list('?page_size=100');
    for (const user of all.json.results) {
      const found = await names(`?date_joined=${encodeURIComponent(user.date_joined)}`);
      expect(found).toContain(user.username);
    }
  });
});

describe('filter errors', () => {
  it.each([
    ['password=x', 'password', /Unknown filter field "password"\. Allowed: id, username, email, is_active, date_joined/],
    ['nope=1', 'nope', /Unknown filter field "nope"/],
    ['username__regex=a', 'username__regex', /Unknown lookup "regex" for "username"\. Allowed: exact, iexact/],
    ['id__contains=1', 'id__contains', /Unknown lookup "contains" for "id"\. Allowed: exact, gt, gte, lt, lte, in, isnull, range/],
    ['is_active__gt=true', 'is_active__gt', /Allowed: exact, in, isnull/],
    ['id=abc', 'id', /valid integer/],
    ['id__in=1,x', 'id__in', /valid integer/],
    ['is_active=yes', 'is_active', /true, false/],
    ['date_joined=yesterday', 'date_joined', /ISO 8601/],
    ['date_joined=2024-02-30', 'date_joined', /valid date/],
    ['date_joined__range=2024-01-01', 'date_joined__range', /exactly two/],
    ['id__range=1,2,3', 'id__range', /exactly two/],
    ['username__isnull=maybe', 'username__isnull', /true or false/],
    ["username=a'%20OR%201=1--", null, null],
  ])('%s → 400 naming the parameter', async (query, parameter, message) => {
    const reply = await list(`?${query}`);
    if (parameter === null) {
      // SQL-shaped text is only a value: it matches nothing.
      expect(reply.status).toBe(200);
      expect(reply.json.count).toBe(0);
      return;
    }
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('validation_failed');
    expect(reply.json.details[parameter]![0]).toMatch(message!);
  });

  it('reports every bad parameter at once', async () => {
    const reply = await list('?nope=1&id=x&page=0');
    expect(Object.keys(reply.json.details).sort()).toEqual(['id', 'nope', 'page']);
  });
});

describe('search', () => {
  it.each([
    ['search=ANNA', ['anna']],
    ['search=example.fr', ['émile', 'ÉVA']],
    ['search=example%20eva', ['ÉVA']],
    ['search=%20%20bert%20%20example%20', ['Bert']],
    ['search=é', ['émile', 'ÉVA']],
    ['search=%25', ['dora%']],
    ['search=nobody', []],
    ['search=', ['admin', 'anna', 'Bert', 'carl_1', 'dora%', 'émile', 'ÉVA']],
  ])('%s', async (query, expected) => {
    expect((await names(`?${query}`)).sort()).toEqual([...expected].sort());
  });

  it('combines with filters', async () => {
    expect(await names('?search=example&is_active=false')).toEqual(['Bert', 'émile']);
  });

  it('orders and pages its matches, by a field the page does not show too', async () => {
    // On PostgreSQL a few matches are gathered first and sorted after: the ordering's column goes with them.
    expect(await names('?search=example&ordering=-date_joined,username')).toEqual(['admin', 'ÉVA', 'émile', 'dora%', 'Bert', 'anna']);
    const page = await list('?search=example&ordering=-date_joined&fields=username&page=2&page_size=2');
    expect(page.json.count).toBe(6);
    expect(page.json.results).toEqual([{ username: 'ÉVA' }, { username: 'dora%' }]);
    expect((await list('?search=example&ordering=-date_joined&page=4&page_size=2')).status).toBe(404);
  });
});

describe('ordering', () => {
  it('orders by one field either way', async () => {
    expect(await names('?ordering=username')).toEqual(['Bert', 'admin', 'anna', 'carl_1', 'dora%', 'ÉVA', 'émile']);
    expect(await names('?ordering=-username')).toEqual(['émile', 'ÉVA', 'dora%', 'carl_1', 'anna', 'admin', 'Bert']);
  });

  it('breaks ties by id ascending, whatever the direction', async () => {
    // émile (6) and ÉVA (7) joined at the same instant.
    expect(await names('?ordering=date_joined')).toEqual(['anna', 'Bert', 'carl_1', 'dora%', 'émile', 'ÉVA', 'admin']);
    expect(await names('?ordering=-date_joined')).toEqual(['admin', 'émile', 'ÉVA', 'dora%', 'carl_1', 'Bert', 'anna']);
  });

  it('uses earlier names first', async () => {
    expect(await names('?ordering=-date_joined,-username&date_joined=2025-03-01')).toEqual(['émile', 'ÉVA']);
    expect(await names('?ordering=email,username&username__in=anna,carl_1,Bert')).toEqual(['carl_1', 'anna', 'Bert']);
  });

  it('defaults to id', async () => {
    expect(await names('')).toEqual(['admin', 'anna', 'Bert', 'carl_1', 'dora%', 'émile', 'ÉVA']);
  });

  it.each(['is_active', 'password', 'username;drop table users', '-nope'])('refuses %s, naming the allowed fields', async (field) => {
    const reply = await list(`?ordering=${encodeURIComponent(field)}`);
    expect(reply.status).toBe(400);
    expect(reply.json.details.ordering[0]).toContain('Allowed: id, username, email, date_joined.');
  });
});

describe('pagination', () => {
  it('pages with next and previous links that keep every parameter', async () => {
    const first = await list('?page_size=2&ordering=id&search=e');
    expect(first.json.count).toBe(6);
    expect(first.json.previous).toBeNull();
    expect(first.json.next).toBe('http://localhost/api/v1/users/?page_size=2&ordering=id&search=e&page=2');
    const second = await api.request('GET', new URL(first.json.next).pathname + new URL(first.json.next).search, { token: admin.token });
    expect(second.json.previous).toBe('http://localhost/api/v1/users/?page_size=2&ordering=id&search=e');
    expect(second.json.next).toBe('http://localhost/api/v1/users/?page_size=2&ordering=id&search=e&page=3');
    const third = await list('?page=3&page_size=2&ordering=id&search=e');
    expect(third.json.next).toBeNull();
    expect(third.json.previous).toBe('http://localhost/api/v1/users/?page=2&page_size=2&ordering=id&search=e');
  });

  it('defaults to pages of 20 and clamps page_size to 100', async () => {
    for (let i = 0; i < 115; i++) {
      await api.database.db.insertInto('users').values({ username: `bulk${i}`, email: '', is_active: 1, password: 'x', date_joined: '2020-01-01T00:00:00.000Z' }).execute();
    }
    try {
      const plain = await list('');
      expect(plain.json.results).toHaveLength(20);
      const clamped = await list('?page_size=1000');
      expect(clamped.json.results).toHaveLength(100);
      expect(clamped.json.count).toBe(122);
      expect(clamped.json.next).toContain('page_size=1000');
      const last = await list('?page_size=1000&page=2');
      expect(last.json.results).toHaveLength(22);
      expect((await list('?page_size=1000&page=3')).status).toBe(404);
    } finally {
      await api.database.db.deleteFrom('users').where('username', 'like', 'bulk%').execute();
    }
  });

  it('answers 404 Invalid page past the last page, and an empty page 1', async () => {
    const past = await list('?page=5&page_size=2');
    expect(past.status).toBe(404);
    expect(past.json).toEqual({ error: 'Invalid page.', code: 'not_found' });
    expect((await list('?page=99999999999999999999999')).status).toBe(404);
    const empty = await list('?username=nobody');
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual({ count: 0, next: null, previous: null, results: [] });
    expect((await list('?username=nobody&page=2')).status).toBe(404);
  });

  it.each(['page=0', 'page=-1', 'page=1.5', 'page=abc', 'page=', 'page_size=0', 'page_size=x', 'page_size=-5'])(
    '%s is 400',
    async (query) => {
      const reply = await list(`?${query}`);
      expect(reply.status).toBe(400);
      expect(reply.json.code).toBe('validation_failed');
      expect(Object.keys(reply.json.details)).toEqual([query.split('=')[0]]);
    },
  );

  it('walking every page under ties yields each id exactly once', async () => {
    const seen: number[] = [];
    let url: string | null = '/api/v1/users/?ordering=date_joined&page_size=2';
    while (url) {
      const reply = await api.request('GET', url, { token: admin.token });
      seen.push(...reply.json.results.map((user: { id: number }) => user.id));
      url = reply.json.next ? new URL(reply.json.next).pathname + new URL(reply.json.next).search : null;
    }
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
  });

  it('builds links from X-Forwarded-* only behind a trusted proxy', async () => {
    const headers = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' };
    const untrusted = await api.request('GET', '/api/v1/users/?page_size=1', { token: admin.token, headers });
    expect(untrusted.json.next).toMatch(/^http:\/\/localhost\//);
    const proxied = await startApi({ TRUST_PROXY: '1' });
    try {
      const user = await proxied.user('someone');
      await proxied.user('other');
      const trusted = await proxied.request('GET', '/api/v1/users/?page_size=1', { token: user.token, headers });
      expect(trusted.json.next).toBe('https://api.example.com/api/v1/users/?page_size=1&page=2');
    } finally {
      await proxied.close();
    }
  });
});
