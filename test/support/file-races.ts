/**
 * Issue 47's race as production runs it: 20 concurrent replaces of one record's file, sent in turn
 * to two server processes on one PostgreSQL database (directly, or through a pooler), on disk and
 * on S3. What the storage holds afterwards is read from the storage itself; what the row names,
 * from the signed link the record renders (its `key`).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formOf, send, TEST_STORAGES, type TestStorage } from './files.js';
import { spawnServer, type SpawnedServer } from '../postgres/spawned.js';

/** The app both processes serve: one collection whose records hold a replaceable file, open to anyone. */
const RACE_APP_ARGS = ['--app', join(import.meta.dirname, '..', 'fixtures', 'files-race', 'app.ts')];

/** A database for one storage's block: the env both servers get, and what removes it. */
export interface RaceDatabase {
  readonly env: Record<string, string>;
  drop(): Promise<void>;
}

/** One record created, then 20 replaces of its file at once, alternating between `servers`. */
async function raceReplaces(servers: readonly SpawnedServer[], storage: TestStorage): Promise<void> {
  const base = (index: number): string => `http://127.0.0.1:${servers[index % servers.length]!.port}`;
  const created = await send(base(0), 'POST', '/api/v1/attachments/', { form: formOf({}, { file: [Buffer.from('version 0'), 'v0.txt'] }) });
  expect(created.status).toBe(201);
  const path = `/api/v1/attachments/${created.json.id}/`;
  const replies = await Promise.all(
    Array.from({ length: 20 }, (_, index) => send(base(index), 'PATCH', path, { form: formOf({}, { file: [Buffer.from(`version ${index + 1}`), `v${index + 1}.txt`] }) })),
  );
  expect(replies.map((reply) => reply.status)).toEqual(Array.from({ length: 20 }, () => 200));
  const shown = await send(base(1), 'GET', path);
  const url = shown.json.file.url as string;
  const named = new URL(url, base(0)).searchParams.get('key')!;
  const objects = await storage.objects();
  expect(objects).toHaveLength(1);
  expect(objects[0]!.endsWith(named)).toBe(true);
  // The one left is the last replace's: its link serves the bytes sent under its name.
  expect((await send(base(0), 'GET', url)).bytes.toString()).toBe(`version ${(shown.json.file.name as string).slice(1, -'.txt'.length)}`);
}

/** The race on each storage, two servers started on a database `open` makes for the block. */
export function describeFileRaces(title: string, open: () => Promise<RaceDatabase>): void {
  describe.each(Object.keys(TEST_STORAGES) as (keyof typeof TEST_STORAGES)[])(`${title}, on %s storage`, (kind) => {
    let database: RaceDatabase;
    let storage: TestStorage;
    const servers: SpawnedServer[] = [];

    beforeAll(async () => {
      database = await open();
      storage = await TEST_STORAGES[kind]();
      // One after the other: the first migrates, the second finds it done.
      for (let index = 0; index < 2; index++) servers.push(await spawnServer({ ...database.env, ...storage.env }, RACE_APP_ARGS));
    }, 120_000);
    afterAll(async () => {
      await Promise.all(servers.map((server) => server.stop()));
      await storage?.close();
      await database?.drop();
    });

    it('leaves exactly one object, the one the row names, after 20 concurrent replaces across two processes', { timeout: 60_000 }, () => raceReplaces(servers, storage));
  });
}
