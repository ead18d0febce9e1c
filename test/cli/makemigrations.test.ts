/**
 * The loop a user lives in (docs/guides/models-and-migrations.md), through `dist/cli.js` on an app of their
 * own that never mentions its migrations (they are found in migrations/ beside it): declare,
 * `makemigrations`, review, `migrate`, serve; add a field (`makemigrations --check` and `check` name
 * it, the server refuses to start), generate and migrate, and it is served; rename one with
 * `--rename`; decimal and negative defaults compare as declared. On SQLite, and on PostgreSQL (a
 * schema of its own) when TEST_DATABASE_URL is set.
 * Then, on SQLite: migrations the app passes win over the folder, an app in TypeScript and the same
 * app compiled to JavaScript beside it, and malformed files in the folder.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { cliWorkspace, runCli, startServer } from '../support/spawned-server.js';

/** The app module: notes with `fields`, and nothing about migrations. */
const appSource = (noteFields: string) => `
import { collection, defineApp, fields, model, serializer } from 'restfold';
const Note = model('notes', { id: fields.id(), ${noteFields} });
const names = Object.keys(Note.fields);
const notes = collection('notes', { serializer: serializer(Note, { fields: names, readOnly: ['id'] }), filterFields: names.filter((name) => name !== 'id') });
export default defineApp({ collections: [notes] });
`;

