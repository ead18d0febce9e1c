/**
 * The code samples of the tutorial and the guides, and the files they are cut from (docs/architecture.md,
 * "Docs"). A sample is a fenced block with a marker on the line before it:
 *
 *     <!-- sample: examples/guides/scopes.ts#owner-scope -->   a region of a real file, byte for byte
 *     <!-- tutorial: run -->                                   a shell block test/cli/tutorial.test.ts runs
 *     <!-- not run: why -->                                    a shell block no test runs, and why
 *
 * A region is the lines between `// #region NAME` and `// #endregion NAME`, their common indentation removed.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const root = join(import.meta.dirname, '..', '..');

/** The pages whose samples are run: the tutorial and every guide. */
export const samplePages = (): string[] => [
  'docs/tutorial.md',
  ...readdirSync(join(root, 'docs', 'guides'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/guides/${name}`),
];

export interface Block {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  /** The marker's kind and argument (`sample`, `tutorial`, `not run`), when the line before the fence has one. */
  marker?: { kind: string; argument: string };
  /** The block's text, without the fences and the fence's indentation, ending in a newline. */
  code: string;
  /** Where the code starts and ends in the page's lines (0-based, end exclusive), and the fence's indentation. */
  span: { start: number; end: number; indent: string };
}

const FENCE = /^( *)```(\S*)\s*$/;
const MARKER = /^\s*<!-- (sample|tutorial|not run): (.+?) -->\s*$/;

export function blocksOf(page: string, text = readFileSync(join(root, page), 'utf8')): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = FENCE.exec(lines[index]!);
    if (!open) continue;
    const indent = open[1]!;
    let close = index + 1;
    while (close < lines.length && lines[close]!.trimEnd() !== `${indent}\`\`\``) close++;
    const marked = index > 0 ? MARKER.exec(lines[index - 1]!) : null;
    const body = lines.slice(index + 1, close).map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()));
    blocks.push({
      page,
      line: index + 1,
      language: open[2]!,
      marker: marked ? { kind: marked[1]!, argument: marked[2]! } : undefined,
      code: `${body.join('\n')}\n`,
      span: { start: index + 1, end: close, indent },
    });
    index = close;
  }
  return blocks;
}

/** The region `name` of `file` (from the repository's root), dedented; throws when it is missing or unclosed. */
export function region(file: string, name: string): string {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const start = lines.findIndex((line) => line.trim() === `// #region ${name}`);
  const end = lines.findIndex((line, index) => index > start && line.trim() === `// #endregion ${name}`);
  if (start < 0 || end < 0) throw new Error(`${file} has no region "${name}" (// #region ${name} … // #endregion ${name})`);
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((line) => line.trim()).map((line) => line.length - line.trimStart().length));
  return `${body.map((line) => line.slice(indent)).join('\n')}\n`;
}

/** Where a `sample:` marker points: the file and the region's name. */
export function sampleSource(block: Block): { file: string; name: string } {
  const [file, name] = block.marker!.argument.split('#') as [string, string | undefined];
  if (!name) throw new Error(`${block.page}:${block.line}: a sample names its region: <!-- sample: FILE#REGION -->`);
  return { file, name };
}

/** The page with each `sample:` block's text replaced by its region's (the one way to change a sample). */
export function withSamplesFromRegions(page: string): string {
  const text = readFileSync(join(root, page), 'utf8');
  const lines = text.split('\n');
  // From the last block up, so earlier spans keep their lines.
  for (const block of blocksOf(page, text).reverse()) {
    if (block.marker?.kind !== 'sample') continue;
    const { file, name } = sampleSource(block);
    const code = region(file, name).replace(/\n$/, '').split('\n');
    lines.splice(block.span.start, block.span.end - block.span.start, ...code.map((line) => (line ? block.span.indent + line : line)));
  }
  return lines.join('\n');
}
