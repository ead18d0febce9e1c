/**
 * A rolling deploy: the new release migrates while servers of the old one keep serving, then the
 * servers are replaced. Here a server of release 1 (named statements on, as by default) serves
 * reads and writes of `notes`, and of `pins`, which nest a note, while another database handle (a
 * process of release 2) applies release 2's generated migration: a title widened, a nullable
 * column, a table and an index added. No request may fail, before, during or after the migration.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appBaseline,
  appState,
  buildApp,
  collection,
  defineApp,
  fields,
  loadConfig,
  migrateApp,
  model,
  planMigration,
  serializer,
  type AppDefinition,
  type Field,
  type Migrations,
} from '../../src/framework/index.js';
import { createToken } from '../../src/framework/stages/authentication/token.js';
import { openStoreDatabase, type StoreDatabase } from '../../src/store/connection/database.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';
import { generatedMigrations } from '../support/migrations.js';

/** The release whose notes have `noteFields`, with the title index or not; the pins nest their note. */
function release(noteFields: Record<string, Field>, indexes: { columns: string[] }[] = [], models = [] as ReturnType<typeof model>[]): AppDefinition {
  const Note = model('notes', { id: fields.id(), body: fields.text({ blank: true, default: '' }), ...noteFields });
  const Pin = model('pins', { id: fields.id(), label: fields.string({ maxLength: 40 }), note_id: fields.foreignKey('notes') });
  const notes = serializer(Note, { fields: ['id', 'title', 'body'], readOnly: ['id'] });
  return defineApp({
    collections: [
      collection('notes', { serializer: notes, indexes }),
      collection('pins', { serializer: serializer(Pin, { fields: ['id', 'label', 'note', 'note_id'], readOnly: ['id'], nested: { note: { source: 'note_id', serializer: notes } } }) }),
    ],
    models,
  });
}

const first = release({ title: fields.string({ maxLength: 100 }) });
const second = release(
  { title: fields.string({ maxLength: 200 }), summary: fields.string({ maxLength: 80, nullable: true }) },
  [{ columns: ['title'] }],
  [model('labels', { id: fields.id(), name: fields.string({ maxLength: 40 }) })],
);
const firstMigrations = generatedMigrations(first);
const secondMigrations: Migrations = {
  ...firstMigrations,
  '0002_rolling': { operations: planMigration(appState(second), firstMigrations, {}, appBaseline(second)).operations, state: appState(second) },
};

describe.runIf(testDialect === 'postgres')('a migration applied while an older release serves', () => {
  let test: TestDatabase;
  let serving: StoreDatabase;
  let migrating: StoreDatabase;
  let server: Awaited<ReturnType<typeof buildApp>>;
  let authorization: string;

  beforeAll(async () => {
    test = await createTestDatabase();
    serving = openStoreDatabase(test.url, { maxConnections: 4 });
    migrating = openStoreDatabase(test.url, { maxConnections: 1 });
    await migrateApp(serving, { ...first, migrations: firstMigrations });
    server = await buildApp({ ...first, migrations: firstMigrations }, {
      database: serving,
      config: loadConfig({ DATABASE_URL: test.url, LOG_LEVEL: 'silent', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' }),
    });
    const user = await serving.db.insertInto('users').values({ username: 'writer', password: 'x', date_joined: new Date().toISOString() }).returning('id').executeTakeFirstOrThrow();
    authorization = `Bearer ${await createToken(serving, Number(user.id))}`;
  });
  afterAll(async () => {
    await server?.close();
    await serving?.close();
    await migrating?.close();
    await test?.drop();
  });

  it('answers every request while the migration is applied and after it commits', { timeout: 120_000 }, async () => {
    const request = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
      const reply = await server.inject({ method, url, headers: { authorization }, ...(payload && { payload }) });
      return { status: reply.statusCode, json: reply.json() as Record<string, unknown> & { id: number }, body: reply.body };
    };
    const failures: string[] = [];
    let answered = 0;
    let answeredAfter = 0;
    let migrated = false;
    let running = true;
    const expectStatus = (what: string, reply: { status: number; body: string }, status: number) => {
      answered += 1;
      if (migrated) answeredAfter += 1;
      if (reply.status !== status) failures.push(`${what}: ${reply.status} ${reply.body}`);
      return reply.status === status;
    };
    const client = async (name: number) => {
      for (let round = 0; running; round++) {
        const created = await request('POST', '/api/v1/notes/', { title: `note ${name}.${round}` });
        if (!expectStatus('create a note', created, 201)) continue;
        const { id } = created.json;
        expectStatus('read it', await request('GET', `/api/v1/notes/${id}/`), 200);
        expectStatus('list notes', await request('GET', '/api/v1/notes/?ordering=-id'), 200);
        expectStatus('rename it', await request('PATCH', `/api/v1/notes/${id}/`, { title: `renamed ${name}.${round}` }), 200);
        expectStatus('pin it', await request('POST', '/api/v1/pins/', { label: 'pin', note_id: id }), 201);
        expectStatus('list pins with their notes', await request('GET', '/api/v1/pins/?ordering=-id'), 200);
      }
    };
    const clients = Array.from({ length: 4 }, (_, name) => client(name));
    const until = async (enough: () => boolean) => {
      while (!enough() && failures.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    try {
      // Every statement prepared on the server's connections before the tables change.
      await until(() => answered >= 60);
      expect(await migrateApp(migrating, { ...second, migrations: secondMigrations })).toEqual(['0002_rolling']);
      migrated = true;
      await until(() => answeredAfter >= 120);
    } finally {
      running = false;
      await Promise.all(clients);
    }
    expect(failures).toEqual([]);
    expect(answeredAfter).toBeGreaterThanOrEqual(120);
    // The old release reads and writes the widened column as it did.
    const reply = await request('POST', '/api/v1/pins/', { label: 'last', note_id: (await request('POST', '/api/v1/notes/', { title: 'last' })).json.id });
    expect(reply.json).toMatchObject({ label: 'last', note: { title: 'last', body: '' } });
  });
});
