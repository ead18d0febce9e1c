#!/usr/bin/env node
// `npm test`: build, type-check, lint, then the suites: everything on SQLite,
// the API, crash and RealWorld (Conduit) suites again on PostgreSQL when TEST_DATABASE_URL is set, the
// read-replica suite on a local cluster, the PgBouncer suite when TEST_PGBOUNCER_URL (transaction mode), TEST_PGBOUNCER_SESSION_URL
// or TEST_PGBOUNCER_PREPARED_URL (transaction mode carrying named statements) is set too, and the
// Redis suites when TEST_REDIS_URL is set; the examples' own tests (written with restfold/testing)
// with node --test on SQLite, and on PostgreSQL too when TEST_DATABASE_URL is set. Skipped suites are named, with why.
// Runs that keep apart from one another run side by side, each's output printed whole when it ends.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const failures = [];
const skipped = [];
const counts = { passed: 0, failed: 0, skipped: 0 };
/** Files that failed, with why (a hook's or an import's error fails a file with no test failed), for the summary. */
const failedFiles = [];
const reports = mkdtempSync(join(tmpdir(), 'restfold-test-'));
const reportFile = join(reports, 'report.json');

function run(title, command, args, env = {}) {
  console.log(`\n=== ${title} ===`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) failures.push(title);
}

const bin = (name) => `node_modules/.bin/${name}`;

const vitestArgs = (paths, report) => ['run', ...paths, '--reporter=default', '--reporter=json', `--outputFile=${report}`];

