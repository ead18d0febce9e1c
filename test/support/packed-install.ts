/**
 * Restfold as a user installs it: `npm pack`'s tarball of this checkout installed into a new folder
 * outside the checkout (npm init -y first, as a user's folder starts). better-sqlite3 has no prebuilt
 * binary to download here, and compiling it takes minutes: the binary `npm ci` already built in the
 * checkout is handed to the install as a local prebuild (prebuild-install's documented
 * `local-prebuilds` setting), and npm's own cache serves every package it holds (`--prefer-offline`).
 *
 * Packing and installing are the dearest steps of the files that need them, and give the same
 * folder each time for the same build: they run once per build (the shipped files' hash names a
 * folder in the temporary directory), and each test file gets a hard-linked copy of the installed
 * folder, its package files copied, to change as a user would.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, linkSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { root } from './spawned-server.js';

/** `command args` in `cwd`, as its user would type it; throws with the output unless it exits 0. */
export function runIn(cwd: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): { stdout: string; stderr: string } {
  const result = spawnSync(command, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** Packs the checkout (what `npm run build` left in dist/ is what ships) into `folder`; the tarball's path. */
function packTarball(folder: string): string {
  const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', folder], { cwd: root, encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  return join(folder, packed.stdout.trim().split('\n').at(-1)!);
}

/** The checkout's better-sqlite3 binary, in `folder`/prebuilds, as the release archive prebuild-install would download. */
function localPrebuild(folder: string): string {
  const prebuilds = join(folder, 'prebuilds');
  mkdirSync(prebuilds, { recursive: true });
  const { version } = JSON.parse(readFileSync(join(root, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as { version: string };
  const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
  const archive = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${glibc ? '' : 'musl'}-${process.arch}.tar.gz`;
  const tar = spawnSync('tar', ['czf', join(prebuilds, archive), '-C', join(root, 'node_modules', 'better-sqlite3'), 'build/Release/better_sqlite3.node']);
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return prebuilds;
}

/** Every file under `path` (a file or a folder), in a stable order. */
function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((name) => join(path, name))
    .filter((file) => statSync(file).isFile());
}

/** What identifies a build's tarball: package.json and the files its `files` ships, by content. */
function buildHash(): string {
  const hash = createHash('sha256');
  const { files } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[] };
  const shipped = files.filter((entry) => !entry.startsWith('!')).flatMap((entry) => filesUnder(join(root, entry)));
  for (const file of [join(root, 'package.json'), ...shipped]) hash.update(`${file.slice(root.length)}\0`).update(readFileSync(file));
  return hash.digest('hex').slice(0, 16);
}

/** Made by `make` in a folder of its own, then moved to `path` at once: a file that runs at the same time uses the first one made. */
function madeOnce(path: string, make: (folder: string) => void): string {
  if (existsSync(path)) return path;
  const making = `${path}.making-${randomBytes(4).toString('hex')}`;
  mkdirSync(making, { recursive: true });
  try {
    make(making);
    renameSync(making, path);
  } catch (error) {
    if (!existsSync(path)) throw error;
  } finally {
    rmSync(making, { recursive: true, force: true });
  }
  return path;
}

/** This build's folder: its tarball and the local prebuild, packed once. Folders of other builds go. */
function buildFolder(): { folder: string; tarball: string; prebuilds: string } {
  const hash = buildHash();
  const prefix = 'restfold-packed-';
  // Another build's, left by an earlier run: gone once an hour old (a run still using one is younger).
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(prefix) || name === `${prefix}${hash}`) continue;
    const path = join(tmpdir(), name);
    if (Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { recursive: true, force: true });
  }
  const folder = madeOnce(join(tmpdir(), `${prefix}${hash}`), (making) => {
    packTarball(making);
    localPrebuild(making);
  });
  const tarball = readdirSync(folder).find((name) => name.endsWith('.tgz'))!;
  return { folder, tarball: join(folder, tarball), prebuilds: join(folder, 'prebuilds') };
}

/** This build's tarball, and the local prebuild for an install of it: packed once per build. */
export function packedBuild(): { tarball: string; prebuilds: string } {
  const { tarball, prebuilds } = buildFolder();
  return { tarball, prebuilds };
}

export interface PackedInstall {
  readonly tarball: string;
  /** The environment an install in a folder of `folder`'s takes the local prebuild with. */
  readonly installEnv: NodeJS.ProcessEnv;
  /** What npm install printed. */
  readonly installLog: string;
}

/**
 * The tarball installed into `app` (made, npm init -y first), a folder of `folder`'s, which gets the
 * tarball too: the app's package.json names it by its path from the app (`file:../restfold-….tgz`).
 * With `omitOptional`, installed with --omit=optional (no better-sqlite3, nor its prebuild).
 */
export function packAndInstall(folder: string, app: string, { omitOptional = false } = {}): PackedInstall {
  const build = buildFolder();
  const installEnv = omitOptional ? {} : { npm_config_better_sqlite3_local_prebuilds: build.prebuilds };
  const variant = omitOptional ? 'app-omit-optional' : 'app';
  const installed = madeOnce(join(build.folder, variant), (making) => {
    // As a user's folder starts: npm 11's `npm init -y` writes "type": "commonjs".
    runIn(making, 'npm', ['init', '-y']);
    const flags = [...(omitOptional ? ['--omit=optional'] : []), '--prefer-offline', '--no-audit', '--no-fund'];
    const install = runIn(making, 'npm', ['install', `../${basename(build.tarball)}`, ...flags], installEnv);
    writeFileSync(join(making, 'install.log'), `${install.stdout}${install.stderr}`);
  });
  // Hard links: a copy of a hundred megabytes in a moment. npm replaces a package's files rather
  // than writing into them; the files it does write in place are copied instead.
  const tarball = join(folder, basename(build.tarball));
  if (!existsSync(tarball)) linkSync(build.tarball, tarball);
  const linked = spawnSync('cp', ['-al', installed, app]);
  if (linked.status !== 0) cpSync(installed, app, { recursive: true });
  // better-sqlite3's install script (once a user approves it) writes its binary in place: a copy of its own.
  const driver = join('node_modules', 'better-sqlite3');
  if (existsSync(join(installed, driver))) {
    rmSync(join(app, driver), { recursive: true });
    cpSync(join(installed, driver), join(app, driver), { recursive: true });
  }
  const installLog = readFileSync(join(installed, 'install.log'), 'utf8');
  rmSync(join(app, 'install.log'));
  for (const file of ['package.json', 'package-lock.json', join('node_modules', '.package-lock.json')]) {
    if (!existsSync(join(installed, file))) continue;
    rmSync(join(app, file));
    copyFileSync(join(installed, file), join(app, file));
  }
  // npm init -y names the package after its folder, and the install the lock after the package.
  const renamed = (file: string, rename: (json: Record<string, any>) => void) => { // eslint-disable-line @typescript-eslint/no-explicit-any -- npm's files
    const json = JSON.parse(readFileSync(join(app, file), 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- npm's files
    rename(json);
    writeFileSync(join(app, file), `${JSON.stringify(json, null, 2)}\n`);
  };
  renamed('package.json', (json) => (json.name = basename(app)));
  renamed('package-lock.json', (json) => (json.name = json.packages[''].name = basename(app)));
  return { tarball, installEnv, installLog };
}
