/**
 * The layers' one direction of dependency (docs/architecture.md): src/core is plain vocabulary
 * that imports no other layer, neither Fastify nor Kysely; src/store depends on the core alone;
 * the framework's folders are layers too, each importing only those beneath it; no import cycle
 * anywhere in src, type imports included; the pipeline's stages import nothing of each other; and
 * the store owns SQL: nothing above it (framework, service, CLI, examples) imports Kysely or
 * compares a dialect's name, and no type the public API exports leads to Kysely's (but the
 * migration steps', for now).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const EXAMPLES = resolve(SRC, '../examples');

/** Every module under src/, as its path from src/ (`store/read/list.ts`). */
function modules(directory = SRC): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return modules(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [relative(SRC, path)] : [];
  });
}

/** Every source file of the example apps, as its path from the repository (`examples/library/app.mjs`). */
function exampleFiles(directory = EXAMPLES): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : exampleFiles(path);
    return /\.(m?[jt]s|tsx)$/.test(entry.name) ? [relative(resolve(SRC, '..'), path)] : [];
  });
}

/** The package an import names: `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
const packageName = (specifier: string): string => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/** What a module imports: src modules as paths from src/, packages by name. Type-only imports count. */
interface Imports {
  readonly modules: string[];
  readonly packages: string[];
}

function importsOf(module: string, known: ReadonlySet<string>): Imports {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(SRC, module), 'utf8'), true, true);
  const imports: Imports = { modules: [], packages: [] };
  for (const { fileName: specifier } of importedFiles) {
    if (!specifier.startsWith('.')) {
      imports.packages.push(packageName(specifier));
      continue;
    }
    const target = relative(SRC, resolve(SRC, dirname(module), specifier)).replace(/\.js$/, '');
    const file = [`${target}.ts`, `${target}.tsx`].find((candidate) => known.has(candidate));
    if (!file) throw new Error(`${module}: cannot resolve "${specifier}"`);
    imports.modules.push(file);
  }
  return imports;
}

const all = modules();
const graph = new Map(all.map((module) => [module, importsOf(module, new Set(all))]));
const layer = (module: string): string => module.split('/')[0]!;
const inLayer = (name: string): string[] => all.filter((module) => layer(module) === name);

/**
 * src's layers, lowest first: a module may import its own layer's modules and those of the layers
 * beneath it, never one above. In the framework, each folder is a layer, `views.ts` (the one
 * pipeline) sits between what it runs and the routes that call it, the admin (pages over the API's
 * routes and sessions) above those routes, and `index.ts` (the public API)
 * above the rest; the write unit shares the toolkit's layer (recordStore writes through it, and it marks
 * the users records it hands to hooks as the toolkit's credentials know them); the test kit
 * (restfold/testing), a consumer of the public API as the service is, has a layer of its own beside
 * it; the CLI, the scaffold it writes and its module hook for TypeScript apps share the top.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['core'],
  ['store'],
  ['framework/base'],
  ['framework/declare'],
  ['framework/stages'],
  ['framework/toolkit', 'framework/write'],
  ['framework/actions'],
  ['framework/render'],
  ['framework/docs'],
  ['framework/views.ts'],
  ['framework/routing'],
  ['framework/admin'],
  ['framework/app'],
  ['framework/index.ts'],
  ['service'],
  ['testing'],
  ['cli.ts', 'scaffold.ts', 'typescript-hooks.ts'],
];

/** The rank of a module's layer in LAYERS; a module in no layer is an error, so a new folder must be placed. */
function rankOf(module: string): number {
  const rank = LAYERS.findIndex((names) => names.some((name) => module === name || module.startsWith(`${name}/`)));
  if (rank < 0) throw new Error(`${module} is in no layer: add its folder to LAYERS.`);
  return rank;
}

/** `module → import` for each import that points up the layers, in `imports` (a module's own imports by module). */
const upwardImports = (imports: ReadonlyMap<string, Imports>): string[] =>
  [...imports].flatMap(([module, { modules }]) => modules.filter((imported) => rankOf(imported) > rankOf(module)).map((imported) => `${module} → ${imported}`));

/** The stage a module of framework/stages belongs to: its file, or its folder (`authentication`). */
const stageOf = (module: string): string | undefined => /^framework\/stages\/([^/.]+)/.exec(module)?.[1];

