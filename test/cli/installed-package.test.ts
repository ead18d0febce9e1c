/**
 * Restfold as a user meets it: `npm pack`'s tarball installed into a new
 * folder outside the checkout, with the script approvals its README says,
 * `npx restfold new .` writing a TypeScript `app.ts` with one collection and
 * its first migration (type-checked strictly against the installed package's
 * types), then `npx restfold createuser`, `token create` and
 * `serve --app app.ts` run in that folder, with a record created and listed
 * over HTTP. Then the loop on a new app of its own, on SQLite and on
 * PostgreSQL (a schema of its own) when TEST_DATABASE_URL is set, with no edit
 * of the app but its new field: `migrate`, serve, add a field, `--check`
 * names it, `makemigrations`, `migrate`, and the field is served.
 *
 * better-sqlite3 has no prebuilt binary to download here, and compiling it
 * takes minutes; the binary `npm ci` already built in the checkout is handed
 * to the install as a local prebuild (prebuild-install's documented
 * `local-prebuilds` setting), and npm's own cache serves every package it
 * holds (`--prefer-offline`). Everything else installs as it would for a user.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { onPostgres } from '../support/database.js';
import { packAndInstall, runIn } from '../support/packed-install.js';
import { listeningUrl } from '../support/spawned-server.js';

let folder: string;
let app: string;
const servers = new Set<ChildProcess>();
let installLog: string;
let prebuilds: string;

/** `command args` in the app's folder (or `cwd`), as its user would type it; throws with the output unless it exits 0. */
const run = (command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, cwd = app) => runIn(cwd, command, args, env);

/**
 * `npx restfold serve --app app.ts` in `cwd`, until `stop` (which signals npx's whole process
 * group, so that nothing is left behind whatever the test did); `npx` is the process the user
 * started, and `lines` what the server has written to standard output.
 */
async function serve(cwd: string, env: NodeJS.ProcessEnv): Promise<{ url: string; npx: ChildProcess; lines: string[]; stop(): Promise<void> }> {
  const npx = spawn('npx', ['restfold', 'serve', '--app', 'app.ts'], {
    cwd,
    env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', SHUTDOWN_DRAIN_MS: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  servers.add(npx);
  const exited = new Promise<void>((resolve) => npx.once('exit', () => resolve()));
  const stop = async () => {
    try {
      process.kill(-npx.pid!, 'SIGTERM');
    } catch {
      // the group is gone already
    }
    await exited;
    servers.delete(npx);
  };
  const lines: string[] = [];
  const url = await listeningUrl(npx, (line) => lines.push(line)).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, npx, lines, stop };
}

/** Whether nothing listens at `url` any more, waiting up to 15 s for its server to finish stopping. */
async function closes(url: string): Promise<boolean> {
  const refused = () => fetch(url).then(() => false, () => true);
  for (let attempt = 0; attempt < 150 && !(await refused()); attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
  return refused();
}

/** Whether no process is left in the process group `group`, waiting up to 15 s for its last ones to exit. */
async function groupEnds(group: number): Promise<boolean> {
  const gone = () => {
    try {
      process.kill(-group, 0);
      return false;
    } catch {
      return true;
    }
  };
  for (let attempt = 0; attempt < 150 && !gone(); attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
  return gone();
}

const DATABASE_URL = (): string => `sqlite:${join(app, 'data', 'app.sqlite3')}`;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'restfold-outside-'));
  app = join(folder, 'my-app');
  const installed = packAndInstall(folder, app);
  ({ installLog } = installed);
  prebuilds = installed.installEnv.npm_config_better_sqlite3_local_prebuilds!;
  run('npx', ['restfold', 'new', '.']);
}, 300_000);

afterAll(() => {
  for (const server of servers) {
    try {
      process.kill(-server.pid!, 'SIGTERM');
    } catch {
      // the group is gone already
    }
  }
  if (folder) rmSync(folder, { recursive: true, force: true });
  // Two installed node_modules take a while to remove on a busy machine.
}, 120_000);

