/**
 * Live changes across processes: two apps serving one database, as two processes of one service
 * would, with `env` choosing what carries the changes between them (LISTEN/NOTIFY on PostgreSQL
 * without REDIS_URL, Redis pub/sub with it). A write answered by one reaches the other's subscribers,
 * as each may see it, and a rolled-back one reaches nobody.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApi, type TestApi, type TestUser } from './api.js';
import { openEvents } from './event-stream.js';
import { liveItemsApp } from './live-items.js';

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
