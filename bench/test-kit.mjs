#!/usr/bin/env node
/**
 * `npm run --silent build && node bench/test-kit.mjs [--runs 3]`
 *
 * What the test kit costs an app's suite: bench/test-kit/twenty-tests.test.ts (20 tests on SQLite
 * in memory, `reset` before each, two users and five requests in each) run with
 * `node --import tsx --test`, as an app's `npm test` runs it. Reports, per run, the file's wall time
 * (Node and tsx starting, the imports, the app built and migrated, the tests, closing), the 20
 * tests' own time, the CPU the file's processes spent (user and system, from /usr/bin/time: on a
 * busy machine the wall time measures the other processes too), and the 20 resets' time measured
 * alone on the same app. Keep the machine quiet.
 *
 * With TEST_DATABASE_URL set, also `reset` on PostgreSQL against the TRUNCATE it replaced
 * (`TRUNCATE … RESTART IDENTITY CASCADE` of the same tables), in alternating rounds on one test
 * app, each after a test's rows (two users, a product, an order and its line) are made again.
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const file = 'bench/test-kit/twenty-tests.test.ts';
const env = { ...process.env };
const postgres = env.TEST_DATABASE_URL;
delete env.TEST_DATABASE_URL;

const resets = `
import { testApp } from 'restfold/testing';
import shop from './examples/shop/app.js';
const t = await testApp(shop, { database: 'sqlite', migrations: new URL('./examples/shop/migrations/', import.meta.url) });
const started = performance.now();
for (let reset = 0; reset < 20; reset++) await t.reset();
console.log((performance.now() - started).toFixed(0));
await t.close();`;

for (let run = 1; run <= Number(values.runs); run++) {
  const started = performance.now();
  const result = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', 'node', '--import', 'tsx', '--test', '--test-reporter=tap', file], { env, encoding: 'utf8' });
  const wall = performance.now() - started;
  if (result.status !== 0) throw new Error(`${file} failed:\n${result.stdout}${result.stderr}`);
  const tests = [...result.stdout.matchAll(/^ {2}duration_ms: ([\d.]+)$/gm)].map((match) => Number(match[1]));
  const testsMs = tests.reduce((sum, ms) => sum + ms, 0);
  const reset = spawnSync('node', ['--import', 'tsx', '--input-type=module', '-e', resets], { env, encoding: 'utf8' });
  if (reset.status !== 0) throw new Error(`resets failed:\n${reset.stderr}`);
  const [user, system] = /^cpu ([\d.]+) ([\d.]+)$/m.exec(result.stderr).slice(1).map(Number);
  const cpu = (user + system) * 1000;
  console.log(`run ${run}: file ${wall.toFixed(0)} ms wall, ${cpu.toFixed(0)} ms CPU; its ${tests.length} tests ${testsMs.toFixed(0)} ms; 20 resets ${reset.stdout.trim()} ms`);
}

const versusTruncate = `
import { sql } from 'kysely';
import { storeDatabase } from './dist/store/connection/database.js';
import { testApp } from 'restfold/testing';
import shop from './examples/shop/app.js';
const t = await testApp(shop, { database: ${JSON.stringify(postgres)}, migrations: new URL('./examples/shop/migrations/', import.meta.url) });
const { db } = storeDatabase(t.database);
const tables = (await sql\`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename NOT LIKE '%migrations'\`.execute(db)).rows.map((row) => row.tablename);
const truncate = () => sql\`TRUNCATE \${sql.join(tables.map((table) => sql.table(table)))} RESTART IDENTITY CASCADE\`.execute(db);
async function seed() {
  const manager = t.client().as(await t.createUser({ username: 'manager', permissions: ['shop.manage'] }));
  const alice = t.client().as(await t.createUser({ username: 'alice' }));
  await manager.post('/api/v1/products/', { sku: 'tea', name: 'Tea', price: '4.20', stock: 3, status: 'active' });
  const order = (await alice.post('/api/v1/orders/', {})).json;
  await alice.post(\`/api/v1/orders/\${order.id}/lines/\`, { product: 'tea', quantity: 1 });
}
const spent = { reset: [], truncate: [] };
for (let round = 0; round < 20; round++) {
  for (const [name, empty] of round % 2 ? [['reset', () => t.reset()], ['truncate', truncate]] : [['truncate', truncate], ['reset', () => t.reset()]]) {
    await seed();
    const started = performance.now();
    await empty();
    spent[name].push(performance.now() - started);
  }
}
const median = (values) => values.sort((a, b) => a - b)[values.length >> 1].toFixed(1);
console.log(\`PostgreSQL, 20 rounds: reset median \${median(spent.reset)} ms, TRUNCATE median \${median(spent.truncate)} ms\`);
await t.close();`;

if (postgres) {
  const result = spawnSync('node', ['--import', 'tsx', '--input-type=module', '-e', versusTruncate], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`the PostgreSQL resets failed:\n${result.stderr}`);
  console.log(result.stdout.trim());
}
