/**
 * Comments say why in words; the measurements that justify a choice live in docs/performance.md,
 * where they are dated by their context and kept together, rather than in comments where they go
 * stale unseen (DESIGN.md: speed by mechanism).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** A measured quantity: a duration, a size, a rate, a share or a ratio (`40 µs`, `~8 MB`, `5-10 %`, `1.5x`). */
const MEASUREMENT = /\d\s?(?:µs|ms|KB|MB|GB|req\/s|%)(?![\w/])|\b\d+(?:\.\d+)?x\b/;

/** What a JavaScript engine does inside: its name, object shapes, inline caches, its collector's generations. */
const ENGINE_INTERNALS = /\bV8\b|hidden class|megamorphic|monomorphic|inline cache|\bscavenge|\bpromoted\b|slow dictionary/i;

function sources(directory = SRC): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Every comment of a source file, found by the TypeScript parser (so strings and regular expressions are not taken for comments). */
function commentsOf(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const comments = new Map<number, string>();
  const collect = (ranges: readonly ts.CommentRange[] | undefined): void =>
    ranges?.forEach(({ pos, end }) => comments.set(pos, text.slice(pos, end)));
  const visit = (node: ts.Node): void => {
    collect(ts.getLeadingCommentRanges(text, node.pos));
    collect(ts.getTrailingCommentRanges(text, node.end));
    node.forEachChild(visit);
  };
  visit(file);
  return [...comments.values()];
}

/** Every comment line under src/ that `pattern` matches, with its file. */
const commentLinesMatching = (pattern: RegExp): string[] =>
  sources().flatMap((path) =>
    commentsOf(path)
      .flatMap((comment) => comment.split('\n'))
      .filter((line) => pattern.test(line))
      .map((line) => `${relative(SRC, path)}: ${line.trim()}`),
  );

describe('comments in src/', () => {
  it('carry no measurements (they belong in docs/performance.md)', () => {
    expect(commentLinesMatching(MEASUREMENT)).toEqual([]);
  });

  it('explain no engine internals (they say why the code is as it is, not how V8 runs it)', () => {
    expect(commentLinesMatching(ENGINE_INTERNALS)).toEqual([]);
  });
});
