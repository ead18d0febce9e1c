/**
 * `npm run docs:reference`: docs/reference/, the API reference TypeDoc generates from the exports of
 * src/framework/index.ts (as built into dist/), and the hash of what it was generated from, by which
 * test/unit/api-reference.test.ts tells a stale reference without running TypeDoc (docs/architecture.md, "Docs").
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(import.meta.dirname, '..');
export const hashFile = join(root, 'docs', 'reference', 'declarations.sha256');

/**
 * A hash of the TypeDoc settings and of every declaration file dist/framework/index.d.ts reaches through
 * relative imports (the public API's types and their doc comments), in a fixed order.
 */
export function declarationsHash(): string {
  const hash = createHash('sha256').update(readFileSync(join(root, 'typedoc.json')));
  const seen = new Set<string>();
  const pending = [join(root, 'dist', 'framework', 'index.d.ts')];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"](\.[^'"]+)['"]/g)) {
      pending.push(resolve(dirname(file), specifier!.replace(/\.js$/, '.d.ts')));
    }
  }
  for (const file of [...seen].sort()) hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const typedoc = spawnSync(join(root, 'node_modules', '.bin', 'typedoc'), [], { cwd: root, stdio: 'inherit' });
  if (typedoc.status !== 0) process.exit(typedoc.status ?? 1);
  writeFileSync(hashFile, `${declarationsHash()}\n`);
}
