import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { User, collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';

const people = defineApp({
  collections: [
    collection('people', {
      serializer: serializer(User, { fields: ['id', 'username', 'is_active', 'date_joined'], readOnly: ['id', 'date_joined'] }),
      filterFields: ['is_active'],
      orderingFields: ['username', 'date_joined'],
      pagination: 'cursor',
      pageSize: 3,
    }),
  ],
});

let api: TestApi;
let admin: TestUser;

beforeAll(async () => {
  api = await startApi({}, people);
  admin = await api.user('admin');
  for (const [index, name] of ['bo', 'cy', 'di', 'ed', 'flo', 'gus', 'hal'].entries()) {
    await api.database.db
      .insertInto('users')
      .values({ username: name, email: '', password: 'x', is_active: index % 2, date_joined: `2024-01-0${1 + (index % 3)}T00:00:00.000Z` })
      .execute();
  }
});
afterAll(() => api.close());

const relative = (url: string) => new URL(url).pathname + new URL(url).search;
const get = (url: string) => api.request('GET', url, { token: admin.token });

async function walk(start: string, link: 'next' | 'previous'): Promise<{ names: string[]; last: Reply }> {
  const names: string[] = [];
  let url: string | null = start;
  let last!: Reply;
  while (url) {
    last = await get(url);
    expect(last.status, JSON.stringify(last.json)).toBe(200);
    names.push(...last.json.results.map((person: { username: string }) => person.username));
    url = last.json[link] ? relative(last.json[link]) : null;
  }
  return { names, last };
}

describe('cursor pagination', () => {
  it('walks every record once, forwards, in the ordering, ties by id', async () => {
    const first = await get('/api/v1/people/?ordering=-date_joined');
    expect(first.json.count).toBeNull();
    expect(first.json.previous).toBeNull();
    expect(first.json.next).toContain('cursor=');
    const { names } = await walk('/api/v1/people/?ordering=-date_joined', 'next');
    // date_joined: bo,ed,hal = 01; cy,flo = 02; di,gus = 03; admin = today.
    expect(names).toEqual(['admin', 'di', 'gus', 'cy', 'flo', 'bo', 'ed', 'hal']);
  });

  it('walks back with previous links to the first page', async () => {
    const { last } = await walk('/api/v1/people/?ordering=username', 'next');
    expect(last.json.next).toBeNull();
    const back = await walk(relative(last.json.previous), 'previous');
    // The last page is [gus, hal]; going back reads [di, ed, flo], then [admin, bo, cy].
    expect(back.names).toEqual(['di', 'ed', 'flo', 'admin', 'bo', 'cy']);
  });

  it('stays stable while records are inserted before the cursor', async () => {
    const first = await get('/api/v1/people/?ordering=username');
    expect(first.json.results.map((p: { username: string }) => p.username)).toEqual(['admin', 'bo', 'cy']);
    await api.database.db.insertInto('users').values({ username: 'aaron', email: '', password: 'x', is_active: 1, date_joined: '2024-01-01T00:00:00.000Z' }).execute();
    const second = await get(relative(first.json.next));
    expect(second.json.results.map((p: { username: string }) => p.username)).toEqual(['di', 'ed', 'flo']);
    await api.database.db.deleteFrom('users').where('username', '=', 'aaron').execute();
  });

  it('keeps filters in the links', async () => {
    const { names } = await walk('/api/v1/people/?is_active=true&ordering=username', 'next');
    expect(names).toEqual(['admin', 'cy', 'ed', 'gus']);
  });

  it('refuses a tampered cursor or one made for another ordering', async () => {
    const first = await get('/api/v1/people/?ordering=username');
    const cursor = new URL(first.json.next).searchParams.get('cursor')!;
    const [payload, signature] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify(['username', ['zzz', 1], 'next'])).toString('base64url');
    for (const bad of [`${forged}.${signature}`, `${payload}.AAAA`, 'garbage']) {
      const reply = await get(`/api/v1/people/?ordering=username&cursor=${bad}`);
      expect(reply.status).toBe(400);
      expect(reply.json.details.cursor).toEqual(['Invalid cursor.']);
    }
    const other = await get(`/api/v1/people/?ordering=-username&cursor=${cursor}`);
    expect(other.status).toBe(400);
    expect(other.json.details.cursor[0]).toContain('another ordering');
  });

  it('refuses nullable ordering fields when the collection is declared', () => {
    const Thing = model('things', { id: fields.id(), label: fields.string({ nullable: true }) });
    const declare = (ordering: string[]) => () =>
      collection('things', { serializer: serializer(Thing, { fields: ['id', 'label'] }), orderingFields: ordering, pagination: 'cursor' });
    expect(declare(['label'])).toThrow(/cannot order by nullable fields \(label\)/);
    expect(declare(['id'])).not.toThrow();
  });
});
