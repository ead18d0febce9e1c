/**
 * The model is the schema: migrations generated from declarations make exactly the declared tables
 * (introspected back), and a model's life (a field added, altered, renamed, dropped, a hand-written
 * data step between generated migrations) goes through generate → migrate → the API, on SQLite and
 * PostgreSQL. `check` (here: declaredSchemaDifferences) names the table and column that differ.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appState,
  collection,
  declaredSchemaDifferences,
  defineApp,
  fields,
  migrateApp,
  model,
  operations,
  planMigration,
  serializer,
  type AppDefinition,
  type Field,
  type Migrations,
  type Renames,
} from '../../src/framework/index.js';
import { openStoreDatabase, type StoreDatabase } from '../../src/store/connection/database.js';
import { expectedColumn } from '../../src/store/schema/drift.js';
import { Article } from '../../src/service/articles.js';
import { users } from '../../src/service/users.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { servedRelease } from '../support/served-release.js';

/** `migrations` with the next one generated from `definition`'s declarations; its changes, one line each. */
function generate(definition: AppDefinition, migrations: Migrations, renames: Renames = {}): { migrations: Migrations; changes: readonly string[] } {
  const state = appState(definition);
  const plan = planMigration(state, migrations, renames);
  const name = `${String(Object.keys(migrations).length + 1).padStart(4, '0')}_generated`;
  return { migrations: { ...migrations, [name]: { operations: plan.operations, state } }, changes: plan.changes };
}

let testDatabase: TestDatabase;
let database: StoreDatabase;
/**
 * Each describe its own database, so each app's migrations are the only ones it records; SQLite's in
 * a file, so that a second connection (a server's: `served`) opens the same one.
 */
function onFreshDatabase(): void {
  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    if (testDatabase.url === 'sqlite::memory:') {
      const folder = mkdtempSync(join(tmpdir(), 'restfold-schema-'));
      testDatabase = { url: `sqlite:${join(folder, 'db.sqlite3')}`, drop: async () => rmSync(folder, { recursive: true, force: true }) };
    }
    database = openStoreDatabase(testDatabase.url);
  });
  afterAll(async () => {
    await database.close();
    await testDatabase.drop();
  });
}

/** The live columns of `table` by name. */
async function liveColumns(table: string) {
  const columns = (await database.capabilities.liveColumns(database.db)).filter((column) => column.table === table);
  return Object.fromEntries(columns.map((column) => [column.column, column]));
}

/** Requests to `definition` served by a server of its own, started after the migration. */
const served = (definition: AppDefinition) => servedRelease(testDatabase.url, database, definition);

const Shelf = model('shelves', { id: fields.id(), name: fields.string({ maxLength: 40, unique: true }) });
const everyKind: Record<string, Field> = {
  id: fields.id(),
  count64: fields.integer(),
  count32: fields.integer({ bits: 32, default: 7 }),
  maybe_count: fields.integer({ nullable: true }),
  label: fields.string({ maxLength: 80 }),
  code: fields.string({ maxLength: 12, unique: true }),
  note: fields.string({ maxLength: 30, nullable: true, default: "it's" }),
  unbounded: fields.string(),
  body: fields.text({ blank: true, default: '' }),
  email: fields.email({ blank: true, default: '' }),
  flag: fields.boolean({ default: true }),
  maybe_flag: fields.boolean({ nullable: true }),
  at: fields.timestamp({ default: () => new Date() }),
  maybe_at: fields.timestamp({ nullable: true }),
  shelf_id: fields.foreignKey('shelves'),
  backup_shelf_id: fields.foreignKey('shelves', { nullable: true, onDelete: 'set null' }),
  kept_shelf_id: fields.foreignKey('shelves', { nullable: true, onDelete: 'restrict' }),
  secret: fields.password(),
};
const Everything = model('everything', everyKind, {
  indexes: [{ columns: ['label', 'at desc', 'id'] }, { name: 'everything_label_folded_key', columns: ['label'], unique: true, ignoreCase: true }],
  uniqueTogether: [['count64', 'at']],
});
const everything = collection('everything', {
  serializer: serializer(Everything, { fields: Object.keys(everyKind), search: ['label'] }),
  filterFields: ['flag'],
  orderingFields: ['at'],
});

