/**
 * docs/reference/ is generated from the public API's declarations (`npm run docs:reference`): it is stale
 * when the built declarations (dist/, as `npm run build` left it) or TypeDoc's settings differ from those it
 * was generated from. Compared by hash, so the test never runs TypeDoc.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { declarationsHash, hashFile } from '../../scripts/api-reference.js';

it('matches the declarations it was generated from (else: npm run docs:reference)', () => {
  expect(readFileSync(hashFile, 'utf8').trim(), 'docs/reference/ is stale: run npm run docs:reference').toBe(declarationsHash());
});

it('lists every export of the package in its index', () => {
  const root = join(import.meta.dirname, '..', '..');
  const index = readFileSync(join(root, 'src', 'framework', 'index.ts'), 'utf8');
  const exported = [...index.matchAll(/^export (?:type )?\{([^}]*)\}/gm)].flatMap((match) =>
    match[1]!.split(',').map((name) => name.trim().replace(/^type /, '').split(' as ').at(-1)!).filter(Boolean),
  );
  const listed = readFileSync(join(root, 'docs', 'reference', 'README.md'), 'utf8');
  // Fastify's types are Fastify's: the reference names them without documenting them.
  const missing = exported.filter((name) => !name.startsWith('Fastify') && name !== 'RouteHandlerMethod' && !listed.includes(`[${name}](`));
  expect(exported.length).toBeGreaterThan(100);
  expect(missing).toEqual([]);
});
