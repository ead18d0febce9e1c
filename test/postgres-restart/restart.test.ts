/**
 * PostgreSQL itself restarted under load (`pg_ctlcluster … restart`): the
 * server answers 503 while the database is down, serves fully once it is
 * back (no restart of ours), and every write it acknowledged is stored.
 * It takes the database away from everyone, so scripts/test.js runs it alone,
 * after the PostgreSQL pass, and only against a local cluster it can restart.
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { createTestDatabase, onPostgres } from '../support/database.js';
import { get, sleep, spawnServer } from '../postgres/spawned.js';

/** Asynchronously, so the writers of this process keep writing while the cluster goes down and up. */
async function restartPostgres(): Promise<void> {
  const [version] = readdirSync('/etc/postgresql');
  await promisify(execFile)('pg_ctlcluster', ['--skip-systemctl-redirect', version!, 'main', 'restart', '-m', 'fast']);
}

it('answers 503 while PostgreSQL restarts, recovers by itself, and keeps every acknowledged write', async () => {
  const database = await createTestDatabase();
  const server = await spawnServer({ DATABASE_URL: database.url });
  const acknowledged: number[] = [];
  const statuses: number[] = [];
  let socketErrors = 0;
  let writing = true;
  const writer = async (name: number) => {
    for (let i = 0; writing; i++) {
      try {
        // Surface B: JSON on success, plain text on error (the 503s).
        const reply = await fetch(`http://127.0.0.1:${server.port}/api/posts`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ title: `w${name}-${i}`, content: 'c', published: true }),
        });
        statuses.push(reply.status);
        if (reply.status === 201) acknowledged.push(((await reply.json()) as { id: number }).id);
        else await reply.text();
      } catch {
        socketErrors += 1;
      }
    }
  };
  try {
    const writers = Array.from({ length: 8 }, (_, name) => writer(name));
    await sleep(1000);
    const before = statuses.length;
    await restartPostgres();
    // Back to full service on its own: a create succeeds and /readyz is 200 again.
    for (let attempt = 0; ; attempt++) {
      if ((await get(server.port, '/readyz')).status === 200 && statuses.slice(before).includes(201)) break;
      if (attempt > 200) throw new Error('no recovery within 20 s');
      await sleep(100);
    }
    await sleep(1000);
    writing = false;
    await Promise.all(writers);

    const during = statuses.slice(before);
    expect(during).toContain(503);
    expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([]);
    expect(socketErrors).toBe(0);
    const stored = await onPostgres(async (client) => {
      const schema = new URL(database.url).searchParams.get('options')!.replace('-c search_path=', '');
      const { rows } = await client.query<{ id: string }>(`SELECT id FROM ${schema}.posts`);
      return new Set(rows.map((row) => Number(row.id)));
    });
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
  } finally {
    writing = false;
    await server.stop();
    await database.drop();
  }
}, 90_000);
