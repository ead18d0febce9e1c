/**
 * Restfold as a user installs it: `npm pack`'s tarball of this checkout installed into a new folder
 * outside the checkout (npm init -y first, as a user's folder starts). better-sqlite3 has no prebuilt
 * binary to download here, and compiling it takes minutes: the binary `npm ci` already built in the
 * checkout is handed to the install as a local prebuild (prebuild-install's documented
 * `local-prebuilds` setting), and npm's own cache serves every package it holds (`--prefer-offline`).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './spawned-server.js';

/** `command args` in `cwd`, as its user would type it; throws with the output unless it exits 0. */
export function runIn(cwd: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): { stdout: string; stderr: string } {
  const result = spawnSync(command, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** Packs the checkout (what `npm run build` left in dist/ is what ships) into `folder`; the tarball's path. */
export function packTarball(folder: string): string {
  const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', folder], { cwd: root, encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  return join(folder, packed.stdout.trim().split('\n').at(-1)!);
}

/** The checkout's better-sqlite3 binary, in `folder`/prebuilds, as the release archive prebuild-install would download. */
export function localPrebuild(folder: string): string {
  const prebuilds = join(folder, 'prebuilds');
  mkdirSync(prebuilds, { recursive: true });
  const { version } = JSON.parse(readFileSync(join(root, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as { version: string };
  const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
  const archive = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${glibc ? '' : 'musl'}-${process.arch}.tar.gz`;
  const tar = spawnSync('tar', ['czf', join(prebuilds, archive), '-C', join(root, 'node_modules', 'better-sqlite3'), 'build/Release/better_sqlite3.node']);
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return prebuilds;
}

export interface PackedInstall {
  readonly tarball: string;
  /** The environment an install in a folder of `folder`'s takes the local prebuild with. */
  readonly installEnv: NodeJS.ProcessEnv;
  /** What npm install printed. */
  readonly installLog: string;
}

/** Packs the checkout into `folder` and installs the tarball into `app` (made, npm init -y first). */
export function packAndInstall(folder: string, app: string): PackedInstall {
  mkdirSync(app, { recursive: true });
  const tarball = packTarball(folder);
  // As a user's folder starts: npm 11's `npm init -y` writes "type": "commonjs".
  runIn(app, 'npm', ['init', '-y']);
  const installEnv = { npm_config_better_sqlite3_local_prebuilds: localPrebuild(folder) };
  const install = runIn(app, 'npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], installEnv);
  return { tarball, installEnv, installLog: `${install.stdout}${install.stderr}` };
}
