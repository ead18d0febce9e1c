/** Live changes between two processes over PostgreSQL's LISTEN/NOTIFY (no Redis), and the listening connection's loss. */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.js';
import { createTestDatabase, onPostgres, withApplicationName, type TestDatabase } from '../support/database.js';
import { openEvents } from '../support/event-stream.js';
import { items, liveItemsApp } from '../support/live-items.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { User, collection, defineApp, fields, isOwner, serializer } from '../../src/framework/index.js';
import { liveAcrossProcesses, rightsAcrossWorkers } from '../support/live-processes.js';
import { startServer } from '../support/spawned-server.js';
import { eventually } from './spawned.js';

const databases: TestDatabase[] = [];
const fresh = async (): Promise<string> => {
  const database = await createTestDatabase();
  databases.push(database);
  return database.url;
};
afterAll(() => Promise.all(databases.map((database) => database.drop())));

describe('live changes over LISTEN/NOTIFY', () => {
  liveAcrossProcesses({}, fresh);

  let api: TestApi | undefined;
  afterAll(() => api?.close());

  it('tells every stream to refetch once its lost listening connection is back, then delivers again', async () => {
    // The app's connections carry this name; its listening one, the name and `-listen`.
    const name = `live_${randomBytes(4).toString('hex')}`;
    api = await startApi({}, liveItemsApp, { databaseUrl: withApplicationName(await fresh(), name) });
    const alice = await api.user('alice');
    const stream = await openEvents(`http://127.0.0.1:${await api.listen()}/api/v1/items/events/`, { authorization: `Bearer ${alice.token}` });
    const create = async (text: string) => (await api!.request('POST', '/api/v1/items/', { token: alice.token, body: { text } })).json as { id: number };
    const ready = await create('ready');
    expect(await stream.next()).toMatchObject({ event: 'created', data: { id: ready.id } });
    const { rows } = await onPostgres((client) =>
      client.query('SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1', [`${name}-listen`]),
    );
    expect(rows).toEqual([{ ended: true }]);
    expect(await stream.next()).toMatchObject({ event: 'reset', data: {} });
    const after = await create('after');
    expect(await stream.next()).toMatchObject({ event: 'created', data: { id: after.id } });
    stream.close();
  });
});

/** An app whose user model has a column of its own, which its permissions may read; and a live collection. */
const Member = User.extend({ plan: fields.string({ maxLength: 20, default: 'free' }) });
const members = collection('members', {
  serializer: serializer(Member, { fields: ['id', 'email', 'plan'], readOnly: ['id'] }),
  permissions: { partial_update: [isOwner('id')] },
});
const membersApp = withGeneratedMigrations(defineApp({ collections: [items, members], userModel: Member }));

/**
 * `writes` made while a client of its own listens on the app's channel at `url`; then the users
 * the messages named as their credentials changed, once `last` is among them (at most 5 s).
 */
async function credentialsTold(url: string, last: number, writes: (heard: readonly Record<string, unknown>[]) => Promise<void>): Promise<number[]> {
  return onPostgres(async (client) => {
    const heard: Record<string, unknown>[] = [];
    client.on('notification', ({ payload }) => heard.push(JSON.parse(payload!) as Record<string, unknown>));
    const { rows } = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
    await client.query(`LISTEN ${client.escapeIdentifier(`restfold_changes:${rows[0]!.schema}`)}`);
    await writes(heard);
    const credentials = () => heard.flatMap((message) => (message.credentials as number[] | undefined) ?? []);
    await eventually(async () => (credentials().includes(last) ? true : undefined), `user ${last} told`, 5);
    return credentials();
  }, url);
}