const dialects = ['sqlite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];

describe.each(dialects)('makemigrations, migrate, check on %s', (dialect) => {
  const { folder, app, env, cli, databaseUrl } = cliWorkspace(dialect, 'makemigrations');
  const declare = (noteFields: string) => writeFileSync(app, appSource(noteFields));

  it('writes the first migration beside the app, in its language; --check, migrate, check and serve find it there', async () => {
    declare("title: fields.string({ maxLength: 100 })");
    const made = cli('makemigrations');
    expect(made.status, made.stderr).toBe(0);
    expect(made.stdout).toContain('create table notes');
    expect(readdirSync(join(folder, 'migrations')).sort()).toEqual(['0001_initial.mjs', 'index.mjs']);
    expect(readFileSync(join(folder, 'migrations', '0001_initial.mjs'), 'utf8')).toContain("op.createTable('notes', {");

    expect(cli('makemigrations', '--check')).toMatchObject({ status: 0, stdout: 'No changes.\n' });
    const migrated = cli('migrate');
    expect(migrated.status, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/^Applied the framework's migrations: 0001_initial\b.*\nApplied the app's migrations: 0001_initial\n$/);
    expect(cli('migrate')).toMatchObject({ status: 0, stdout: 'Migrations are up to date.\n' });
    expect(cli('check')).toMatchObject({ status: 0, stdout: 'The database matches the declarations.\n' });

    const server = await startServer({ appArgs: ['--app', app], env: { DATABASE_URL: databaseUrl() } });
    try {
      server.cli(['createuser', '--username', 'writer', '--password', 'writer-pass']);
      const token = server.cli(['token', 'create', '--username', 'writer']).trim();
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const created = await fetch(`${server.url}/api/v1/notes/`, { method: 'POST', headers, body: JSON.stringify({ title: 'Dune' }) });
      expect(created.status).toBe(201);
      expect(await created.json()).toEqual({ id: 1, title: 'Dune' });
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('adds a field: --check, check and start-up name it until it is generated and migrated, then it works', async () => {
    declare("title: fields.string({ maxLength: 100 }), isbn: fields.string({ maxLength: 20, nullable: true })");

    const forgotten = cli('makemigrations', '--check');
    expect(forgotten.status).toBe(1);
    expect(forgotten.stderr).toContain('add column notes.isbn');
    const drifted = cli('check');
    expect(drifted.status).toBe(1);
    expect(drifted.stderr).toContain('column "notes.isbn" is missing');
    const refused = runCli(['serve', '--app', app], { ...env(), HOST: '127.0.0.1', PORT: '0' });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('column "notes.isbn" is missing');

    const made = cli('makemigrations');
    expect(made.status, made.stderr).toBe(0);
    const file = join(folder, 'migrations', '0002_add_column_notes_isbn_and_more.mjs');
    expect(readFileSync(file, 'utf8')).toContain("op.addColumn('notes', 'isbn', { type: 'varchar', maxLength: 20, nullable: true }),");
    expect(readFileSync(join(folder, 'migrations', 'index.mjs'), 'utf8')).toContain("'0002_add_column_notes_isbn_and_more': m0002_add_column_notes_isbn_and_more");
    expect(cli('makemigrations', '--check')).toMatchObject({ status: 0, stdout: 'No changes.\n' });
    expect(cli('migrate')).toMatchObject({ status: 0, stdout: "Applied the app's migrations: 0002_add_column_notes_isbn_and_more\n" });

    const server = await startServer({ appArgs: ['--app', app], env: { DATABASE_URL: databaseUrl() } });
    try {
      const token = server.cli(['token', 'create', '--username', 'writer']).trim();
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      expect(await (await fetch(`${server.url}/api/v1/notes/1/`, { headers })).json()).toEqual({ id: 1, title: 'Dune', isbn: null });
      const patched = await fetch(`${server.url}/api/v1/notes/1/`, { method: 'PATCH', headers, body: JSON.stringify({ isbn: '978-0441013593' }) });
      expect(patched.status).toBe(200);
      const found = await (await fetch(`${server.url}/api/v1/notes/?isbn=978-0441013593`, { headers })).json();
      expect(found.results).toEqual([{ id: 1, title: 'Dune', isbn: '978-0441013593' }]);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('renames a field with --rename, keeping its data; without it, nothing is guessed', async () => {
    declare("name: fields.string({ maxLength: 100 }), isbn: fields.string({ maxLength: 20, nullable: true })");
    const unsaid = cli('makemigrations', '--check');
    expect(unsaid.stderr).toContain('add column notes.name');
    expect(unsaid.stderr).toContain('drop column notes.title');

    const made = cli('makemigrations', '--rename', 'notes.title=name', '--name', 'title_is_name');
    expect(made.status, made.stderr).toBe(0);
    expect(made.stdout).toContain('rename column notes.title to name');
    expect(cli('migrate').stdout).toContain('0003_title_is_name');
    expect(cli('check').status).toBe(0);

    const server = await startServer({ appArgs: ['--app', app], env: { DATABASE_URL: databaseUrl() } });
    try {
      const token = server.cli(['token', 'create', '--username', 'writer']).trim();
      const listed = await (await fetch(`${server.url}/api/v1/notes/`, { headers: { authorization: `Bearer ${token}` } })).json();
      expect(listed.results).toMatchObject([{ name: 'Dune', isbn: '978-0441013593' }]);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('adds decimal and negative defaults that check, start-up and --check all take as declared', async () => {
    const defaults = "total: fields.decimal({ digits: 10, places: 2, default: '0.00' }), fee: fields.decimal({ digits: 10, places: 2, default: '1.50' }), "
      + "tip: fields.decimal({ digits: 10, places: 2, default: '12.30' }), credit: fields.decimal({ digits: 10, places: 2, default: '-0.50' }), "
      + "whole: fields.decimal({ digits: 6, places: 0, default: '7' }), offset: fields.integer({ default: -1 }), ratio: fields.float({ default: -1.5 })";
    declare(`name: fields.string({ maxLength: 100 }), isbn: fields.string({ maxLength: 20, nullable: true }), ${defaults}`);
    const made = cli('makemigrations', '--name', 'defaults');
    expect(made.status, made.stderr).toBe(0);
    expect(cli('migrate').stdout).toContain('0004_defaults');
    expect(cli('check')).toMatchObject({ status: 0, stdout: 'The database matches the declarations.\n' });
    expect(cli('makemigrations', '--check')).toMatchObject({ status: 0, stdout: 'No changes.\n' });

    const server = await startServer({ appArgs: ['--app', app], env: { DATABASE_URL: databaseUrl() } });
    try {
      const token = server.cli(['token', 'create', '--username', 'writer']).trim();
      const created = await fetch(`${server.url}/api/v1/notes/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Defaults' }),
      });
      expect(created.status).toBe(201);
      expect(await created.json()).toMatchObject({ total: '0.00', fee: '1.50', tip: '12.30', credit: '-0.50', whole: '7', offset: -1, ratio: -1.5 });
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe('the library example', () => {
  it('has a migration for every declaration', () => {
    expect(runCli(['makemigrations', '--check', '--app', 'examples/library/app.mjs'], { PATH: process.env.PATH })).toMatchObject({ status: 0, stdout: 'No changes.\n' });
  }, 120_000);
});

describe('where an app’s migrations are found', () => {
  const title = "title: fields.string({ maxLength: 100 })";
  const explicit = cliWorkspace('sqlite', 'explicit-migrations');
  const compiled = cliWorkspace('sqlite', 'compiled-app');
  const malformed = cliWorkspace('sqlite', 'malformed-migrations');

  it('takes the migrations an app passes to defineApp over the folder beside it', () => {
    const { app, cli } = explicit;
    writeFileSync(app, appSource(title));
    expect(cli('makemigrations').status).toBe(0);
    writeFileSync(app, appSource(title).replace('defineApp({ collections: [notes] })', 'defineApp({ collections: [notes], migrations: {} })'));
    const check = cli('makemigrations', '--check');
    expect(check.status).toBe(1);
    expect(check.stderr).toContain('create table notes');
    expect(cli('migrate').stdout).toMatch(/^Applied the framework's migrations: [^\n]*\n$/);
    expect(cli('check').stderr).toContain('table "notes" is missing');
  }, 120_000);

  it('finds a TypeScript app’s .ts migrations, and the .js ones compiled beside the compiled app', () => {
    const { folder, env } = compiled;
    const run = (file: string, ...args: string[]) => runCli([...args, '--app', join(folder, file)], env());
    writeFileSync(join(folder, 'app.ts'), appSource(title));
    expect(run('app.ts', 'makemigrations').status).toBe(0);
    expect(readdirSync(join(folder, 'migrations')).sort()).toEqual(['0001_initial.ts', 'index.ts']);
    expect(run('app.ts', 'makemigrations', '--check')).toMatchObject({ status: 0, stdout: 'No changes.\n' });

    // As tsc compiles in place: each .ts file's .js beside it. Node cannot import the .ts ones from app.js.
    for (const file of ['app.ts', 'migrations/0001_initial.ts', 'migrations/index.ts']) {
      const { outputText } = ts.transpileModule(readFileSync(join(folder, file), 'utf8'), { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } });
      writeFileSync(join(folder, file.replace(/\.ts$/, '.js')), outputText);
    }
    expect(run('app.js', 'makemigrations', '--check')).toMatchObject({ status: 0, stdout: 'No changes.\n' });
    expect(run('app.js', 'migrate')).toMatchObject({ status: 0, stdout: expect.stringMatching(/\nApplied the app's migrations: 0001_initial\n$/) });
    expect(run('app.js', 'check')).toMatchObject({ status: 0, stdout: 'The database matches the declarations.\n' });
  }, 120_000);

  it('stops, naming the file, at a module in migrations/ that is not a migration', () => {
    const { folder, app, cli } = malformed;
    writeFileSync(app, appSource(title));
    expect(cli('makemigrations').status).toBe(0);
    const broken = (file: string, source: string, message: string) => {
      writeFileSync(join(folder, 'migrations', file), source);
      for (const command of ['migrate', 'makemigrations']) {
        const result = cli(command);
        expect(result.status).toBe(1);
        expect(result.stderr).toContain(`${join(folder, 'migrations', file)}${message}`);
      }
      rmSync(join(folder, 'migrations', file));
    };
    broken('0002_typo.mjs', "import { migration, operations as op } from 'restfold';\nexport default migration({\n  operations: [op.dropTable('notes') op.dropTable('books')],\n});\n", ':3 failed to load: ');
    broken('0002_empty.mjs', 'export const operations = [];\n', ': its default export is not a migration');
    broken('0002_wrong.mjs', "export default { operations: [{ op: 'truncate' }] };\n", ': operations[0] is not an operation');
    broken('add_isbn.mjs', 'export default { operations: [] };\n', ' is not named as a migration: NNNN_words.mjs');
    // Nothing ran meanwhile; with the folder whole again, the app's migration runs.
    expect(cli('migrate').stdout).toContain("Applied the app's migrations: 0001_initial\n");
  }, 120_000);
});