const ROOT = resolve(SRC, '..');
/** Source files above the store, from the repository: the framework, the service, the CLI, the examples. */
const aboveStore = [
  ...all.filter((module) => !['core', 'store'].includes(layer(module))).map((module) => join('src', module)),
  ...exampleFiles(),
];
const packagesOf = (file: string): string[] =>
  ts
    .preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true)
    .importedFiles.map(({ fileName }) => fileName)
    .filter((specifier) => !specifier.startsWith('.'))
    .map(packageName);

/**
 * A test of a dialect's name: `dialect ===` or `!==` anything, a name in quotes on either side of
 * an (in)equality, a `case` of one, or a `switch` over a dialect. Capabilities take their place.
 */
const DIALECT_TEST =
  /\bdialect\s*[!=]==?|[!=]==?\s*(['"`])(?:sqlite|postgres)\1|(['"`])(?:sqlite|postgres)\2\s*[!=]==?|\bcase\s+(['"`])(?:sqlite|postgres)\3|\bswitch\s*\([^)]*dialect/;

/** `file:line: text` for each line of the files that tests a dialect's name. */
const dialectTests = (files: readonly string[]): string[] =>
  files.flatMap((file) =>
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .flatMap((line, index) => (DIALECT_TEST.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
  );

const isFastify = (name: string): boolean => name === 'fastify' || name.startsWith('@fastify/');

/** `module → import` for each import of a layer's modules that `forbidden` rejects. */
function violations(name: string, forbidden: (imported: string, isPackage: boolean) => boolean): string[] {
  return inLayer(name).flatMap((module) => {
    const { modules: own, packages } = graph.get(module)!;
    return [
      ...own.filter((imported) => forbidden(imported, false)),
      ...packages.filter((imported) => forbidden(imported, true)),
    ].map((imported) => `${module} → ${imported}`);
  });
}

/** One import cycle among `members` as the path that closes it, or undefined when there is none. */
function cycleAmong(members: readonly string[], imports: ReadonlyMap<string, Imports> = graph): string[] | undefined {
  const inside = new Set(members);
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (module: string): string[] | undefined => {
    const start = path.indexOf(module);
    if (start >= 0) return [...path.slice(start), module];
    if (done.has(module)) return undefined;
    path.push(module);
    for (const imported of imports.get(module)!.modules.filter((next) => inside.has(next))) {
      const cycle = visit(imported);
      if (cycle) return cycle;
    }
    path.pop();
    done.add(module);
    return undefined;
  };
  for (const module of members) {
    const cycle = visit(module);
    if (cycle) return cycle;
  }
  return undefined;
}

/**
 * The public API's types that lead to a type Kysely declares, each as the path that reaches it
 * (`Database.db: Kysely`): through members, call signatures, type arguments, unions. `allowed`
 * names types not followed (the migration steps receive a Kysely handle until migrations are generated).
 */
function kyselyReachedFrom(program: ts.Program, entry: string, allowed: ReadonlySet<string>): string[] {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry)!;
  const found: string[] = [];
  const seen = new Set<ts.Type>();
  const fromKysely = (type: ts.Type): boolean =>
    [type.aliasSymbol, type.getSymbol()].some((symbol) => symbol?.declarations?.some((declaration) => /node_modules\/kysely\//.test(declaration.getSourceFile().fileName)));
  const visit = (type: ts.Type, path: string, depth: number): void => {
    const name = type.aliasSymbol?.name ?? type.getSymbol()?.name;
    if (seen.has(type) || depth > 8 || (name !== undefined && allowed.has(name))) return;
    seen.add(type);
    if (fromKysely(type)) {
      found.push(`${path}: ${checker.typeToString(type)}`);
      return;
    }
    if (type.isUnionOrIntersection()) type.types.forEach((member) => visit(member, path, depth + 1));
    (type.aliasTypeArguments ?? []).forEach((argument) => visit(argument, `${path}<>`, depth + 1));
    if (type.flags & ts.TypeFlags.Object) {
      const object = type as ts.ObjectType;
      if (object.objectFlags & ts.ObjectFlags.Reference) checker.getTypeArguments(object as ts.TypeReference).forEach((argument) => visit(argument, `${path}<>`, depth + 1));
      for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()]) {
        signature.getParameters().forEach((parameter) => visit(checker.getTypeOfSymbol(parameter), `${path}(${parameter.name})`, depth + 1));
        visit(signature.getReturnType(), `${path}()`, depth + 1);
      }
      for (const property of type.getProperties()) {
        // Node's and Fastify's own types lead nowhere near Kysely, and are large.
        if (property.declarations?.every((declaration) => /node_modules\/(@types\/node|fastify|@fastify|pino)/.test(declaration.getSourceFile().fileName))) continue;
        visit(checker.getTypeOfSymbol(property), `${path}.${property.name}`, depth + 1);
      }
    }
  };
  for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(source)!)) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    if (allowed.has(target.name)) continue;
    const declaration = target.declarations?.[0];
    if (!declaration) continue;
    const type = target.flags & (ts.SymbolFlags.Type) && !(target.flags & ts.SymbolFlags.Value) ? checker.getDeclaredTypeOfSymbol(target) : checker.getTypeOfSymbolAtLocation(target, declaration);
    visit(type, symbol.name, 0);
  }
  return found;
}

describe('the layers depend one way: framework → store → core', () => {
  it('reads the imports it judges', () => {
    // A reader that found nothing would pass every rule below.
    expect(graph.get('store/read/list.ts')).toMatchObject({
      modules: expect.arrayContaining(['store/read/records.ts', 'core/list-query.ts']),
      packages: expect.arrayContaining(['kysely']),
    });
    expect(graph.get('framework/app/app.ts')?.packages).toContain('fastify');
  });

  it('keeps the core free of every other layer, of Fastify and of Kysely', () => {
    expect(inLayer('core')).not.toEqual([]);
    expect(
      violations('core', (imported, isPackage) =>
        isPackage ? isFastify(imported) || imported === 'kysely' : layer(imported) !== 'core',
      ),
    ).toEqual([]);
  });

  it('has the store import from the core alone among src modules', () => {
    expect(violations('store', (imported, isPackage) => !isPackage && !['core', 'store'].includes(layer(imported)))).toEqual([]);
  });

  it('has no import cycle among store modules', () => {
    expect(cycleAmong(inLayer('store'))).toBeUndefined();
  });

  it('places every module in a layer, and imports only down the layers', () => {
    for (const module of all) expect(rankOf(module)).toBeGreaterThanOrEqual(0);
    expect(upwardImports(graph)).toEqual([]);
  });

  it('finds an upward import and a cycle planted in the graph', () => {
    // The rules above judge a graph; one with an import they must refuse shows they can fail.
    const planted = new Map(graph);
    const errors = graph.get('framework/base/errors.ts')!;
    planted.set('framework/base/errors.ts', { ...errors, modules: [...errors.modules, 'framework/routing/router.ts'] });
    expect(upwardImports(planted)).toEqual(['framework/base/errors.ts → framework/routing/router.ts']);
    expect(cycleAmong(all, planted)).toBeDefined();
  });

  it('has the test kit use the framework through its public API alone, as an app does', () => {
    const kit = inLayer('testing');
    expect(kit).toContain('testing/index.ts');
    expect(kit.flatMap((module) => graph.get(module)!.modules.filter((imported) => layer(imported) !== 'testing' && imported !== 'framework/index.ts').map((imported) => `${module} → ${imported}`))).toEqual([]);
  });

  it('has no import cycle anywhere in src, type imports included', () => {
    expect(cycleAmong(all)).toBeUndefined();
  });

  it('keeps the stages apart: a stage imports nothing of another (as DRF\'s stage modules, and Hono\'s middlewares)', () => {
    const crossing = inLayer('framework')
      .filter((module) => stageOf(module) !== undefined)
      .flatMap((module) => graph.get(module)!.modules.filter((imported) => stageOf(imported) !== undefined && stageOf(imported) !== stageOf(module)).map((imported) => `${module} → ${imported}`));
    expect(crossing).toEqual([]);
  });

  it('reads the files above the store, and knows a dialect test when it sees one', () => {
    expect(aboveStore).toEqual(expect.arrayContaining(['src/framework/views.ts', 'src/service/articles.ts', 'src/cli.ts', 'examples/library/app.mjs']));
    expect(packagesOf('src/framework/app/app.ts')).toContain('fastify');
    for (const test of [
      "if (runtime.database.dialect !== 'postgres') return;",
      "types.dialect === 'postgres' ? true : 1",
      "'sqlite' == name",
      'case "postgres":',
      'switch (database.dialect) {',
    ]) {
      expect(test).toMatch(DIALECT_TEST);
    }
    for (const innocent of ["url.startsWith('postgres://')", "const dialect = 'sqlite';", 'capabilities.mergesRoundTrips === true']) {
      expect(innocent).not.toMatch(DIALECT_TEST);
    }
  });

  it('keeps Kysely out of the framework, the service, the CLI and the examples: the store owns SQL', () => {
    expect(aboveStore.filter((file) => packagesOf(file).includes('kysely'))).toEqual([]);
  });

  it('exports no type from the public API that leads to Kysely: apps hold a Database, the store its handle', () => {
    const entry = join(SRC, 'framework/index.ts');
    const program = ts.createProgram([entry], { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext });
    // The two places an app writes SQL of its own on purpose, through Kysely: a hand-written
    // migration step (with SqlTypes' statements, RowsMove among them), and a scope's condition
    // beyond the filter vocabulary (storeCondition).
    const escapes = new Set(['MigrationStep', 'Migrations', 'SqlTypes', 'RowsMove', 'storeCondition', 'StoreExpression']);
    expect(kyselyReachedFrom(program, entry, escapes)).toEqual([]);
    // The walk finds what it looks for: the migration steps do lead to Kysely.
    expect(kyselyReachedFrom(program, entry, new Set())).toEqual(expect.arrayContaining([expect.stringMatching(/\(db\): Kysely/)]));
  }, 60_000);

  it('compares dialect names nowhere outside the store: the store asks its dialect for capabilities', () => {
    expect(dialectTests([...all.filter((module) => layer(module) !== 'store').map((module) => join('src', module)), ...exampleFiles()])).toEqual([]);
  });

  it('names each file for one thing: a name two files share is one of the twins listed, whose folders tell them apart', () => {
    expect(sharedNames(all)).toEqual(TWINS);
  });

  it('finds a new twin planted among the modules', () => {
    expect(sharedNames([...all, 'framework/actions/capabilities.ts'])).not.toEqual(TWINS);
  });
});

/** Each file name more than one module under src/ has, with those modules (sorted). */
function sharedNames(modules: readonly string[]): Record<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const module of modules) {
    const name = module.split('/').at(-1)!;
    byName.set(name, [...(byName.get(name) ?? []), module]);
  }
  const shared = [...byName].filter(([, paths]) => paths.length > 1).sort(([a], [b]) => a.localeCompare(b));
  return Object.fromEntries(shared.map(([name, paths]) => [name, paths.sort()]));
}

/**
 * The file names several modules may share, because their folders say what each is: a folder's
 * entry (`index.ts`), one migration per app, one capabilities file per dialect (as Kysely's), the
 * core's vocabulary and the declarations an app makes of it, an auth kind's endpoints and its
 * credential check, a collection's action and the store's read, the framework's assembly and an app.
 */
const TWINS: Record<string, string[]> = {
  '0001_initial.ts': ['service/migrations/0001_initial.ts', 'store/accounts/migrations/0001_initial.ts'],
  'app.ts': ['framework/app/app.ts', 'service/app.ts'],
  'capabilities.ts': ['store/dialects/capabilities.ts', 'store/dialects/postgres/capabilities.ts', 'store/dialects/sqlite/capabilities.ts'],
  'envelopes.ts': ['framework/docs/envelopes.ts', 'framework/render/envelopes.ts'],
  'fields.ts': ['core/fields.ts', 'framework/declare/fields.ts'],
  'index.ts': [
    'framework/actions/index.ts',
    'framework/admin/index.ts',
    'framework/index.ts',
    'framework/render/browsable/index.ts',
    'framework/stages/authentication/index.ts',
    'framework/stages/scope/index.ts',
    'service/migrations/index.ts',
    'store/accounts/migrations/index.ts',
    'testing/index.ts',
  ],
  'jwt.ts': ['framework/routing/auth/jwt.ts', 'framework/stages/authentication/jwt.ts'],
  'list.ts': ['framework/actions/list.ts', 'store/read/list.ts'],
  'model.ts': ['core/model.ts', 'framework/declare/model.ts'],
  'session.ts': ['framework/routing/auth/session.ts', 'framework/stages/authentication/session.ts'],
  'token.ts': ['framework/routing/auth/token.ts', 'framework/stages/authentication/token.ts'],
  'users.ts': ['service/users.ts', 'store/accounts/users.ts'],
};
