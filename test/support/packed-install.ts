/**
 * Restfold as a user installs it: `npm pack`'s tarball of this checkout, and the environment that
 * installs it here without compiling better-sqlite3 again or downloading what npm's cache holds.
 *
 * better-sqlite3 has no prebuilt binary to download here, and compiling it takes minutes; the binary
 * `npm ci` already built in the checkout is handed to the install as a local prebuild
 * (prebuild-install's documented `local-prebuilds` setting).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './spawned-server.js';

/** Packs the checkout (what `npm run build` left in dist/ is what ships) into `folder`; the tarball's path. */
export function packTarball(folder: string): string {
  const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', folder], { cwd: root, encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
  return join(folder, packed.stdout.trim().split('\n').at(-1)!);
}

/** The checkout's better-sqlite3 binary, in `folder`/prebuilds, as the release archive prebuild-install would download. */
export function localPrebuild(folder: string): string {
  const prebuilds = join(folder, 'prebuilds');
  mkdirSync(prebuilds);
  const { version } = JSON.parse(readFileSync(join(root, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as { version: string };
  const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
  const archive = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${glibc ? '' : 'musl'}-${process.arch}.tar.gz`;
  const tar = spawnSync('tar', ['czf', join(prebuilds, archive), '-C', join(root, 'node_modules', 'better-sqlite3'), 'build/Release/better_sqlite3.node']);
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return prebuilds;
}
