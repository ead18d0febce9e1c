/**
 * The spawned-server harness names a server's death: a suite whose server was killed mid-test
 * fails that test with the signal and the server's last lines, while a server stopped on purpose
 * fails nothing (test/fixtures/server-death/, run here as a suite of its own); the PostgreSQL
 * suites' servers (test/postgres/spawned.ts) the same.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { root } from '../support/spawned-server.js';

const folder = mkdtempSync(join(tmpdir(), 'restfold-server-death-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

interface Report {
  testResults: { assertionResults: { title: string; status: string; failureMessages: string[] }[] }[];
}

it('fails the test whose server died unasked, with the signal and its last lines, and no other', () => {
  const report = join(folder, 'report.json');
  const config = join(root, 'test', 'fixtures', 'server-death', 'vitest.fixture.config.ts');
  const run = spawnSync(join(root, 'node_modules', '.bin', 'vitest'), ['run', '--config', config, '--reporter=json', `--outputFile=${report}`], { cwd: root, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(1);
  const results = (JSON.parse(readFileSync(report, 'utf8')) as Report).testResults.flatMap(({ assertionResults }) => assertionResults);
  const byTitle = Object.fromEntries(results.map((result) => [result.title, result]));
  expect(byTitle['a server stopped on purpose']?.status).toBe('passed');
  const killed = byTitle['a server killed mid-test']!;
  expect(killed.status).toBe('failed');
  const message = killed.failureMessages.join('\n');
  expect(message).toMatch(/exited unasked \(signal SIGKILL\)/);
  // Its last lines: the server's own log, down to the line saying where it listened.
  expect(message).toMatch(/"msg":"Server listening at http:\/\/127\.0\.0\.1:\d+"/);
  // The PostgreSQL suites' servers (test/postgres/spawned.ts) alike.
  expect(byTitle['a PostgreSQL-suite server signalled on purpose']?.status).toBe('passed');
  const pgKilled = byTitle['a PostgreSQL-suite server killed mid-test']!;
  expect(pgKilled.status).toBe('failed');
  expect(pgKilled.failureMessages.join('\n')).toMatch(/exited unasked \(signal SIGKILL\)[^]*"msg":"Server listening at http:\/\/127\.0\.0\.1:\d+"/);
}, 120_000);
