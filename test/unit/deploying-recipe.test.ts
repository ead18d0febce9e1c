/**
 * The haproxy recipe docs/deploying.md gives is the one the benchmarks behind haproxy run with
 * (bench/servers.mjs reads bench/haproxy-backend.cfg), so the latency measured there is the
 * latency a deployment following the page gets.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { blocksOf, root } from '../support/doc-samples.js';

it("shows bench/haproxy-backend.cfg, byte for byte, as the page's haproxy backend", () => {
  const recipe = readFileSync(join(root, 'bench', 'haproxy-backend.cfg'), 'utf8');
  const shown = blocksOf('docs/deploying.md').filter((block) => block.code.startsWith('backend '));
  expect(shown.map((block) => block.code)).toEqual([recipe]);
  expect(recipe).toMatch(/^ {4}option http-no-delay\b/m);
});
