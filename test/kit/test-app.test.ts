/**
 * restfold/testing under Vitest, on the database RESTFOLD_TEST_DB names: forced users reach only
 * the kit's in-process requests, reset empties every table, live streams are collected within their
 * scope, tokens and sessions take the real credential paths, and a failed check names the request.
 */
import { inspect } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allowAny, collection, createIsolatedSchema, createToken, defineApp, fields, model, serializer, sweepIsolatedSchemas } from 'restfold';
import { expectStatus, testApp, type TestApp } from 'restfold/testing';
import { storeDatabase } from '../../src/store/connection/database.js';
import { onPostgres, testDialect } from '../support/database.js';
import { pdf } from '../support/files.js';
import { Item, liveItemsApp } from '../support/live-items.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const database = testDialect === 'postgres' ? process.env.TEST_DATABASE_URL! : 'sqlite';

describe('a test app of the kit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(liveItemsApp, { database });
  });
  afterAll(() => t?.close());
  beforeEach(() => t.reset());

  it("forces the user of the kit's own requests alone: neither another inject nor a request over the network is", async () => {
    const alice = await t.createUser({ username: 'alice' });
    const asAlice = t.client().as(alice);
    const port = await t.server.listen({ port: 0, host: '127.0.0.1' }).then(() => (t.server.server.address() as { port: number }).port);
    try {
      const [forced, injected, overNetwork] = await Promise.all([
        asAlice.post('/api/v1/items/', { text: 'mine' }),
        t.server.inject({ method: 'POST', url: '/api/v1/items/', payload: { text: 'nobody' } }),
        fetch(`http://127.0.0.1:${port}/api/v1/items/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"nobody"}' }),
      ]);
      expect(expectStatus(forced, 201).json).toMatchObject({ text: 'mine', owner_id: alice.id });
      expect(injected.statusCode).toBe(401);
      expect(overNetwork.status).toBe(401);
    } finally {
      await t.server.server.close();
    }
    // The plain client, made from the same kit, is anonymous.
    expectStatus(await t.client().get('/api/v1/items/'), 401);
  });

  it('takes the real credential paths: a token, and a session login whose CSRF token goes with unsafe methods', async () => {
    const bob = await t.createUser({ username: 'bob', password: 'bob-password-1' });
    const withToken = t.client().withToken(await createToken(t.database, bob.id));
    expectStatus(await withToken.post('/api/v1/items/', { text: 'by token' }), 201);
    expectStatus(await t.client().withToken('rf_not-a-token').get('/api/v1/items/'), 401);

    const session = await t.client().login('bob', 'bob-password-1');
    expect(expectStatus(await session.get('/api/v1/items/'), 200).json.count).toBe(1);
    expectStatus(await session.post('/api/v1/items/', { text: 'by session' }), 201);
    await expect(t.client().login('bob', 'wrong-password')).rejects.toThrow(/POST \/api\/v1\/auth\/login\/ → 400, expected 200/);
  });

  it("makes staff users and members of groups, whose permissions the users' requests carry", async () => {
    await t.createGroup('group-admins', ['auth.manage_groups']);
    const fay = await t.createUser({ username: 'fay', staff: true, groups: ['group-admins'] });
    const gus = await t.createUser({ username: 'gus' });
    const groups = expectStatus(await t.client().as(fay).get('/api/v1/auth/groups/'), 200).json;
    expect(groups.results).toEqual([expect.objectContaining({ name: 'group-admins', permissions: ['auth.manage_groups'], members: [fay.id] })]);
    expectStatus(await t.client().as(gus).get('/api/v1/auth/groups/'), 403);
    const users = expectStatus(await t.client().as(fay).get('/api/v1/auth/users/', undefined, { query: { ordering: 'id' } }), 200).json;
    expect(users.results.map(({ username, is_staff }: { username: string; is_staff: boolean }) => [username, is_staff])).toEqual([['fay', true], ['gus', false]]);
    await expect(t.createUser({ username: 'hal', groups: ['nobody-made-it'] })).rejects.toThrow(/No group named "nobody-made-it"/);
  });

  it('empties every table on reset, users included, with ids starting again from 1', async () => {
    const carol = t.client().as(await t.createUser({ username: 'carol' }));
    for (const text of ['a', 'b']) expectStatus(await carol.post('/api/v1/items/', { text }), 201);
    await t.reset();
    const again = await t.createUser({ username: 'carol' });
    expect(again.id).toBe(1);
    expect(expectStatus(await t.client().as(again).get('/api/v1/items/'), 200).json.count).toBe(0);
    expect(expectStatus(await t.client().as(again).post('/api/v1/items/', { text: 'c' }), 201).json.id).toBe(1);
  });

  it("collects a live stream's events within the user's scope, and answers a refused stream's status", async () => {
    const dana = await t.createUser({ username: 'dana' });
    const erin = await t.createUser({ username: 'erin' });
    const danas = await t.liveEvents('/api/v1/items/events/', { as: dana });
    const erins = await t.liveEvents('/api/v1/items/events/', { as: erin });
    expect(danas.status).toBe(200);

    expectStatus(await t.client().as(erin).post('/api/v1/items/', { text: "erin's" }), 201);
    const created = expectStatus(await t.client().as(dana).post('/api/v1/items/', { text: "dana's" }), 201).json;
    expect(await danas.next()).toMatchObject({ event: 'created', data: { id: created.id, text: "dana's" } });
    expect(await erins.next()).toMatchObject({ event: 'created', data: { text: "erin's" } });
    // Nothing of erin's reached dana: her next event waits in vain.
    await expect(danas.next(300)).rejects.toThrow(/GET \/api\/v1\/items\/events\/ \(live\): waited for event 2, but the stream was quiet for 300 ms/);
    danas.close();

    const anonymous = await t.liveEvents('/api/v1/items/events/');
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.text)).toMatchObject({ code: 'not_authenticated' });
  });

  it('sets rows up through recordStore, as the app reads them', async () => {
    const frank = await t.createUser({ username: 'frank' });
    await t.recordStore(serializer(Item, { fields: ['id', 'text', 'owner_id'] })).create({ text: 'seeded' }, { owner_id: frank.id });
    expect(expectStatus(await t.client().as(frank).get('/api/v1/items/'), 200).json.results).toMatchObject([{ text: 'seeded' }]);
  });

  it('fails a status check with the method, path, status and body, and prints a response as them', async () => {
    const response = await t.client().post('/api/v1/items/', { text: 'anonymous' });
    expect(() => expectStatus(response, 201)).toThrow('POST /api/v1/items/ → 401, expected 201\n{"error":"Authentication credentials were not provided.","code":"not_authenticated"}');
    expect(inspect(response)).toBe('POST /api/v1/items/ → 401\n{"error":"Authentication credentials were not provided.","code":"not_authenticated"}');
    expect(expectStatus(response, 401)).toBe(response);
  });
});

describe('files in a test app', () => {
  const Attachment = model('kit_attachments', { id: fields.id(), doc: fields.file({ nullable: true }) });
  const attachments = serializer(Attachment, { fields: ['id', 'doc'] });
  const app = withGeneratedMigrations(defineApp({ collections: [collection('attachments', { serializer: attachments, permissions: [allowAny] })] }));

  it("stores them through recordStore from a Buffer, answering a link under the API's prefix that the kit's client downloads", async () => {
    const t = await testApp(app, { database });
    try {
      const created = await t.recordStore(attachments).create({ doc: Buffer.from('kit bytes') });
      expect(created.doc).toMatchObject({ name: 'doc', size: 9, content_type: 'text/plain' });
      const url = (created.doc as { url: string }).url;
      expect(url).toMatch(new RegExp(`^/api/v1/attachments/${created.id}/_files/doc/\\?key=`));
      expect(expectStatus(await t.client().get(url), 200).text).toBe('kit bytes');
      // Read through the API, the same record renders an absolute link.
      const read = expectStatus(await t.client().get(`/api/v1/attachments/${created.id}/`), 200).json;
      expect(read.doc.url).toMatch(/^http:\/\/[^/]+\/api\/v1\/attachments\/\d+\/_files\/doc\/\?key=/);
    } finally {
      await t.close();
    }
  });
});

describe('reset, whatever the foreign keys between the tables', () => {
  it('empties a parent after its children, a table referring to itself, and two tables referring to each other', async () => {
    const t = await testApp(liveItemsApp, { database });
    try {
      const run = (statement: string) => sql.raw(statement).execute(storeDatabase(t.database).db);
      // Made parent first, so the catalogue's order would delete the parent while a child still refers to it.
      await run('CREATE TABLE reset_parent (id integer PRIMARY KEY)');
      await run('CREATE TABLE reset_child (id integer PRIMARY KEY, parent integer NOT NULL REFERENCES reset_parent (id) ON DELETE RESTRICT)');
      await run('CREATE TABLE reset_tree (id integer PRIMARY KEY, up integer REFERENCES reset_tree (id))');
      if (testDialect === 'postgres') {
        await run('CREATE TABLE reset_ping (id integer PRIMARY KEY, pong integer)');
        await run('CREATE TABLE reset_pong (id integer PRIMARY KEY, ping integer REFERENCES reset_ping (id))');
        await run('ALTER TABLE reset_ping ADD FOREIGN KEY (pong) REFERENCES reset_pong (id)');
      } else {
        await run('CREATE TABLE reset_ping (id integer PRIMARY KEY, pong integer REFERENCES reset_pong (id))');
        await run('CREATE TABLE reset_pong (id integer PRIMARY KEY, ping integer REFERENCES reset_ping (id))');
      }
      await t.createUser({ username: 'ivy' });
      for (const statement of [
        'INSERT INTO reset_parent VALUES (1)',
        'INSERT INTO reset_child VALUES (1, 1)',
        'INSERT INTO reset_tree VALUES (1, NULL), (2, 1)',
        'INSERT INTO reset_ping VALUES (1, NULL)',
        'INSERT INTO reset_pong VALUES (1, 1)',
        'UPDATE reset_ping SET pong = 1',
      ]) {
        await run(statement);
      }
      await t.reset();
      for (const table of ['reset_parent', 'reset_child', 'reset_tree', 'reset_ping', 'reset_pong', 'users']) {
        const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(storeDatabase(t.database).db);
        expect([table, Number(rows[0]!.n)]).toEqual([table, 0]);
      }
    } finally {
      await t.close();
    }
  });
});

describe('test apps side by side', () => {
  it("keep their rows apart, and a closed one's database is gone", async () => {
    const [first, second] = await Promise.all([testApp(liveItemsApp, { database }), testApp(liveItemsApp, { database })]);
    try {
      await first.createUser({ username: 'same-name' });
      await second.createUser({ username: 'same-name' });
      const mine = first.client().as({ id: 1 });
      expectStatus(await mine.post('/api/v1/items/', { text: 'first' }), 201);
      expect(expectStatus(await second.client().as({ id: 1 }).get('/api/v1/items/'), 200).json.count).toBe(0);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
    await expect(first.client().get('/api/v1/items/')).rejects.toThrow();
  });
});

describe("the kit's uploads", () => {
  const Invoice = model('kit_invoices', { id: fields.id(), number: fields.integer(), scan: fields.file({ accept: ['application/pdf'] }) });
  const invoicesApp = withGeneratedMigrations(
    defineApp({ collections: [collection('invoices', { serializer: serializer(Invoice, { fields: ['id', 'number', 'scan'] }), permissions: [allowAny] })] }),
  );

  it("sends a FormData as multipart/form-data, its fields read as a form's, and answers a download's bytes", async () => {
    const t = await testApp(invoicesApp, { database });
    try {
      const form = new FormData();
      form.append('number', '42');
      form.append('scan', new Blob([new Uint8Array(pdf())], { type: 'application/pdf' }), 'scan.pdf');
      const created = expectStatus(await t.client().post('/api/v1/invoices/', form), 201).json;
      expect(created).toMatchObject({ number: 42, scan: { name: 'scan.pdf', size: pdf().length, content_type: 'application/pdf' } });
      const download = expectStatus(await t.client().get(created.scan.url), 200);
      expect(download.bytes.equals(pdf())).toBe(true);
      // The link names that object: gone with the record, it answers 404.
      expectStatus(await t.client().delete(`/api/v1/invoices/${created.id}/`), 204);
      expectStatus(await t.client().get(created.scan.url), 404);
    } finally {
      await t.close();
    }
  });
});

describe.runIf(testDialect === 'postgres')('the schemas a crashed run leaves behind', () => {
  it('are swept once old enough, and a current one is kept', async () => {
    const url = process.env.TEST_DATABASE_URL!;
    // As createIsolatedSchema names one, born two days ago.
    const stale = `restfold_test_${Math.floor(Date.now() / 1000 - 2 * 86_400).toString(36)}_1_00c0ffee`;
    await onPostgres((client) => client.query(`CREATE SCHEMA ${stale}`));
    const current = await createIsolatedSchema(url);
    try {
      expect(await sweepIsolatedSchemas(url, 86_400_000)).toContain(stale);
      const left = await onPostgres(async (client) => (await client.query('SELECT nspname FROM pg_namespace WHERE nspname = ANY($1)', [[stale, current.name]])).rows.map((row) => row.nspname));
      expect(left).toEqual([current.name]);
    } finally {
      await current.drop();
    }
  });
});
