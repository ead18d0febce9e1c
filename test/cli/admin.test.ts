/**
 * The admin CLI as a user runs it: `node dist/cli.js …` in a child process,
 * on a SQLite file, checked through the HTTP API on the same file. Like the
 * other CLI suites, it runs what `npm run build` left in dist/.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp, loadConfig, openDatabase, type Database } from '../../src/framework/index.js';
import service from '../../src/service/app.js';

const root = join(import.meta.dirname, '..', '..');

let folder: string;
let databaseUrl: string;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'restfold-cli-'));
  databaseUrl = `sqlite:${join(folder, 'db.sqlite3')}`;
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

const command = (args: string[]) => [join(root, 'dist', 'cli.js'), ...args];
const cliEnv = () => ({ PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });

function cli(args: string[], input?: string): Run {
  const result = spawnSync(process.execPath, command(args), { cwd: folder, input, encoding: 'utf8', env: cliEnv() });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs that change nothing, all at once on a migrated database: each is mostly the CLI starting,
 * so one after another they leave the machine's other cores idle.
 */
function clisAtOnce(runs: readonly (readonly [string[], string?])[]): Promise<Run[]> {
  return Promise.all(runs.map(([args, input]) => new Promise<Run>((resolve, reject) => {
    const child = spawn(process.execPath, command(args), { cwd: folder, env: cliEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  })));
}

/** Each of `cases` (arguments, the message, standard input) exits non-zero saying its message; they run at once (clisAtOnce). */
async function expectRefused(cases: readonly (readonly [string[], RegExp, string?])[]): Promise<void> {
  const runs = await clisAtOnce(cases.map(([args, , input]) => [args, input]));
  cases.forEach(([args, message], n) => {
    expect(runs[n]!.status, args.join(' ')).not.toBe(0);
    expect(runs[n]!.stderr, args.join(' ')).toMatch(message);
  });
}

function ok(args: string[], input?: string): string {
  const run = cli(args, input);
  expect(run, run.stderr).toMatchObject({ status: 0 });
  return run.stdout;
}

/** The service on the CLI's database file, for checking what the CLI did through HTTP. */
async function withApi<T>(work: (request: (method: string, url: string, token?: string, body?: unknown) => Promise<{ status: number; json: any }>) => Promise<T>): Promise<T> { // eslint-disable-line @typescript-eslint/no-explicit-any -- replies of any shape
  const config = loadConfig({ DATABASE_URL: databaseUrl, SECRET_KEY: 'cli-test-secret-key-0123456789abcdef', LOG_LEVEL: 'silent', THROTTLE_ANON: 'off', THROTTLE_USER: 'off' });
  const database: Database = openDatabase(config.databaseUrl);
  const app: FastifyInstance = await buildApp(service, { database, config });
  try {
    return await work(async (method, url, token, body) => {
      const reply = await app.inject({
        method: method as 'GET',
        url,
        headers: token ? { authorization: `Bearer ${token}` } : {},
        ...(body !== undefined && { payload: body as object }),
      });
      return { status: reply.statusCode, json: reply.body ? reply.json() : undefined };
    });
  } finally {
    await app.close();
    await database.close();
  }
}

const tokenOf = async (request: Parameters<Parameters<typeof withApi>[0]>[0], username: string, password: string) =>
  (await request('POST', '/api/v1/auth/token/', undefined, { username, password })).json?.token as string | undefined;

// Many CLI runs each: each migrates and opens the database anew.
describe('createuser', { timeout: 120_000 }, () => {
  it('--password-stdin reads the password from standard input and never prints it', async () => {
    const out = cli(['createuser', '--username', 'alice', '--password-stdin'], 'stdin-secret-pass\n');
    expect(out.status).toBe(0);
    expect(out.stdout).toMatch(/Created user "alice"/);
    expect(out.stdout + out.stderr).not.toContain('stdin-secret-pass');
    await withApi(async (request) => {
      expect(await tokenOf(request, 'alice', 'stdin-secret-pass')).toMatch(/^rf_/);
      expect(await tokenOf(request, 'alice', 'stdin-secret-pass\n')).toBeUndefined();
    });
  });

  it('--superuser makes a user holding every permission', async () => {
    ok(['createuser', '--username', 'root', '--password', 'root-pass', '--superuser']);
    ok(['createuser', '--username', 'plain', '--password', 'plain-pass']);
    await withApi(async (request) => {
      const root = (await tokenOf(request, 'root', 'root-pass'))!;
      const plain = (await tokenOf(request, 'plain', 'plain-pass'))!;
      expect((await request('POST', '/api/v1/users/', plain, { username: 'x', password: 'y' })).status).toBe(403);
      expect((await request('POST', '/api/v1/users/', root, { username: 'x', password: 'y' })).status).toBe(201);
    });
  });

  it('takes --permission more than once', async () => {
    ok(['createuser', '--username', 'clerk', '--password', 'clerk-pass', '--permission', 'users.add', '--permission', 'articles.change']);
    expect(ok(['permissions', 'list', '--username', 'clerk'])).toBe('articles.change\nusers.add\n');
    await withApi(async (request) => {
      const clerk = (await tokenOf(request, 'clerk', 'clerk-pass'))!;
      expect((await request('POST', '/api/v1/users/', clerk, { username: 'x', password: 'y' })).status).toBe(201);
    });
  });

  it('refuses bad input with a clear message, a non-zero exit, and no user made', async () => {
    const cases: [string[], RegExp, string?][] = [
      [['createuser', '--password', 'p'], /--username is required/],
      [['createuser', '--username', 'a'], /A password is required/],
      [['createuser', '--username', 'a', '--password', 'p', '--password-stdin'], /not both/, 'p'],
      [['createuser', '--username', 'a', '--password-stdin'], /A password is required/, ''],
      [['createuser', '--username', 'bad name!', '--password', 'p'], /username: Enter a valid username/],
      [['createuser', '--username', 'a', '--password', 'p', '--email', 'nope'], /email: Enter a valid email address/],
      [['createuser', '--username', 'a', '--password', 'p', '--permission', 'no spaces'], /Invalid permission name "no spaces"/],
      [['createuser', '--username', 'a', '--password', 'p', '--admin'], /Unknown option '--admin'/],
    ];
    // Migrated first, so that the runs at once do not each make the tables.
    ok(['migrate']);
    await expectRefused(cases);
    await withApi(async (request) => {
      expect(await tokenOf(request, 'a', 'p')).toBeUndefined();
    });
  });

  it('refuses a username already taken', () => {
    ok(['createuser', '--username', 'alice', '--password', 'p1']);
    const again = cli(['createuser', '--username', 'alice', '--password', 'p2']);
    expect(again.status).not.toBe(0);
    expect(again.stderr).toMatch(/A user named "alice" already exists/);
  });

  it('refuses a username taken in another case', async () => {
    ok(['createuser', '--username', 'alice', '--password', 'p1']);
    const again = cli(['createuser', '--username', 'Alice', '--password', 'p2']);
    expect(again.status).not.toBe(0);
    expect(again.stderr).toMatch(/A user named "Alice" already exists\. Usernames are unique regardless of case\./);
    await withApi(async (request) => {
      expect(await tokenOf(request, 'Alice', 'p2')).toBeUndefined();
    });
  });
});

describe('permissions', { timeout: 120_000 }, () => {
  beforeEach(() => {
    ok(['createuser', '--username', 'bob', '--password', 'bob-pass']);
  });

  it('add, list and remove named permissions, with effect on the API', async () => {
    expect(ok(['permissions', 'list', '--username', 'bob'])).toBe('');
    expect(ok(['permissions', 'add', '--username', 'bob', 'users.add', 'users.delete', 'users.add'])).toMatch(/users\.add, users\.delete/);
    expect(ok(['permissions', 'list', '--username', 'bob'])).toBe('users.add\nusers.delete\n');
    await withApi(async (request) => {
      const bob = (await tokenOf(request, 'bob', 'bob-pass'))!;
      expect((await request('POST', '/api/v1/users/', bob, { username: 'x', password: 'y' })).status).toBe(201);
    });

    expect(ok(['permissions', 'remove', '--username', 'bob', 'users.add', 'never.held'])).toMatch(/Removed 1 permission/);
    expect(ok(['permissions', 'list', '--username', 'bob'])).toBe('users.delete\n');
    await withApi(async (request) => {
      const bob = (await tokenOf(request, 'bob', 'bob-pass'))!;
      expect((await request('POST', '/api/v1/users/', bob, { username: 'z', password: 'y' })).status).toBe(403);
    });
  });

  it('refuses bad input with a clear message and a non-zero exit, changing nothing', async () => {
    const cases: [string[], RegExp][] = [
      [['permissions', 'list'], /--username is required/],
      [['permissions', 'list', '--username', 'nobody'], /No user named "nobody"/],
      [['permissions', 'add', '--username', 'nobody', 'users.add'], /No user named "nobody"/],
      [['permissions', 'add', '--username', 'bob'], /Name at least one permission/],
      [['permissions', 'remove', '--username', 'bob'], /Name at least one permission/],
      [['permissions', 'add', '--username', 'bob', 'users.add', 'bad name'], /Invalid permission name "bad name"/],
      [['permissions', 'grant', '--username', 'bob', 'users.add'], /Use "permissions list", "permissions add" or "permissions remove"/],
      [['permissions', 'list', '--username', 'bob', 'extra'], /takes no names/],
    ];
    await expectRefused(cases);
    expect(ok(['permissions', 'list', '--username', 'bob'])).toBe('');
  });
});

describe('groups', { timeout: 120_000 }, () => {
  beforeEach(() => {
    ok(['createuser', '--username', 'bob', '--password', 'bob-pass']);
  });

  it('create, give permissions, add and remove members, delete: a member holds what the group gives', async () => {
    expect(ok(['groups', 'create', 'clerks', 'auditors', '--permission', 'users.add'])).toMatch(/Created group\(s\): clerks, auditors/);
    expect(ok(['groups', 'list'])).toBe('auditors\nclerks\n');
    expect(ok(['permissions', 'add', '--group', 'auditors', 'users.delete'])).toMatch(/Group "auditors" now gives: users\.add, users\.delete/);
    expect(ok(['permissions', 'list', '--group', 'auditors'])).toBe('users.add\nusers.delete\n');
    expect(ok(['groups', 'add', '--username', 'bob', 'clerks'])).toMatch(/"bob" is now in: clerks/);
    expect(ok(['groups', 'list', '--username', 'bob'])).toBe('clerks\n');
    // Their own stay empty; with --all, the groups' too.
    expect(ok(['permissions', 'list', '--username', 'bob'])).toBe('');
    expect(ok(['permissions', 'list', '--username', 'bob', '--all'])).toBe('users.add\n');
    const create = async (username: string) =>
      withApi(async (request) => (await request('POST', '/api/v1/users/', (await tokenOf(request, 'bob', 'bob-pass'))!, { username, password: 'y' })).status);
    expect(await create('x1')).toBe(201);

    expect(ok(['permissions', 'remove', '--group', 'clerks', 'users.add'])).toMatch(/Removed 1 permission\(s\) from group "clerks"/);
    expect(await create('x2')).toBe(403);
    ok(['permissions', 'add', '--group', 'clerks', 'users.add']);
    expect(await create('x3')).toBe(201);
    expect(ok(['groups', 'remove', '--username', 'bob', 'clerks', 'auditors'])).toMatch(/Removed "bob" from 1 group\(s\)/);
    expect(await create('x4')).toBe(403);
    ok(['groups', 'add', '--username', 'bob', 'clerks']);
    expect(ok(['groups', 'delete', 'clerks'])).toMatch(/Deleted group\(s\): clerks/);
    expect(await create('x5')).toBe(403);
    expect(ok(['groups', 'list'])).toBe('auditors\n');
  });

  it('createuser --staff and --group; --superuser makes a staff superuser', async () => {
    ok(['groups', 'create', 'clerks', '--permission', 'users.add']);
    ok(['createuser', '--username', 'sam', '--password', 'sam-pass', '--staff', '--group', 'clerks']);
    ok(['createuser', '--username', 'root', '--password', 'root-pass', '--superuser']);
    expect(ok(['groups', 'list', '--username', 'sam'])).toBe('clerks\n');
    await withApi(async (request) => {
      const root = (await tokenOf(request, 'root', 'root-pass'))!;
      const standing = async (username: string) => {
        const found = (await request('GET', `/api/v1/auth/users/?username=${username}`, root)).json.results[0];
        return { is_staff: found.is_staff, is_superuser: found.is_superuser };
      };
      expect(await standing('sam')).toEqual({ is_staff: true, is_superuser: false });
      expect(await standing('root')).toEqual({ is_staff: true, is_superuser: true });
      expect(await standing('bob')).toEqual({ is_staff: false, is_superuser: false });
      const sam = (await tokenOf(request, 'sam', 'sam-pass'))!;
      expect((await request('POST', '/api/v1/users/', sam, { username: 'x', password: 'y' })).status).toBe(201);
      // The example service's users keep SPEC's keys: no is_staff there.
      expect(Object.keys((await request('GET', '/api/v1/users/', root)).json.results[0])).not.toContain('is_staff');
    });
  });

  it('refuses bad input with a clear message and a non-zero exit, changing nothing', async () => {
    ok(['groups', 'create', 'clerks']);
    const cases: [string[], RegExp][] = [
      [['groups', 'create'], /Name at least one group/],
      [['groups', 'create', 'clerks'], /A group named "clerks" already exists/],
      [['groups', 'create', 'x'.repeat(151)], /name: /],
      [['groups', 'create', 'new', '--permission', 'bad name'], /Invalid permission name "bad name"/],
      [['groups', 'delete', 'nobody'], /No group named "nobody"/],
      [['groups', 'add', '--username', 'bob', 'nobody'], /No group named "nobody"/],
      [['groups', 'add', 'clerks'], /--username is required/],
      [['groups', 'add', '--username', 'nobody', 'clerks'], /No user named "nobody"/],
      [['groups', 'list', 'extra'], /takes no names/],
      [['groups', 'rename', 'clerks'], /Use "groups list"/],
      [['permissions', 'add', '--group', 'nobody', 'a.b'], /No group named "nobody"/],
      [['permissions', 'add', '--group', 'clerks', '--username', 'bob', 'a.b'], /not both/],
      [['permissions', 'add', '--group', 'clerks', '--group', 'other', 'a.b'], /Name one --group/],
      [['createuser', '--username', 'c', '--password', 'p', '--group', 'nobody'], /No group named "nobody"/],
    ];
    await expectRefused(cases);
    expect(ok(['groups', 'list'])).toBe('clerks\n');
    expect(ok(['permissions', 'list', '--group', 'clerks'])).toBe('');
    expect(cli(['permissions', 'list', '--username', 'c']).stderr).toMatch(/No user named "c"/);
  });
});
