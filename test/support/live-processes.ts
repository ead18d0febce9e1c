/**
 * Live changes across processes: two apps serving one database, as two processes of one service
 * would, with `env` choosing what carries the changes between them (LISTEN/NOTIFY on PostgreSQL
 * without REDIS_URL, Redis pub/sub with it). A write answered by one reaches the other's subscribers,
 * as each may see it, and a rolled-back one reaches nobody.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApi, type TestApi, type TestUser } from './api.js';
import { openEvents, type EventStreamClient } from './event-stream.js';
import { liveItemsApp } from './live-items.js';
import { startServer } from './spawned-server.js';

/** `databaseUrl`: the database both apps serve (made and dropped by the caller). */
export function liveAcrossProcesses(env: Record<string, string>, databaseUrl: () => Promise<string>): void {
  let writer: TestApi;
  let reader: TestApi;
  let events: string;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    const url = await databaseUrl();
    writer = await startApi(env, liveItemsApp, { databaseUrl: url });
    reader = await startApi(env, liveItemsApp, { databaseUrl: url });
    events = `http://127.0.0.1:${await reader.listen()}/api/v1/items/events/`;
    alice = await writer.user('alice');
    bob = await writer.user('bob');
  });
  afterAll(async () => {
    await reader?.close();
    await writer?.close();
  });

  it('sends a write answered by one process to the subscribers of another, each as they may see it; a rolled-back write to none', async () => {
    const aliceStream = await openEvents(events, { authorization: `Bearer ${alice.token}` });
    const bobStream = await openEvents(events, { authorization: `Bearer ${bob.token}` });
    const create = async (user: TestUser, body: unknown) => {
      const reply = await writer.request('POST', '/api/v1/items/', { token: user.token, body });
      expect(reply.status, reply.body).toBe(201);
      return reply.json as { id: number };
    };
    // Each stream hears changes once seeded: a record of the subscriber's own, seen arriving, shows it is.
    for (const [stream, user] of [[aliceStream, alice], [bobStream, bob]] as const) {
      const { id } = await create(user, { text: 'ready' });
      expect(await stream.next()).toMatchObject({ event: 'created', data: { id } });
    }
    const { id } = await create(alice, { text: 'hers' });
    expect(await aliceStream.next()).toMatchObject({ event: 'created', data: { id, text: 'hers', owner_id: alice.id } });
    expect((await writer.request('POST', '/api/v1/items/', { token: alice.token, body: { text: 'boom' } })).status).toBe(409);
    expect((await writer.request('PATCH', `/api/v1/items/${id}/`, { token: alice.token, body: { text: 'boom' } })).status).toBe(409);
    expect((await writer.request('PATCH', `/api/v1/items/${id}/`, { token: alice.token, body: { text: 'again' } })).status).toBe(200);
    expect(await aliceStream.next()).toMatchObject({ event: 'updated', data: { id, text: 'again' } });
    // Nothing of Alice's reached Bob: his own record is the next he hears of.
    const his = await create(bob, { text: 'his' });
    expect(await bobStream.next()).toMatchObject({ event: 'created', data: { id: his.id } });
    aliceStream.close();
    bobStream.close();
  });
}

/**
 * A stream loses its rights when they change, on every worker: `restfold serve` with WORKERS=2 and
 * `env` (what carries messages between them), a user's streams open on both workers; a token
 * revoked, or a user deactivated, through either ends them all, each with `revoked`, within 5 s.
 * `databaseUrl`: the server's database (its SQLite file when undefined).
 */
export function rightsAcrossWorkers(env: Record<string, string>, databaseUrl: () => Promise<string | undefined>): void {
  it('ends the streams of a revoked token and of a deactivated user on every worker within 5 s', async () => {
    const url = await databaseUrl();
    const server = await startServer({ env: { WORKERS: '2', THROTTLE_USER: 'off', THROTTLE_ANON: 'off', THROTTLE_LOGIN: 'off', ...env, ...(url && { DATABASE_URL: url }) } });
    const opened: EventStreamClient[] = [];
    try {
      server.cli(['createuser', '--username', 'root', '--password', 'root-password', '--superuser']);
      const root = server.cli(['token', 'create', '--username', 'root']).trim();
      const tokenOf = (username: string): string => {
        server.cli(['createuser', '--username', username, '--password', `${username}-password`]);
        return server.cli(['token', 'create', '--username', username]).trim();
      };
      /** A stream of `token`'s on each worker (the cluster hands each new connection to either in turn). */
      const onBothWorkers = async (token: string): Promise<EventStreamClient[]> => {
        const byWorker = new Map<unknown, EventStreamClient>();
        for (let attempt = 0; attempt < 8 && byWorker.size < 2; attempt++) {
          const stream = await openEvents(`${server.url}/api/v1/articles/events/`, { authorization: `Bearer ${token}` });
          opened.push(stream);
          expect(stream.status).toBe(200);
          if (byWorker.has(stream.headers['x-worker-id'])) stream.close();
          else byWorker.set(stream.headers['x-worker-id'], stream);
        }
        expect(byWorker.size).toBe(2);
        return [...byWorker.values()];
      };
      const endedRevoked = async (streams: readonly EventStreamClient[]) => {
        const rests = await Promise.all(streams.map((stream) => stream.ended(5000)));
        for (const rest of rests) expect(rest.map(({ event, data }) => [event, data.code])).toEqual([['revoked', 'authentication_failed']]);
      };
      const alice = tokenOf('alice');
      const aliceStreams = await onBothWorkers(alice);
      const revoked = await fetch(`${server.url}/api/v1/auth/token/`, { method: 'DELETE', headers: { authorization: `Bearer ${alice}`, connection: 'close' } });
      expect(revoked.status).toBe(204);
      await endedRevoked(aliceStreams);

      const bob = tokenOf('bob');
      const bobStreams = await onBothWorkers(bob);
      const bobId = (await (await fetch(`${server.url}/api/v1/users/?username=bob`, { headers: { authorization: `Bearer ${root}` } })).json()).results[0].id;
      const deactivated = await fetch(`${server.url}/api/v1/users/${bobId}/`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${root}`, 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ is_active: false }),
      });
      expect(deactivated.status).toBe(200);
      await endedRevoked(bobStreams);
    } finally {
      opened.forEach((stream) => stream.close());
      await server.stop();
    }
  }, 90_000);
}
