/** The strict type-check a user's build would run over generated clients and the code using them. */
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
