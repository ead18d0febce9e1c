/**
 * A PATCH's statement is named by the set of columns it writes, so n writable fields make 2^n
 * statements: however many sets requests send (a thousand here), a connection holds at most STATEMENTS_PER_CONNECTION
 * prepared statements (pg_prepared_statements, read on the app's one connection), and the backend's
 * memory stays flat once that many are held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, collection, defineApp, fields, loadConfig, migrateApp, model, serializer } from '../../src/framework/index.js';
import { createToken } from '../../src/framework/stages/authentication/token.js';
import { openStoreDatabase, type StoreDatabase } from '../../src/store/connection/database.js';
import { STATEMENTS_PER_CONNECTION } from '../../src/store/dialects/postgres/named-statement.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/database.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const COLUMNS = Array.from({ length: 10 }, (_, index) => `c${index}`);
const Wide = model('wide', { id: fields.id(), ...Object.fromEntries(COLUMNS.map((column) => [column, fields.string({ maxLength: 20, default: '' })])) });
const app = withGeneratedMigrations(defineApp({ collections: [collection('wide', { serializer: serializer(Wide, { fields: ['id', ...COLUMNS], readOnly: ['id'] }) })] }));

describe.runIf(testDialect === 'postgres')('named statements under many PATCH column sets', () => {
  let test: TestDatabase;
  let database: StoreDatabase;
  let server: Awaited<ReturnType<typeof buildApp>>;
  let authorization: string;

  beforeAll(async () => {
    test = await createTestDatabase();
    // One connection: every request's statements are prepared on the backend the test reads.
    database = openStoreDatabase(test.url, { maxConnections: 1, maxIdleConnections: 1 });
    await migrateApp(database, app);
    server = await buildApp(app, { database, config: loadConfig({ DATABASE_URL: test.url, LOG_LEVEL: 'silent', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' }) });
    const user = await database.db.insertInto('users').values({ username: 'writer', password: 'x', date_joined: new Date().toISOString() }).returning('id').executeTakeFirstOrThrow();
    authorization = `Bearer ${await createToken(database, Number(user.id))}`;
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
    await test?.drop();
  });

  /** PATCHes the record with each column set numbered from `from` to `to` (bit i: column ci), checking each answer. */
  async function patchSets(id: number, from: number, to: number): Promise<void> {
    for (let set = from; set < to; set++) {
      const body = Object.fromEntries(COLUMNS.filter((_, bit) => set & (1 << bit)).map((column) => [column, `s${set}`]));
      const reply = await server.inject({ method: 'PATCH', url: `/api/v1/wide/${id}/`, headers: { authorization }, payload: body });
      expect(reply.statusCode, reply.body).toBe(200);
      expect(reply.json()).toMatchObject(body);
    }
  }

  const prepared = async () => Number((await database.run('select count(*) as count from pg_prepared_statements', []))[0]!.count);
  const backendBytes = async () => Number((await database.run('select sum(total_bytes) as bytes from pg_backend_memory_contexts', []))[0]!.bytes);

  it('holds at most STATEMENTS_PER_CONNECTION statements, and the backend no more memory, after a thousand sets', { timeout: 120_000 }, async () => {
    const created = await server.inject({ method: 'POST', url: '/api/v1/wide/', headers: { authorization }, payload: {} });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = created.json<{ id: number }>();
    await patchSets(id, 1, 2 * STATEMENTS_PER_CONNECTION);
    expect(await prepared()).toBeLessThanOrEqual(STATEMENTS_PER_CONNECTION);
    const filled = await backendBytes();
    await patchSets(id, 2 * STATEMENTS_PER_CONNECTION, 2 ** COLUMNS.length);
    expect(await prepared()).toBeLessThanOrEqual(STATEMENTS_PER_CONNECTION);
    const after = await backendBytes();
    // Unbounded, the 600-odd sets past the first 400 took 17 MB more (28 kB each); bounded, about 1 MB.
    expect(after - filled).toBeLessThan(4 * 1_048_576);
  });
});