/** Counts a run's tests and names its slowest files, which is where making the suites faster starts. */
function count(report) {
  if (!existsSync(report)) return;
  const { numPassedTests, numFailedTests, numPendingTests, numTodoTests, testResults } = JSON.parse(readFileSync(report, 'utf8'));
  counts.passed += numPassedTests;
  counts.failed += numFailedTests;
  counts.skipped += numPendingTests + numTodoTests;
  for (const { name, status, message, assertionResults } of testResults) {
    if (status !== 'failed') continue;
    // The report keeps no hook's error: its output above has it; here, the tests it kept from running.
    const failed = assertionResults.filter((test) => test.status === 'failed').map((test) => test.fullName);
    const kept = assertionResults.filter((test) => test.status === 'skipped').map((test) => test.fullName);
    const why = message.trim().split('\n')[0] || (failed.length > 0 ? `failed: ${failed.join('; ')}` : `a hook or the file failed; not run: ${kept.join('; ') || 'none'}`);
    failedFiles.push(`${relative(process.cwd(), name)}: ${why.slice(0, 400)}`);
  }
  const slowest = testResults
    .map(({ name, startTime, endTime }) => ({ name: relative(process.cwd(), name), seconds: (endTime - startTime) / 1000 }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 5);
  console.log(`slowest files: ${slowest.map(({ name, seconds }) => `${name} ${seconds.toFixed(1)} s`).join(', ')}`);
  rmSync(report);
}

function vitest(title, paths, env) {
  run(title, bin('vitest'), vitestArgs(paths, reportFile), env);
  count(reportFile);
}

/**
 * A command started beside the next ones, its output kept in a file and printed when `finish`
 * awaits it (a pipe would fill while the others block this process).
 */
function beside(title, command, args, env = {}) {
  const log = join(reports, `${title.replace(/\W+/g, '-')}.log`);
  const out = openSync(log, 'w');
  const child = spawn(command, args, { stdio: ['ignore', out, out], env: { ...process.env, ...env } });
  const exited = new Promise((resolve) => child.once('close', resolve));
  closeSync(out);
  return async () => {
    const status = await exited;
    console.log(`\n=== ${title} (run beside the others) ===`);
    console.log(readFileSync(log, 'utf8'));
    if (status !== 0) failures.push(title);
  };
}

/** A vitest run started beside the next ones (see `beside`), its tests counted when it is awaited. */
function vitestBeside(title, paths, env) {
  const report = join(reports, `${title.replace(/\W+/g, '-')}.json`);
  const finished = beside(title, bin('vitest'), vitestArgs(paths, report), env);
  return async () => {
    await finished();
    count(report);
  };
}

run('build', 'npm', ['run', '--silent', 'build']);
run('type-check', bin('tsc'), ['-p', 'tsconfig.check.json']);
run('lint', bin('eslint'), ['.']);

const postgres = Boolean(process.env.TEST_DATABASE_URL);
const poolLimits = 'test/postgres/pool.test.ts';
// The pool's limits are read off the cluster's connections, which other suites would also take
// (PostgreSQL allows 100 in all; servers the suites spawned may still be closing theirs after
// them): so that file runs alone, on an idle cluster, before them.
if (postgres) vitest('PostgreSQL pool limits', [poolLimits], { RESTFOLD_TEST_DB: 'postgres' });

// Each vitest run is one worker on a machine of two cores (Vitest takes the cores less one), whose
// files wait on the commands and servers they start and on the database, and every file keeps to
// a database (a SQLite file, a PostgreSQL schema), folder and connection names of its own: the
// SQLite suite, the PostgreSQL suite and the packed-install files (which mostly wait on npm) run
// side by side, all three on SQLite and PostgreSQL's shared cluster (docs/performance.md, CI).
const packedInstalls = ['test/cli/tutorial.test.ts', 'test/cli/installed-package.test.ts', 'test/cli/installed-test-kit.test.ts'];
const besideSqlite = [vitestBeside('the packed-install tests on SQLite', packedInstalls, { RESTFOLD_TEST_DB: 'sqlite' })];
if (postgres) {
  // A path given to vitest is matched as a part of a file's: test/postgres takes in test/postgres-restart
  // too, which restarts the cluster under every suite using it, and runs alone below.
  const exclude = [poolLimits, 'test/postgres-restart/**'].flatMap((pattern) => ['--exclude', pattern]);
  besideSqlite.push(vitestBeside('tests on PostgreSQL', ['test/api', 'test/postgres', 'test/crash', 'test/realworld', 'test/kit', ...exclude], { RESTFOLD_TEST_DB: 'postgres' }));
} else {
  skipped.push('PostgreSQL suites (test/api on PostgreSQL, test/postgres, test/postgres-restart, test/replica, test/pgbouncer): TEST_DATABASE_URL is not set');
}
vitest('tests on SQLite', ['test/unit', 'test/api', 'test/cli', 'test/crash', 'test/realworld', 'test/kit', ...packedInstalls.flatMap((file) => ['--exclude', file])], { RESTFOLD_TEST_DB: 'sqlite' });

// The examples' own tests, written with restfold/testing as an app's are, run as their users run
// them: node --test through tsx, on the built package; on SQLite here (TEST_DATABASE_URL unset, the
// kit's switch), on PostgreSQL below.
const exampleTests = readdirSync('examples', { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join('examples', entry.name, 'tests')))
  .flatMap((entry) => readdirSync(join('examples', entry.name, 'tests')).filter((name) => name.endsWith('.test.ts')).map((name) => join('examples', entry.name, 'tests', name)));
run("the examples' own tests on SQLite (node --test)", 'node', ['--import', 'tsx', '--test', ...exampleTests], { TEST_DATABASE_URL: undefined });
// Before the suites that take the cluster from every other (a restart, a replica made from it).
for (const finish of besideSqlite) await finish();

// The browser suite is on SQLite alone: it runs beside the suites that follow, which mostly wait on the cluster.
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let browserFinished = async () => {};
if (existsSync(chromium)) {
  browserFinished = vitestBeside('browser tests (headless Chromium)', ['test/browser'], { RESTFOLD_TEST_DB: 'sqlite', CHROMIUM_PATH: chromium });
} else {
  skipped.push(`browser tests (test/browser): no Chromium at ${chromium} (apt-get install chromium)`);
}

if (postgres) {
  run("the examples' own tests on PostgreSQL (node --test)", 'node', ['--import', 'tsx', '--test', ...exampleTests]);
  // Restarting the cluster takes it from every suite, so this one runs alone, and only on a local cluster.
  const local = ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(process.env.TEST_DATABASE_URL).hostname);
  const localCluster = local && existsSync('/etc/postgresql') && spawnSync('pg_lsclusters', [], { stdio: 'ignore' }).status === 0;
  if (localCluster) {
    vitest('PostgreSQL restarted under load', ['test/postgres-restart'], { RESTFOLD_TEST_DB: 'postgres' });
  } else {
    skipped.push('PostgreSQL restart under load (test/postgres-restart): needs a local cluster and pg_ctlcluster');
  }
  // A streaming replica made from the local cluster (a second cluster, created and dropped by the suite): alone too.
  const commands = ['pg_createcluster', 'pg_basebackup', 'runuser'].every((name) => spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0);
  if (localCluster && commands) {
    vitest('PostgreSQL read replica', ['test/replica'], { RESTFOLD_TEST_DB: 'postgres' });
  } else {
    skipped.push('PostgreSQL read replica (test/replica): needs a local cluster, pg_createcluster, pg_basebackup and runuser');
  }
  // Through PgBouncer in front of the same cluster, in transaction and in session mode, and in
  // transaction mode carrying named statements (PgBouncer 1.21+).
  const poolers = {
    TEST_PGBOUNCER_URL: 'transaction',
    TEST_PGBOUNCER_SESSION_URL: 'session',
    TEST_PGBOUNCER_PREPARED_URL: 'named-statement transaction (1.21+, max_prepared_statements)',
  };
  const unset = Object.entries(poolers).filter(([name]) => !process.env[name]);
  if (unset.length < Object.keys(poolers).length) vitest('tests through PgBouncer', ['test/pgbouncer'], { RESTFOLD_TEST_DB: 'postgres' });
  for (const [name, mode] of unset) skipped.push(`PgBouncer ${mode} mode (test/pgbouncer): ${name} is not set`);
}
await browserFinished();

if (process.env.TEST_REDIS_URL && existsSync('test/redis')) {
  vitest('tests on Redis', ['test/redis'], { RESTFOLD_TEST_DB: process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite' });
} else {
  skipped.push(`Redis suites (test/redis): ${process.env.TEST_REDIS_URL ? 'none written yet' : 'TEST_REDIS_URL is not set'}`);
}

console.log('\n=== summary ===');
console.log(`tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
for (const line of skipped) console.log(`SKIPPED: ${line}`);
for (const line of failedFiles) console.log(`FAILED FILE: ${line}`);
if (failures.length > 0) {
  console.log(`FAILED: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('All suites that ran passed.');
