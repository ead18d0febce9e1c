/**
 * The loop a user lives in (docs/your-own-collections.md), through `dist/cli.js` on an app of their
 * own: declare, `makemigrations`, review, `migrate`; add a field (`makemigrations --check` and
 * `check` name it, the server refuses to start), generate and migrate, and it works through the API;
 * rename one with `--rename`; decimal and negative defaults compare as declared. On SQLite, and on PostgreSQL when TEST_DATABASE_URL is set.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliWorkspace, runCli, startServer } from '../support/spawned-server.js';

/** The app module: notes with `fields`, importing its migrations once it has them. */
const appSource = (noteFields: string, withMigrations: boolean) => `
import { collection, defineApp, fields, model, serializer } from 'restfold';
${withMigrations ? "import migrations from './migrations/index.mjs';" : ''}
const Note = model('notes', { id: fields.id(), ${noteFields} });
const names = Object.keys(Note.fields);
const notes = collection('notes', { serializer: serializer(Note, { fields: names, readOnly: ['id'] }), filterFields: names.filter((name) => name !== 'id') });
export default defineApp({ collections: [notes]${withMigrations ? ', migrations' : ''} });
`;

const dialects = ['sqlite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];

describe.each(dialects)('makemigrations, migrate, check on %s', (dialect) => {
  const { folder, app, env, cli, databaseUrl } = cliWorkspace(dialect, 'makemigrations');
  const declare = (noteFields: string, withMigrations = true) => writeFileSync(app, appSource(noteFields, withMigrations));

  it('writes the first migration beside the app, in its language, and migrates it', () => {
    declare("title: fields.string({ maxLength: 100 })", false);
    const made = cli('makemigrations');
    expect(made.status, made.stderr).toBe(0);
    expect(made.stdout).toContain('create table notes');
    expect(made.stdout).toContain('Pass its index to defineApp');
    expect(readdirSync(join(folder, 'migrations')).sort()).toEqual(['0001_initial.mjs', 'index.mjs']);
    expect(readFileSync(join(folder, 'migrations', '0001_initial.mjs'), 'utf8')).toContain("op.createTable('notes', {");

    declare("title: fields.string({ maxLength: 100 })");
    expect(cli('makemigrations', '--check')).toMatchObject({ status: 0, stdout: 'No changes.\n' });
    const migrated = cli('migrate');
    expect(migrated.status, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain('0001_initial');
    expect(cli('check')).toMatchObject({ status: 0, stdout: 'The database matches the declarations.\n' });
  });

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
    expect(cli('migrate').stdout).toContain('0002_add_column_notes_isbn_and_more');

    const server = await startServer({ appArgs: ['--app', app], env: { DATABASE_URL: databaseUrl() } });
    try {
      server.cli(['createuser', '--username', 'writer', '--password', 'writer-pass']);
      const token = server.cli(['token', 'create', '--username', 'writer']).trim();
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const created = await fetch(`${server.url}/api/v1/notes/`, { method: 'POST', headers, body: JSON.stringify({ title: 'Dune', isbn: '978-0441013593' }) });
      expect(created.status).toBe(201);
      const found = await (await fetch(`${server.url}/api/v1/notes/?isbn=978-0441013593`, { headers })).json();
      expect(found.results).toMatchObject([{ title: 'Dune', isbn: '978-0441013593' }]);
    } finally {
      await server.stop();
    }
  });

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
  });

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
  });
});

describe('the library example', () => {
  it('has a migration for every declaration', () => {
    expect(runCli(['makemigrations', '--check', '--app', 'examples/library/app.mjs'], { PATH: process.env.PATH })).toMatchObject({ status: 0, stdout: 'No changes.\n' });
  });
});
