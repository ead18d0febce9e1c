/**
 * The README and docs stand on their own in the repository: every relative
 * link resolves to a file inside it (and a `#fragment` to a heading of the
 * linked Markdown file), and nothing cites a document that is not there.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const markdownIn = (folder: string): string[] =>
  readdirSync(join(root, folder))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `${folder}/${name}`);
const pages = ['README.md', 'SECURITY.md', ...markdownIn('docs'), ...markdownIn('docs/guides')];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsOf = (file: string): Set<string> =>
  new Set([...readFileSync(file, 'utf8').matchAll(/^#{1,6} +(.+)$/gm)].map((match) => anchor(match[1]!)));

/** Markdown links outside code spans and blocks: `[text](target)`. */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

describe.each(pages)('%s', (page) => {
  const file = join(root, page);
  const text = readFileSync(file, 'utf8');

  it('links only to files inside the repository, and to headings that exist', () => {
    const broken: string[] = [];
    for (const link of linksOf(text)) {
      if (/^[a-z]+:/i.test(link)) continue;
      const [path, fragment] = link.split('#') as [string, string | undefined];
      const target = path ? resolve(dirname(file), path) : file;
      const inside = !relative(root, target).startsWith('..');
      if (!inside || !existsSync(target)) broken.push(link);
      else if (fragment && statSync(target).isFile() && target.endsWith('.md') && !anchorsOf(target).has(fragment)) broken.push(link);
    }
    expect(broken).toEqual([]);
  });

  it('cites no document that lives outside the repository', () => {
    expect(text).not.toMatch(/\.\.\/shared|\bSPEC\b|seed §|seed's/);
  });
});
