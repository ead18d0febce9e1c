/**
 * restfold/testing as a user meets it: from the packed install, in a new folder, the scaffold's own
 * tests pass with `npm test` (node --test through tsx) on SQLite and on PostgreSQL; a wrong
 * assertion fails the run, naming the request, its status and its body; two test files run at once
 * on one PostgreSQL database without seeing each other's rows; and no schema is left behind.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/database.js';
import { packAndInstall, runIn } from '../support/packed-install.js';

let folder: string;
let app: string;

/** `command args` in the app's folder, with TEST_DATABASE_URL as given (unset: SQLite); its exit status and output. */
function runTests(args: readonly string[], testDatabaseUrl?: string): { status: number | null; output: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, TEST_DATABASE_URL: testDatabaseUrl };
  if (!testDatabaseUrl) delete env.TEST_DATABASE_URL;
  const result = spawnSync(args[0]!, args.slice(1), { cwd: app, env, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'restfold-kit-'));
  app = join(folder, 'app');
  packAndInstall(folder, app);
  runIn(app, 'npx', ['restfold', 'new', '.']);
}, 300_000);

// An installed node_modules takes a while to remove on a busy machine.
afterAll(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
}, 120_000);

/** A test file that writes three notes, waits until the `other` file has written its own, then lists them. */
const parallelFile = (mine: string, other: string): string => `import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { after, before, it } from 'node:test';
import { expectStatus, testApp, type TestApp } from 'restfold/testing';
import app from '../app.js';

let t: TestApp;
before(async () => {
  t = await testApp(app, { migrations: new URL('../migrations/', import.meta.url) });
});
after(() => t?.close());

it('sees its own notes alone while the other file writes its own', async () => {
  // The same username in both files: one database would refuse the second.
  const me = t.client().as(await t.createUser({ username: 'same-name' }));
  for (const title of ['one', 'two', 'three']) expectStatus(await me.post('/api/v1/notes/', { title: '${mine} ' + title }), 201);
  writeFileSync(new URL('../${mine}.ready', import.meta.url), '');
  for (let waited = 0; !existsSync(new URL('../${other}.ready', import.meta.url)); waited += 50) {
    assert.ok(waited < 60_000, 'the other file never wrote its notes: the files did not run at once');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const listed = expectStatus(await me.get('/api/v1/notes/', undefined, { query: { ordering: 'title' } }), 200).json;
  assert.deepEqual(listed.results.map((note: { title: string }) => note.title), ['${mine} one', '${mine} three', '${mine} two']);
});
`;

describe('the test kit from the packed install, in a new app', () => {
  it("passes the scaffold's own tests with npm test on SQLite", () => {
    const { status, output } = runTests(['npm', 'test']);
    expect(output).toMatch(/# pass 2\n# fail 0/);
    expect(status).toBe(0);
  }, 120_000);

  it('fails the run on a wrong assertion, naming the request, its status and its body', () => {
    const wrong = join(app, 'tests', 'wrong.test.ts');
    writeFileSync(
      wrong,
      `import { it } from 'node:test';
import { expectStatus, testApp } from 'restfold/testing';
import app from '../app.js';

it('expects an anonymous list to be served', async () => {
  const t = await testApp(app, { migrations: new URL('../migrations/', import.meta.url) });
  try {
    expectStatus(await t.client().get('/api/v1/notes/'), 200);
  } finally {
    await t.close();
  }
});
`,
    );
    try {
      const { status, output } = runTests(['node', '--import', 'tsx', '--test', 'tests/wrong.test.ts']);
      expect(status).toBe(1);
      expect(output).toContain('GET /api/v1/notes/ → 401, expected 200');
      expect(output).toContain('"code":"not_authenticated"');
    } finally {
      rmSync(wrong);
    }
  }, 120_000);

  describe.runIf(process.env.TEST_DATABASE_URL)('on PostgreSQL, in a database made for this test', () => {
    const name = `rf_kit_${randomBytes(6).toString('hex')}`;
    let url: string;
    const schemasLeft = () =>
      onPostgres(async (client) => Number((await client.query("SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE 'restfold\\_test\\_%'")).rows[0].n), url);
    beforeAll(async () => {
      await onPostgres((client) => client.query(`CREATE DATABASE ${name}`));
      const database = new URL(process.env.TEST_DATABASE_URL!);
      database.pathname = `/${name}`;
      url = database.toString();
    });
    afterAll(() => onPostgres((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)));

    it("passes the scaffold's own tests with npm test, leaving no schema behind", async () => {
      // The run is on the database TEST_DATABASE_URL names: one that does not exist fails it.
      const missing = runTests(['npm', 'test'], url.replace(name, `${name}_missing`));
      expect(missing.output).toContain(`database "${name}_missing" does not exist`);
      expect(missing.status).not.toBe(0);
      const { status, output } = runTests(['npm', 'test'], url);
      expect(output).toMatch(/# pass 2\n# fail 0/);
      expect(status).toBe(0);
      expect(await schemasLeft()).toBe(0);
    }, 120_000);

    it("runs two test files at once without either seeing the other's rows, leaving no schema behind", async () => {
      writeFileSync(join(app, 'tests', 'parallel-a.test.ts'), parallelFile('a', 'b'));
      writeFileSync(join(app, 'tests', 'parallel-b.test.ts'), parallelFile('b', 'a'));
      try {
        const { status, output } = runTests(['node', '--import', 'tsx', '--test', '--test-concurrency=2', 'tests/parallel-a.test.ts', 'tests/parallel-b.test.ts'], url);
        expect(output).toMatch(/# pass 2\n# fail 0/);
        expect(status).toBe(0);
        expect(await schemasLeft()).toBe(0);
      } finally {
        for (const file of ['tests/parallel-a.test.ts', 'tests/parallel-b.test.ts', 'a.ready', 'b.ready']) rmSync(join(app, file), { force: true });
      }
    }, 120_000);
  });
});
