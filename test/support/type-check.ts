/** The strict type-check a user's build would run over generated clients and the code using them. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** `file`'s errors under `tsc --strict --noEmit` (and noUncheckedIndexedAccess): the lines (1-based) they are on, and their messages. */
export function typeCheck(file: string): { lines: number[]; messages: string[] } {
  const program = ts.createProgram([file], {
    strict: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
  });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  return {
    lines: [...new Set(diagnostics.map((d) => (d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0)))],
    messages: diagnostics.map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`),
  };
}

/**
 * `source` written into `folder` and type-checked: the lines it is refused on, and the lines meant
 * wrong (each starting `await` or `export`), to be compared by the caller.
 */
export function wrongLines(folder: string, source: string): { refused: number[]; meant: number[]; messages: string[] } {
  const file = join(folder, 'wrong.ts');
  writeFileSync(file, source);
  const { lines, messages } = typeCheck(file);
  const meant = source.split('\n').flatMap((line, index) => (line.startsWith('await') || line.startsWith('export') ? [index + 1] : []));
  return { refused: lines.sort((a, b) => a - b), meant, messages };
}
