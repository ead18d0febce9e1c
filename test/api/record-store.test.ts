/**
 * A record store's list (the posts list is one): each shape of question is
 * compiled once and reused, so asking the same shape with other values, with
 * NULLs, or in another order must still answer exactly that question.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineApp, fields, migrateApp, model, openDatabase, recordStore, serializer, type Database, type RecordStore } from '../../src/framework/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Note = model('notes', {
  id: fields.id(),
  label: fields.string({ maxLength: 50 }),
  shelf: fields.string({ maxLength: 50, nullable: true }),
  rank: fields.integer(),
});

const definition = withGeneratedMigrations(defineApp({ collections: [], models: [Note] }));

const NOTES = [
  { label: 'a', shelf: 'top', rank: 2 },
  { label: 'b', shelf: 'top', rank: 1 },
  { label: 'c', shelf: 'low', rank: 3 },
  { label: 'd', shelf: null, rank: 5 },
  { label: 'e', shelf: null, rank: 4 },
  { label: 'a', shelf: null, rank: 6 },
];

let testDatabase: TestDatabase;
let database: Database;
let notes: RecordStore;

const labels = (rows: readonly Record<string, unknown>[]): unknown[] => rows.map((row) => `${String(row.label)}${String(row.rank)}`);

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  database = openDatabase(testDatabase.url);
  await migrateApp(database, definition);
  notes = recordStore(database, serializer(Note, { fields: ['id', 'label', 'shelf', 'rank'] }), { name: 'note' });
  for (const note of NOTES) await notes.create(note);
});

afterAll(async () => {
  await database.close();
  await testDatabase.drop();
});

describe('recordStore.list', () => {
  it('answers the same shape with other values by those values', async () => {
    expect(labels(await notes.list({ shelf: 'top' }, ['rank']))).toEqual(['b1', 'a2']);
    expect(labels(await notes.list({ shelf: 'low' }, ['rank']))).toEqual(['c3']);
    expect(labels(await notes.list({ shelf: 'top' }, ['rank']))).toEqual(['b1', 'a2']);
  });

  it('matches NULL with IS NULL, alone and beside bound values in either order', async () => {
    expect(labels(await notes.list({ shelf: null }, ['-rank']))).toEqual(['a6', 'd5', 'e4']);
    expect(labels(await notes.list({ shelf: null, label: 'a' }, []))).toEqual(['a6']);
    expect(labels(await notes.list({ label: 'a', shelf: null }, []))).toEqual(['a6']);
    expect(labels(await notes.list({ label: 'a', shelf: 'top' }, []))).toEqual(['a2']);
    expect(labels(await notes.list({ rank: 4, shelf: null, label: 'e' }, []))).toEqual(['e4']);
  });

  it('binds each value to its own field whatever order the fields come in', async () => {
    expect(labels(await notes.list({ label: 'a', rank: 2 }, []))).toEqual(['a2']);
    expect(labels(await notes.list({ rank: 2, label: 'a' }, []))).toEqual(['a2']);
    expect(labels(await notes.list({ rank: 6, label: 'a' }, []))).toEqual(['a6']);
  });

  it('keeps each ordering its own', async () => {
    expect(labels(await notes.list({}, ['label', '-rank']))).toEqual(['a6', 'a2', 'b1', 'c3', 'd5', 'e4']);
    expect(labels(await notes.list({}, ['label', 'rank']))).toEqual(['a2', 'a6', 'b1', 'c3', 'd5', 'e4']);
    expect(labels(await notes.list({}, ['-rank']))).toEqual(['a6', 'd5', 'e4', 'c3', 'a2', 'b1']);
  });

  it('renders records through the serializer, in its field order', async () => {
    const [note] = await notes.list({ label: 'c' }, []);
    expect(Object.keys(note!)).toEqual(['id', 'label', 'shelf', 'rank']);
    expect(note).toMatchObject({ label: 'c', shelf: 'low', rank: 3 });
  });
});