describe('every field kind and option: generated, applied, introspected', () => {
  onFreshDatabase();
  it('makes each column exactly as declared, and every declared index', async () => {
    // Article: the table the users' reverse relation (`articles`) reads, which the app must declare.
    const definition = defineApp({ collections: [users, everything], models: [Shelf, Article] });
    const { migrations } = generate(definition, {});
    await migrateApp(database, { ...definition, migrations });

    const live = await liveColumns('everything');
    const { types } = database.capabilities;
    expect(Object.keys(live).sort()).toEqual(Object.keys(everyKind).sort());
    for (const [name, field] of Object.entries(everyKind)) {
      const expected = expectedColumn(types, 'everything', name, field.column);
      // SQLite reports a key column as nullable (its keys allow NULL); the key is what matters there.
      expect({ ...live[name], nullable: name === 'id' ? false : live[name]!.nullable }, name).toEqual(expected);
    }
    // Spelled out, the same on both databases:
    expect(live.label).toMatchObject({ type: 'varchar(80)', nullable: false, unique: false });
    expect(live.unbounded).toMatchObject({ type: 'text' });
    expect(live.note).toMatchObject({ nullable: true, default: "it's" });
    expect(live.code).toMatchObject({ unique: true });
    expect(live.backup_shelf_id).toMatchObject({ nullable: true, references: { table: 'shelves', onDelete: 'set null' } });
    expect(live.kept_shelf_id).toMatchObject({ references: { table: 'shelves', onDelete: 'restrict' } });
    expect(live.secret).toMatchObject({ type: 'varchar(256)', nullable: false });

    const indexes = (await database.capabilities.liveIndexes(database.db)).filter((index) => index.table === 'everything').map((index) => index.name);
    const trigram = database.capabilities.types.supportsTrigramIndexes ? ['everything_label_trgm_idx'] : [];
    expect(indexes.sort()).toEqual(
      [
        'everything_at_idx',
        'everything_backup_shelf_id_idx',
        'everything_count64_at_key',
        'everything_flag_idx',
        'everything_kept_shelf_id_idx',
        'everything_label_at_id_idx',
        'everything_label_folded_key',
        'everything_shelf_id_idx',
        ...trigram,
      ].sort(),
    );
    expect(await declaredSchemaDifferences(database, { ...definition, migrations })).toEqual([]);

    // The ignore-case unique index holds, through the API.
    const api = await served({ ...definition, migrations });
    try {
      const shelf = await database.db.insertInto('shelves').values({ name: 'top' }).returning('id').executeTakeFirstOrThrow();
      const record = { count64: 1, label: 'Dune', code: 'd1', unbounded: 'x', shelf_id: Number(shelf.id), secret: 'pw-1234567' };
      expect((await api.request('POST', '/api/v1/everything/', record)).status).toBe(201);
      const clash = await api.request('POST', '/api/v1/everything/', { ...record, count64: 2, code: 'd2', label: 'DUNE' });
      expect(clash.status).toBe(400);
    } finally {
      await api.close();
    }
  });
});

