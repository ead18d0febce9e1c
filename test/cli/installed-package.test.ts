/**
 * Restfold as a user meets it: `npm pack`'s tarball installed into a new
 * folder outside the checkout, `npx restfold new .` writing a TypeScript
 * `app.ts` with one collection and its first migration (type-checked strictly
 * against the installed package's types), then `npx restfold createuser`,
 * `token create` and `serve --app app.ts` run in that folder, with a record
 * created and listed over HTTP.
 *
 * better-sqlite3 has no prebuilt binary to download here, and compiling it
 * takes minutes; the binary `npm ci` already built in the checkout is handed
 * to the install as a local prebuild (prebuild-install's documented
 * `local-prebuilds` setting), and npm's own cache serves every package it
 * holds (`--prefer-offline`). Everything else installs as it would for a user.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningUrl, root } from '../support/spawned-server.js';

let folder: string;
let app: string;
let server: ChildProcess | undefined;
let installLog: string;


/** `command args` in the app's folder, as its user would type it; throws with the output unless it exits 0. */
function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): { stdout: string; stderr: string } {
  const result = spawnSync(command, args, { cwd: app, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** The checkout's better-sqlite3 binary as the release archive prebuild-install would download. */
function localPrebuild(): string {
  const prebuilds = join(folder, 'prebuilds');
  mkdirSync(prebuilds);
  const { version } = JSON.parse(readFileSync(join(root, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as { version: string };
  const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
  const archive = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${glibc ? '' : 'musl'}-${process.arch}.tar.gz`;
  const tar = spawnSync('tar', ['czf', join(prebuilds, archive), '-C', join(root, 'node_modules', 'better-sqlite3'), 'build/Release/better_sqlite3.node']);
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return prebuilds;
}

const DATABASE_URL = (): string => `sqlite:${join(app, 'data', 'app.sqlite3')}`;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'restfold-outside-'));
  app = join(folder, 'my-app');
  mkdirSync(app);
  // What `npm run build` left in dist/ is what ships (the suites run after the build).
  const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', folder], { cwd: root, encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  const tarball = join(folder, packed.stdout.trim().split('\n').at(-1)!);
  writeFileSync(join(app, 'package.json'), '{ "name": "my-app", "private": true, "type": "module" }\n');
  const install = run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], {
    npm_config_better_sqlite3_local_prebuilds: localPrebuild(),
  });
  installLog = `${install.stdout}${install.stderr}`;
  run('npx', ['restfold', 'new', '.']);
}, 300_000);

afterAll(() => {
  if (server?.pid) process.kill(-server.pid, 'SIGTERM');
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('restfold installed from its tarball into a new folder', () => {
  it('installs without engine warnings, shipping the build and not the sources', () => {
    expect(installLog).not.toContain('EBADENGINE');
    const installed = join(app, 'node_modules', 'restfold');
    expect(existsSync(join(installed, 'dist', 'cli.js'))).toBe(true);
    expect(existsSync(join(installed, 'dist', 'framework', 'index.d.ts'))).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    expect(existsSync(join(installed, 'test'))).toBe(false);
  });

  it('scaffolds an app with its first migration, which matches its declarations', () => {
    for (const file of ['app.ts', 'README.md', 'migrations/index.ts', 'migrations/0001_initial.ts']) expect(existsSync(join(app, file))).toBe(true);
    expect(readFileSync(join(app, 'migrations', '0001_initial.ts'), 'utf8')).toContain("op.createTable('notes'");
    expect(run('npx', ['restfold', 'makemigrations', '--app', 'app.ts', '--check']).stdout).toContain('No changes.');
    // Never over an app already there.
    const again = spawnSync('npx', ['restfold', 'new', '.'], { cwd: app, encoding: 'utf8' });
    expect(again.status).toBe(2);
    expect(again.stderr).toContain('already holds app.ts, migrations, README.md');
  });

  it("type-checks the app strictly against the installed package's types", () => {
    const program = ts.createProgram([join(app, 'app.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: [],
      skipLibCheck: true,
    });
    const messages = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(messages).toEqual([]);
  });

  it('serves the TypeScript app with `npx restfold serve --app app.ts`: create and list over HTTP', async () => {
    const env = { DATABASE_URL: DATABASE_URL(), SECRET_KEY: 'outside-the-checkout-secret-0123456789' };
    run('npx', ['restfold', 'createuser', '--app', 'app.ts', '--username', 'me', '--password', 'my-own-pass-1'], env);
    const token = run('npx', ['restfold', 'token', 'create', '--app', 'app.ts', '--username', 'me'], env).stdout.trim();

    server = spawn('npx', ['restfold', 'serve', '--app', 'app.ts'], {
      cwd: app,
      env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const url = await listeningUrl(server);

    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${url}/api/v1/notes/`, { method: 'POST', headers, body: JSON.stringify({ title: 'Written outside the checkout' }) });
    expect(created.status).toBe(201);
    const note = { id: 1, title: 'Written outside the checkout', done: false, created_at: expect.any(String) };
    expect(await created.json()).toEqual(note);
    const listed = await fetch(`${url}/api/v1/notes/?done=false`, { headers });
    expect(await listed.json()).toEqual({ count: 1, next: null, previous: null, results: [note] });
  }, 120_000);
});
