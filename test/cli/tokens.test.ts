import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { migrateApp, openDatabase } from '../../src/framework/index.js';
import { authenticate } from '../../src/framework/stages/authentication/index.js';
import { tokenAuthentication } from '../../src/framework/stages/authentication/token.js';
import { requestReader } from '../../src/store/read/reader.js';
import service from '../../src/service/app.js';

const root = join(import.meta.dirname, '..', '..');
const directory = mkdtempSync(join(tmpdir(), 'restfold-cli-'));
const databaseUrl = `sqlite:${join(directory, 'db.sqlite3')}`;
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const cli = (...args: string[]) =>
  spawnSync('node', ['dist/cli.js', ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, DATABASE_URL: databaseUrl } });

/** Whom the token authenticates, or null. */
async function userOf(token: string): Promise<string | null> {
  const database = openDatabase(databaseUrl);
  try {
    await migrateApp(database, service);
    const request = { headers: { authorization: `Bearer ${token}` } } as Parameters<typeof authenticate>[0];
    const user = await authenticate(request, [tokenAuthentication], undefined, requestReader(database)).catch(() => null);
    return user?.username ?? null;
  } finally {
    await database.close();
  }
}

it('creates tokens for a user and revokes them all', async () => {
  expect(cli('createuser', '--username', 'ops', '--password', 'pw-123456').status).toBe(0);
  const first = cli('token', 'create', '--username', 'ops');
  const second = cli('token', 'create', '--username', 'ops');
  expect(first.status).toBe(0);
  expect(first.stdout.trim()).toMatch(/^rf_[A-Za-z0-9_-]{43}$/);
  expect(await userOf(first.stdout.trim())).toBe('ops');
  expect(await userOf(second.stdout.trim())).toBe('ops');

  const revoked = cli('token', 'revoke', '--username', 'ops');
  expect(revoked.status).toBe(0);
  expect(revoked.stdout).toContain('Revoked 2 token(s)');
  expect(await userOf(first.stdout.trim())).toBeNull();
});

it.each([
  [['token', 'create', '--username', 'ghost'], /No user named "ghost"/],
  [['token', 'create'], /--username is required/],
  [['token', 'shred', '--username', 'ops'], /Use "token create" or "token revoke"/],
  [['createuser', '--username', 'bad name', '--password', 'x'], /username: Enter a valid username/],
  [['createuser', '--username', 'nopass'], /A password is required/],
  [['frobnicate'], /Unknown command "frobnicate"/],
  [['createuser', '--bogus'], /Unknown option '--bogus'/],
])('refuses %j with a clear message and a non-zero exit', (args, message) => {
  const result = cli(...args);
  expect(result.status).not.toBe(0);
  expect(result.stderr).toMatch(message);
});

it('refuses a second user with the same name', () => {
  expect(cli('createuser', '--username', 'twin', '--password', 'pw').status).toBe(0);
  const again = cli('createuser', '--username', 'twin', '--password', 'pw');
  expect(again.status).toBe(2);
  expect(again.stderr).toContain('A user named "twin" already exists.');
});