describe('restfold installed from its tarball into a new folder', () => {
  it('installs without engine warnings, shipping the build and not the sources', () => {
    expect(installLog).not.toContain('EBADENGINE');
    const installed = join(app, 'node_modules', 'restfold');
    expect(existsSync(join(installed, 'dist', 'cli.js'))).toBe(true);
    expect(existsSync(join(installed, 'dist', 'framework', 'index.d.ts'))).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    expect(existsSync(join(installed, 'test'))).toBe(false);
  });

  it("records the script approvals the app's README gives, for every package npm asked about", () => {
    const readme = readFileSync(join(app, 'README.md'), 'utf8');
    expect(readme).not.toContain('npm install restfold');
    const approvals = readme.split('\n').filter((line) => line.startsWith('npm install-scripts '));
    const named = approvals.flatMap((line) => line.split(' ').slice(3));
    expect(named.sort()).toEqual(['better-sqlite3', 'esbuild', 'restfold']);
    for (const name of named) expect(installLog).toContain(`${name}@`);
    for (const line of approvals) run('npm', line.split(' ').slice(1));
    const again = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { npm_config_better_sqlite3_local_prebuilds: prebuilds });
    expect(`${again.stdout}${again.stderr}`).not.toContain('not yet covered by allowScripts');
  });

  it('scaffolds an app with its first migration, found beside it, which matches its declarations', () => {
    for (const file of ['app.ts', 'README.md', 'migrations/index.ts', 'migrations/0001_initial.ts']) expect(existsSync(join(app, file))).toBe(true);
    expect(readFileSync(join(app, 'migrations', '0001_initial.ts'), 'utf8')).toContain("op.createTable('notes'");
    expect(readFileSync(join(app, 'app.ts'), 'utf8')).not.toMatch(/^import .*migrations/m);
    expect(run('npx', ['restfold', 'makemigrations', '--app', 'app.ts', '--check']).stdout).toContain('No changes.');
    // Never over an app already there.
    const again = spawnSync('npx', ['restfold', 'new', '.'], { cwd: app, encoding: 'utf8' });
    expect(again.status).toBe(2);
    expect(again.stderr).toContain('already holds app.ts, migrations, README.md');
  });

  it("type-checks the app strictly against the installed package's types, and theirs, given @types/node as the docs say", () => {
    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      // As tsc run in the app's folder finds them (not the checkout's, this process's folder).
      typeRoots: [join(app, 'node_modules', '@types')],
    };
    // The second check parses again only what the first did not find (Node's types): the rest is unchanged.
    const host = ts.createCompilerHost(options);
    const parsed = new Map<string, ts.SourceFile>();
    const parse = host.getSourceFile.bind(host);
    host.getSourceFile = (fileName, language, ...rest) => {
      const file = parsed.get(fileName) ?? parse(fileName, language, ...rest);
      if (file) parsed.set(fileName, file);
      return file;
    };
    const check = () =>
      ts.getPreEmitDiagnostics(ts.createProgram([join(app, 'app.ts')], options, host)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    // The types Restfold's own declare (and Fastify's, pg's, ...) name Node's: without them, no check passes.
    expect(check().join('\n')).toContain("Cannot find module 'node:http'");
    run('npm', ['install', '--save-dev', '@types/node@20', '--prefer-offline', '--no-audit', '--no-fund'], {
      npm_config_better_sqlite3_local_prebuilds: prebuilds,
    });
    expect(check()).toEqual([]);
  }, 180_000);

  it('serves the TypeScript app with `npx restfold serve --app app.ts` from a CommonJS package: create and list over HTTP', async () => {
    // app.ts has `import` and `export`; Node would load it as CommonJS, as package.json says.
    expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).type).toBe('commonjs');
    const env = { DATABASE_URL: DATABASE_URL(), SECRET_KEY: 'outside-the-checkout-secret-0123456789' };
    run('npx', ['restfold', 'createuser', '--app', 'app.ts', '--username', 'me', '--password', 'my-own-pass-1'], env);
    const token = run('npx', ['restfold', 'token', 'create', '--app', 'app.ts', '--username', 'me'], env).stdout.trim();

    const { url, stop } = await serve(app, env);
    onTestFinished(stop);

    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${url}/api/v1/notes/`, { method: 'POST', headers, body: JSON.stringify({ title: 'Written outside the checkout' }) });
    expect(created.status).toBe(201);
    const note = { id: 1, title: 'Written outside the checkout', done: false, created_at: expect.any(String) };
    expect(await created.json()).toEqual(note);
    const listed = await fetch(`${url}/api/v1/notes/?done=false`, { headers });
    expect(await listed.json()).toEqual({ count: 1, next: null, previous: null, results: [note] });
  }, 120_000);

  // `kill PID` sends TERM and a closed terminal HUP to npx alone; Ctrl-C sends INT to the terminal's whole process group.
  it.each([
    ['SIGTERM', 'npx'],
    ['SIGHUP', 'npx'],
    ['SIGINT', 'its process group'],
  ] as const)('stops the server when %s is sent to %s of `npx restfold serve`, leaving no process behind', async (signal, to) => {
    const env = { DATABASE_URL: DATABASE_URL(), SECRET_KEY: 'outside-the-checkout-secret-0123456789' };
    const { url, npx, lines, stop } = await serve(app, env);
    onTestFinished(stop);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    // npx runs the server under `sh -c`: the signal reaches npm and the shell, not the server.
    const exited = new Promise((resolve) => npx.once('exit', resolve));
    process.kill(to === 'npx' ? npx.pid! : -npx.pid!, signal);
    await exited;
    expect(await closes(`${url}/healthz`)).toBe(true);
    // npx's shell and the server are gone too: nothing is left in the group, re-parented.
    expect(await groupEnds(npx.pid!)).toBe(true);
    expect(lines.some((line) => line.includes('"msg":"shutting down"'))).toBe(true);
  }, 120_000);
});

const dialects = ['sqlite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];

describe.each(dialects)('a new app of the installed package on %s, changed only where its model changes', (dialect) => {
  let databaseUrl: string;
  const schema = `rf_installed_${randomBytes(6).toString('hex')}`;
  beforeAll(async () => {
    databaseUrl = `sqlite:${join(app, dialect, 'data', 'app.sqlite3')}`;
    if (dialect !== 'postgres') return;
    await onPostgres((client) => client.query(`CREATE SCHEMA ${schema}`));
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = url.toString();
  });
  afterAll(async () => {
    if (dialect === 'postgres') await onPostgres((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  });

  it('migrates and serves it; a field added is caught by --check, then generated, migrated and served', async () => {
    run('npx', ['restfold', 'new', dialect]);
    const here = join(app, dialect);
    const env = { DATABASE_URL: databaseUrl, SECRET_KEY: 'installed-loop-secret-0123456789abcdef' };
    const restfold = (...args: string[]) => run('npx', ['restfold', ...args, '--app', 'app.ts'], env, here).stdout;

    expect(restfold('migrate')).toMatch(/^Applied the framework's migrations: 0001_initial\b.*\nApplied the app's migrations: 0001_initial\n$/);
    restfold('createuser', '--username', 'me', '--password', 'my-own-pass-1');
    const headers = { authorization: `Bearer ${restfold('token', 'create', '--username', 'me').trim()}`, 'content-type': 'application/json' };
    const first = await serve(here, env);
    try {
      const created = await fetch(`${first.url}/api/v1/notes/`, { method: 'POST', headers, body: JSON.stringify({ title: 'Before the change' }) });
      expect(created.status).toBe(201);
    } finally {
      await first.stop();
    }

    const source = readFileSync(join(here, 'app.ts'), 'utf8');
    const changed = source
      .replace("done: fields.boolean({ default: false }),", "done: fields.boolean({ default: false }),\n  priority: fields.integer({ nullable: true }),")
      .replace("fields: ['id', 'title', 'done', 'created_at'],", "fields: ['id', 'title', 'done', 'priority', 'created_at'],");
    expect(changed.match(/priority/g)).toHaveLength(2);
    writeFileSync(join(here, 'app.ts'), changed);
    const forgotten = spawnSync('npx', ['restfold', 'makemigrations', '--check', '--app', 'app.ts'], { cwd: here, encoding: 'utf8' });
    expect(forgotten.status).toBe(1);
    expect(forgotten.stderr).toContain('add column notes.priority');

    expect(restfold('makemigrations')).toContain('add column notes.priority');
    expect(restfold('migrate')).toBe("Applied the app's migrations: 0002_add_column_notes_priority\n");
    const second = await serve(here, env);
    try {
      const patched = await fetch(`${second.url}/api/v1/notes/1/`, { method: 'PATCH', headers, body: JSON.stringify({ priority: 3 }) });
      expect(await patched.json()).toMatchObject({ id: 1, title: 'Before the change', priority: 3 });
      const listed = await (await fetch(`${second.url}/api/v1/notes/`, { headers })).json();
      expect(listed.results).toMatchObject([{ id: 1, priority: 3 }]);
    } finally {
      await second.stop();
    }
  }, 180_000);
});

describe('restfold installed with --omit=optional: an app on PostgreSQL alone, without the SQLite driver', () => {
  let here: string;
  const schema = `rf_installed_${randomBytes(6).toString('hex')}`;
  beforeAll(() => {
    here = join(folder, 'postgres-only');
    // No local prebuild handed over: nothing is to build better-sqlite3.
    packAndInstall(folder, here, { omitOptional: true });
    run('npx', ['restfold', 'new', '.'], {}, here);
  }, 300_000);
  afterAll(async () => {
    if (process.env.TEST_DATABASE_URL) await onPostgres((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  });

  it('installs without better-sqlite3, and a sqlite: database, named or the default, fails saying how to install it', () => {
    expect(existsSync(join(here, 'node_modules', 'better-sqlite3'))).toBe(false);
    for (const DATABASE_URL of ['sqlite:./data/app.sqlite3', '']) {
      const migrate = spawnSync('npx', ['restfold', 'migrate', '--app', 'app.ts'], { cwd: here, env: { ...process.env, DATABASE_URL }, encoding: 'utf8' });
      expect(migrate.status).toBe(1);
      expect(migrate.stderr).toContain('needs the driver better-sqlite3, an optional dependency of restfold that is not installed');
      expect(migrate.stderr).toContain('run "npm install better-sqlite3", or set DATABASE_URL to a postgres:// URL');
    }
  }, 120_000);

  it('prints the OpenAPI document with `restfold schema` and checks migrations, which open no database, with DATABASE_URL unset or PostgreSQL\'s', () => {
    for (const DATABASE_URL of ['', 'postgres://nobody@127.0.0.1:1/nothing']) {
      const env = { DATABASE_URL };
      const document = JSON.parse(run('npx', ['restfold', 'schema', '--app', 'app.ts'], env, here).stdout);
      expect(Object.keys(document.paths)).toContain('/api/v1/notes/');
      expect(run('npx', ['restfold', 'makemigrations', '--check', '--app', 'app.ts'], env, here).stdout).toContain('No changes.');
    }
  }, 120_000);

  it.runIf(process.env.TEST_DATABASE_URL)('migrates and serves the app on PostgreSQL', async () => {
    await onPostgres((client) => client.query(`CREATE SCHEMA ${schema}`));
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const env = { DATABASE_URL: url.toString(), SECRET_KEY: 'postgres-only-secret-0123456789abcdef' };
    const restfold = (...args: string[]) => run('npx', ['restfold', ...args, '--app', 'app.ts'], env, here).stdout;
    expect(restfold('migrate')).toContain("Applied the app's migrations: 0001_initial");
    restfold('createuser', '--username', 'me', '--password', 'my-own-pass-1');
    const headers = { authorization: `Bearer ${restfold('token', 'create', '--username', 'me').trim()}`, 'content-type': 'application/json' };
    const { url: served, stop } = await serve(here, env);
    onTestFinished(stop);
    const created = await fetch(`${served}/api/v1/notes/`, { method: 'POST', headers, body: JSON.stringify({ title: 'On PostgreSQL alone' }) });
    expect(created.status).toBe(201);
    expect((await (await fetch(`${served}/api/v1/notes/`, { headers })).json()).results).toMatchObject([{ title: 'On PostgreSQL alone' }]);
  }, 180_000);
});