describe('what a process tells the others over LISTEN/NOTIFY', () => {
  const apis: TestApi[] = [];
  afterAll(() => Promise.all(apis.map((api) => api.close())));

  it("tells them of a users write only when it changes what a credential gives, and of a change without the columns it set", async () => {
    const url = await fresh();
    const api = await startApi({}, undefined, { databaseUrl: url });
    apis.push(api);
    const [root, alice, bob] = [await api.user('root', { superuser: true }), await api.user('alice'), await api.user('bob')];
    let articleId = 0;
    const told = await credentialsTold(url, alice.id, async (heard) => {
      const email = await api.request('PATCH', `/api/v1/users/${alice.id}/`, { token: alice.token, body: { email: 'alice.new@example.com' } });
      expect(email.json).toMatchObject({ email: 'alice.new@example.com' });
      const article = await api.request('POST', '/api/v1/articles/', { token: alice.token, body: { title: 'Told', body: 'Without its columns.' } });
      articleId = article.json.id;
      expect((await api.request('PATCH', `/api/v1/articles/${articleId}/`, { token: alice.token, body: { title: 'Told again' } })).status).toBe(200);
      expect((await api.request('PATCH', `/api/v1/users/${bob.id}/`, { token: root.token, body: { is_active: false } })).status).toBe(200);
      expect((await api.request('PATCH', `/api/v1/users/${alice.id}/`, { token: alice.token, body: { username: 'alice2' } })).status).toBe(200);
      // The article's change, heard before the last credentials: sent in order.
      await eventually(async () => (heard.some((message) => message.table === 'articles' && message.kind === 'updated') ? true : undefined), 'the article updated told', 5);
      expect(heard).toContainEqual({ table: 'articles', kind: 'updated', ids: [articleId] });
    });
    // Sent in order: had Alice's e-mail been told, she would have been named before Bob.
    expect(told).toEqual([bob.id, alice.id]);
  });

  it("tells them of a write to a column the app added to its user model, which its permissions may read", async () => {
    const url = await fresh();
    const api = await startApi({}, membersApp, { databaseUrl: url });
    apis.push(api);
    const [alice, bob] = [await api.user('alice'), await api.user('bob')];
    const told = await credentialsTold(url, alice.id, async () => {
      expect((await api.request('PATCH', `/api/v1/members/${bob.id}/`, { token: bob.token, body: { email: 'bob.new@example.com' } })).json).toMatchObject({ email: 'bob.new@example.com' });
      expect((await api.request('PATCH', `/api/v1/members/${alice.id}/`, { token: alice.token, body: { plan: 'pro' } })).json).toMatchObject({ plan: 'pro' });
    });
    expect(told).toEqual([alice.id]);
  });
});

describe('rights across the workers of one server, over LISTEN/NOTIFY', () => {
  // Rechecked once a minute only: within 5 s, only the message between the workers ends the streams.
  rightsAcrossWorkers({ LIVE_RECHECK_MS: '60000' }, fresh);
});

describe('live changes across the workers of one server', () => {
  it('reach a stream on one worker from writes every worker answers (WORKERS=2)', async () => {
    const server = await startServer({ env: { DATABASE_URL: await fresh(), WORKERS: '2', THROTTLE_USER: 'off', THROTTLE_ANON: 'off' } });
    try {
      server.cli(['createuser', '--username', 'writer', '--password', 'writer-pass']);
      const token = server.cli(['token', 'create', '--username', 'writer']).trim();
      const headers = { authorization: `Bearer ${token}` };
      const stream = await openEvents(`${server.url}/api/v1/articles/events/`, headers);
      // Each create on a connection of its own, which the cluster hands to either worker in turn.
      const titles = Array.from({ length: 6 }, (_, n) => `across workers ${n}`);
      for (const title of titles) {
        const reply = await fetch(`${server.url}/api/v1/articles/`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', connection: 'close' },
          body: JSON.stringify({ title, body: 'One of six.' }),
        });
        expect(reply.status).toBe(201);
      }
      const heard = [];
      while (heard.length < titles.length) heard.push(await stream.next());
      expect(heard.map((event) => [event.event, event.data.title])).toEqual(titles.map((title) => ['created', title]));
      stream.close();
    } finally {
      await server.stop();
    }
  }, 60_000);
});