describe("a model's life: generate, migrate, serve", () => {
  onFreshDatabase();
  const book = (bookFields: Record<string, Field>, options: { filterFields?: string[] } = {}) =>
    defineApp({
      collections: [collection('books', { serializer: serializer(model('books', { id: fields.id(), ...bookFields }), { fields: ['id', ...Object.keys(bookFields)] }), ...options })],
    });
  let migrations: Migrations = {};

  /** Generates the next migration for `definition`, migrates, and returns the changes it made. */
  async function evolve(definition: AppDefinition, renames: Renames = {}): Promise<readonly string[]> {
    const next = generate(definition, migrations, renames);
    migrations = next.migrations;
    await migrateApp(database, { ...definition, migrations });
    expect(await declaredSchemaDifferences(database, { ...definition, migrations })).toEqual([]);
    return next.changes;
  }

  async function titles(definition: AppDefinition, field: string) {
    const api = await served({ ...definition, migrations });
    try {
      const reply = await api.request('GET', '/api/v1/books/');
      return reply.json.results.map((record: Record<string, unknown>) => record[field]);
    } finally {
      await api.close();
    }
  }

  it('creates the table, and a record goes in through the API', async () => {
    const v1 = book({ title: fields.string({ maxLength: 100 }) });
    expect(await evolve(v1)).toEqual(['create table books']);
    const api = await served({ ...v1, migrations });
    try {
      expect((await api.request('POST', '/api/v1/books/', { title: 'Dune' })).status).toBe(201);
    } finally {
      await api.close();
    }
  });

  it('adds a field: check names the missing column until a migration is generated, then the field works', async () => {
    const v2 = book({ title: fields.string({ maxLength: 100 }), isbn: fields.string({ maxLength: 20, nullable: true }), pages: fields.integer({ default: 0 }) }, { filterFields: ['isbn'] });
    expect(await declaredSchemaDifferences(database, { ...v2, migrations })).toEqual([
      'column "books.isbn" is missing',
      'column "books.pages" is missing',
      'index "books_isbn_idx" on "books" is missing',
    ]);
    expect(planMigration(appState(v2), migrations).changes).toEqual(['add column books.isbn', 'add column books.pages', 'create index books_isbn_idx on books']);
    await evolve(v2);
    const api = await served({ ...v2, migrations });
    try {
      const created = await api.request('POST', '/api/v1/books/', { title: 'Emma', isbn: '978-0141439587' });
      expect(created).toMatchObject({ status: 201, json: { isbn: '978-0141439587', pages: 0 } });
      const found = await api.request('GET', '/api/v1/books/?isbn=978-0141439587');
      expect(found.json.results.map((record: { title: string }) => record.title)).toEqual(['Emma']);
      // The row that was there before the field came got its default.
      expect((await api.request('GET', '/api/v1/books/')).json.results[0]).toMatchObject({ title: 'Dune', isbn: null, pages: 0 });
    } finally {
      await api.close();
    }
  });

  it('alters fields (length, uniqueness, type, nullability) and keeps the rows', async () => {
    const v3 = book({ title: fields.string({ maxLength: 300 }), isbn: fields.string({ maxLength: 20, nullable: true, unique: true }), pages: fields.integer({ bits: 32, nullable: true, default: 0 }) }, { filterFields: ['isbn'] });
    // A unique column is indexed by its constraint: the filter's own index goes.
    expect(await evolve(v3)).toEqual(['drop index books_isbn_idx on books', 'alter column books.title', 'alter column books.isbn', 'alter column books.pages']);
    const live = await liveColumns('books');
    expect(live.title).toMatchObject({ type: 'varchar(300)' });
    expect(live.isbn).toMatchObject({ unique: true });
    expect(live.pages).toMatchObject({ type: database.capabilities.types.columnTypes.integer, nullable: true });
    expect(await titles(v3, 'title')).toEqual(['Dune', 'Emma']);
    const api = await served({ ...v3, migrations });
    try {
      expect(await api.request('POST', '/api/v1/books/', { title: 'Copy', isbn: '978-0141439587' })).toMatchObject({ status: 400, json: { details: { isbn: [expect.any(String)] } } });
    } finally {
      await api.close();
    }
  });

  it('drops a field, with its unique constraint', async () => {
    const v4 = book({ title: fields.string({ maxLength: 300 }), pages: fields.integer({ bits: 32, nullable: true, default: 0 }) });
    expect(await evolve(v4)).toEqual(['drop column books.isbn']);
    expect(Object.keys(await liveColumns('books')).sort()).toEqual(['id', 'pages', 'title']);
    expect(await titles(v4, 'title')).toEqual(['Dune', 'Emma']);
  });

  it('renames a field only when told, keeping its data', async () => {
    const v5 = book({ name: fields.string({ maxLength: 300 }), pages: fields.integer({ bits: 32, nullable: true, default: 0 }) });
    const unsaid = planMigration(appState(v5), migrations);
    expect(unsaid.changes).toEqual(['add column books.name', 'drop column books.title']);
    expect(unsaid.renameCandidates).toEqual([{ table: 'books', from: 'title', to: 'name' }]);
    expect(await evolve(v5, { books: { title: 'name' } })).toEqual(['rename column books.title to name']);
    expect(await titles(v5, 'name')).toEqual(['Dune', 'Emma']);
  });

  it('runs a hand-written data step between generated migrations, in order', async () => {
    const v6 = book({ name: fields.string({ maxLength: 300 }), pages: fields.integer({ bits: 32, nullable: true, default: 0 }) });
    await database.db.insertInto('books').values({ name: 'Blank', pages: null }).execute();
    const v7 = book({ name: fields.string({ maxLength: 300 }), pages: fields.integer({ bits: 32, default: 0 }) });
    // Pages become NOT NULL, which the row above would refuse unless the step fills it first: makemigrations says so.
    expect(planMigration(appState(v7), migrations).warnings).toEqual([
      'books.pages becomes NOT NULL: migrating fails while a row holds NULL there. Fill those rows in a step (op.run) before this migration.',
    ]);
    const fill = { operations: [operations.run(async (db) => void (await db.updateTable('books').set({ pages: 0 }).where('pages', 'is', null).execute()))] };
    migrations = { ...migrations, [`${String(Object.keys(migrations).length + 1).padStart(4, '0')}_fill_pages`]: fill };
    expect(await evolve(v7)).toEqual(['alter column books.pages']);
    expect(await titles(v6, 'pages')).toEqual([0, 0, 0]);
    expect((await liveColumns('books')).pages).toMatchObject({ nullable: false });
  });
});
