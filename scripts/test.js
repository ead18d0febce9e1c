#!/usr/bin/env node
// `npm test`: build, type-check, lint, then the suites: everything on SQLite,
// the API suites again on PostgreSQL when TEST_DATABASE_URL is set, and the
// Redis suites when TEST_REDIS_URL is set. Skipped suites are named, with why.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const failures = [];
const skipped = [];

function run(title, command, args, env = {}) {
  console.log(`\n=== ${title} ===`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) failures.push(title);
}

const bin = (name) => `node_modules/.bin/${name}`;

run('build', bin('tsc'), ['-p', 'tsconfig.json']);
run('type-check', bin('tsc'), ['-p', 'tsconfig.check.json']);
run('lint', bin('eslint'), ['.']);
run('tests on SQLite', bin('vitest'), ['run', 'test/unit', 'test/api', 'test/cli'], { RESTFOLD_TEST_DB: 'sqlite' });

if (process.env.TEST_DATABASE_URL) {
  run('tests on PostgreSQL', bin('vitest'), ['run', 'test/api', 'test/postgres'], { RESTFOLD_TEST_DB: 'postgres' });
} else {
  skipped.push('PostgreSQL suites (test/api on PostgreSQL, test/postgres): TEST_DATABASE_URL is not set');
}

if (process.env.TEST_REDIS_URL && existsSync('test/redis')) {
  run('tests on Redis', bin('vitest'), ['run', 'test/redis'], { RESTFOLD_TEST_DB: process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite' });
} else {
  skipped.push(`Redis suites (test/redis): ${process.env.TEST_REDIS_URL ? 'none written yet' : 'TEST_REDIS_URL is not set'}`);
}

console.log('\n=== summary ===');
for (const line of skipped) console.log(`SKIPPED: ${line}`);
if (failures.length > 0) {
  console.log(`FAILED: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('All suites that ran passed.');
