/**
 * docs/testing-your-app.md shows only samples that run: each TypeScript block follows a
 * `<!-- sample: path -->` line naming a test file that `npm test` runs, and is that file exactly
 * (or `path#region`: that region of it, as docs/guides' samples are).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { region } from '../support/doc-samples.js';

const root = new URL('../../', import.meta.url);
const guide = readFileSync(new URL('docs/testing-your-app.md', root), 'utf8');

/** Each ```ts block of `text`, with the sample line just before it (undefined where there is none): a file, or a region of one (`FILE#REGION`). */
function blocks(text: string): { path: string | undefined; name: string | undefined; code: string }[] {
  return [...text.matchAll(/(?:<!-- sample: ([^\s#]+)(?:#([\w-]+))? -->\n)?```ts\n([\s\S]*?)```/g)].map((match) => ({ path: match[1], name: match[2], code: match[3]! }));
}

/** What a sample shows: its file, or the region it names (docs/guides' samples). */
const shown = (path: string, name: string | undefined): string => (name ? region(path, name) : readFileSync(new URL(path, root), 'utf8'));

describe('the testing guide', () => {
  const samples = blocks(guide);

  it('shows TypeScript samples, each naming the file it is', () => {
    expect(samples.length).toBeGreaterThanOrEqual(3);
    expect(samples.filter(({ path }) => path === undefined).map(({ code }) => code.split('\n')[0])).toEqual([]);
  });

  it('shows each file exactly as it is run', () => {
    for (const { path, name, code } of samples) expect(code, path).toBe(shown(path!, name));
  });

  it('names files the suites run: the examples\' tests (node --test) and test/ (Vitest)', () => {
    for (const { path } of samples) expect(path).toMatch(/^(examples\/\w+\/tests\/[\w-]+\.test\.ts|test\/[\w/-]+\.test\.ts)$/);
  });

  it('tells a changed sample from its file', () => {
    const changed = guide.replace("expectStatus(await t.client().post('/api/v1/products/', tea), 401);", "expectStatus(await t.client().post('/api/v1/products/', tea), 400);");
    expect(changed).not.toBe(guide);
    const sample = blocks(changed).find(({ path }) => path === 'examples/shop/tests/permissions-and-scopes.test.ts')!;
    expect(sample.code).not.toBe(shown(sample.path!, sample.name));
  });

  it('is linked from the README', () => {
    expect(readFileSync(new URL('README.md', root), 'utf8')).toContain('(docs/testing-your-app.md)');
  });
});
