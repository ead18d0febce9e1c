/**
 * Lists of one shape (the same filters, lookups, search terms and ordering) run one statement,
 * compiled once, with each request's own values. Requests of one shape in flight together, from
 * users of different scopes, each get their own records: no value, scope or page of one request
 * answers another.
 */
import { describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { servedWithUser, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Task = model('tasks', {
  id: fields.id(),
  title: fields.string({ maxLength: 50 }),
  rank: fields.integer(),
  note: fields.string({ maxLength: 50, nullable: true }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});

const tasks = serializer(Task, { fields: ['id', 'title', 'rank', 'note'], search: ['title'] });
const mine = ({ user }: { user: { id: number } | null }) => ({ owner_id: user?.id ?? null });
const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('tasks', { serializer: tasks, scope: mine, filterFields: ['title', 'rank', 'note'], orderingFields: ['rank', 'title'], pageSize: 10 }),
      collection('task-pages', { serializer: tasks, scope: mine, pagination: 'cursor', pageSize: 2, orderingFields: ['rank'] }),
    ],
  }),
);

const served = servedWithUser(app, 'ann');

interface Task {
  readonly title: string;
  readonly rank: number;
  readonly note: string | null;
}

/** Each user's tasks: titles that LIKE's wildcards would match wrongly if they were not escaped. */
const tasksOf = (owner: string): Task[] =>
  Array.from({ length: 8 }, (_, index) => ({
    title: `${owner} ${['50%', 'a_b', 'ab', 'plain'][index % 4]} ${index}`,
    rank: index,
    note: index % 3 === 0 ? null : `note ${index}`,
  }));

/** The query, and what it selects of a user's tasks (in the list's order: rank, then id). */
interface Case {
  readonly query: string;
  readonly selects: (task: Task) => boolean;
  readonly page?: { readonly size: number; readonly number: number };
}

const cases = (owner: string): Case[] => [
  ...[0, 3, 6].map((rank) => ({ query: `rank=${rank}`, selects: (task: Task) => task.rank === rank })),
  ...[1, 2, 3].map((count) => {
    const ranks = [1, 4, 7].slice(0, count);
    return { query: `rank__in=${ranks.join(',')}`, selects: (task: Task) => ranks.includes(task.rank) };
  }),
  { query: 'note__isnull=true', selects: (task) => task.note === null },
  { query: 'note__isnull=false', selects: (task) => task.note !== null },
  ...['50%', 'a_b', 'ab'].map((term) => ({ query: `search=${encodeURIComponent(term)}`, selects: (task: Task) => task.title.includes(term) })),
  ...['50%', 'a_b'].map((text) => ({ query: `title__contains=${encodeURIComponent(`${owner} ${text}`)}`, selects: (task: Task) => task.title.includes(`${owner} ${text}`) })),
  { query: 'rank__range=2,5', selects: (task) => task.rank >= 2 && task.rank <= 5 },
  { query: 'rank__range=5,6', selects: (task) => task.rank >= 5 && task.rank <= 6 },
  ...[1, 2, 3].map((number) => ({ query: '', selects: () => true, page: { size: 3, number } })),
  ...[1, 2].map((number) => ({ query: 'rank__gte=2', selects: (task: Task) => task.rank >= 2, page: { size: 2, number } })),
];

describe('lists of one shape', () => {
  let users: { user: TestUser; owner: string }[];

  it('answer each request in flight with its own values, scope and page', async () => {
    const { api } = served;
    users = [{ user: served.user, owner: 'ann' }, ...(await Promise.all(['bo', 'cy'].map(async (owner) => ({ user: await api.user(owner), owner }))))];
    for (const { user, owner } of users) {
      for (const task of tasksOf(owner)) expect((await api.request('POST', '/api/v1/tasks/', { token: user.token, body: task })).status).toBe(201);
    }
    const requests = users.flatMap(({ user, owner }) => cases(owner).map((one) => ({ user, owner, ...one })));
    // Shuffled, so requests of one shape and different users and values are in flight together.
    requests.sort((a, b) => (a.query + a.owner).length % 7 - (b.query + b.owner).length % 7 || a.owner.localeCompare(b.owner));
    for (let round = 0; round < 3; round++) {
      const replies = await Promise.all(
        requests.map(({ user, query, page }) => {
          const paged = page ? `${query}&ordering=rank&page_size=${page.size}&page=${page.number}` : `${query}&ordering=rank&page_size=10`;
          return api.request('GET', `/api/v1/tasks/?${paged}`, { token: user.token });
        }),
      );
      requests.forEach(({ owner, query, selects, page }, index) => {
        const reply = replies[index]!;
        expect(reply.status, `${owner}: ${query}`).toBe(200);
        const selected = tasksOf(owner).filter(selects);
        const shown = page ? selected.slice((page.number - 1) * page.size, page.number * page.size) : selected;
        expect(reply.json.results.map((task: Task) => task.title), `${owner}: ${query} ${JSON.stringify(page)}`).toEqual(shown.map((task) => task.title));
        expect(reply.json.count, `${owner}: ${query}`).toBe(selected.length);
      });
    }
  });

  it('page by cursor forwards and back, each user through their own tasks', async () => {
    const { api } = served;
    const walks = users.map(async ({ user, owner }) => {
      const titles = tasksOf(owner).map((task) => task.title);
      const seen: string[] = [];
      let reply = await api.request('GET', '/api/v1/task-pages/?ordering=rank', { token: user.token });
      for (;;) {
        seen.push(...reply.json.results.map((task: Task) => task.title));
        if (!reply.json.next) break;
        reply = await api.request('GET', new URL(reply.json.next).pathname + new URL(reply.json.next).search, { token: user.token });
      }
      expect(seen).toEqual(titles);
      const back = await api.request('GET', new URL(reply.json.previous).pathname + new URL(reply.json.previous).search, { token: user.token });
      expect(back.json.results.map((task: Task) => task.title)).toEqual(titles.slice(4, 6));
    });
    await Promise.all(walks);
  });
});
