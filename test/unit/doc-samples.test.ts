/**
 * Every code sample of the tutorial and the guides is a region of a real file that a test type-checks
 * and runs (docs/architecture.md, "Docs"), byte for byte; every shell block is run by the tutorial's
 * test or says why not. `npm run docs:samples` copies the regions into the pages (DOC_SAMPLES=write).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blocksOf, region, root, sampleSource, samplePages, withSamplesFromRegions } from '../support/doc-samples.js';

const CODE = new Set(['ts', 'js', 'mjs', 'tsx']);
const SHELL = new Set(['sh', 'bash', 'shell']);

if (process.env.DOC_SAMPLES === 'write') for (const page of samplePages()) writeFileSync(join(root, page), withSamplesFromRegions(page));

describe.each(samplePages())('%s', (page) => {
  const blocks = blocksOf(page);

  it('cuts every code sample from a region of a real file, byte for byte', () => {
    const code = blocks.filter((block) => CODE.has(block.language));
    const unmarked = code.filter((block) => block.marker?.kind !== 'sample').map((block) => `${page}:${block.line}`);
    expect(unmarked, 'code blocks without <!-- sample: FILE#REGION -->').toEqual([]);
    for (const block of code) {
      const { file, name } = sampleSource(block);
      expect(block.code, `${page}:${block.line} differs from ${file}#${name} (npm run docs:samples)`).toBe(region(file, name));
    }
  });

  it('runs every shell block in the tutorial, or says why not', () => {
    const shell = blocks.filter((block) => SHELL.has(block.language));
    const allowed = page === 'docs/tutorial.md' ? ['tutorial', 'not run'] : ['not run'];
    const unmarked = shell.filter((block) => !allowed.includes(block.marker?.kind ?? '')).map((block) => `${page}:${block.line}`);
    expect(unmarked, `shell blocks without <!-- ${allowed.join(': … --> or <!-- ')}: … -->`).toEqual([]);
  });
});
