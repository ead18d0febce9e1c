/**
 * Hooks in the transaction that send nothing begin nothing (store/connection/deferred-begin.ts):
 * a before-hook that waits on something else (a call to another service) holds no transaction, so
 * other writes go on meanwhile, on SQLite's one writer too; a before-hook that reads and writes
 * through the transaction still has its writes commit or roll back with the record.
 */
import { describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, recordStore, serializer, validationFailed } from '../../src/framework/index.js';
import { servedWithUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Note = model('notes', { id: fields.id(), text: fields.string({ maxLength: 100 }) });
const Entry = model('entries', { id: fields.id(), line: fields.string({ maxLength: 100, unique: true }) });
const noteSerializer = serializer(Note, { fields: ['id', 'text'] });
const entrySerializer = serializer(Entry, { fields: ['id', 'line'] });

/** Opened by the test: the slow hook waits on it, as on a call to another service. */
let release: () => void = () => undefined;
let entered: () => void = () => undefined;

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('slow-notes', {
        serializer: noteSerializer,
        hooks: {
          inTransaction: true,
          async beforeCreate({ values }) {
            entered();
            await new Promise<void>((resolve) => (release = resolve));
            return { text: String(values.text).trim() };
          },
        },
      }),
      collection('logged-notes', {
        serializer: noteSerializer,
        hooks: {
          inTransaction: true,
          // Writes an entry, then refuses a note whose text says so: the entry goes with the refusal.
          async beforeCreate({ values, database }) {
            await recordStore(database, entrySerializer, { name: 'entry' }).create({ line: `note ${String(values.text)}` });
            if (values.text === 'refuse') throw validationFailed({ text: ['Refused after the entry was written.'] });
          },
        },
      }),
      collection('notes', { serializer: noteSerializer }),
      collection('entries', { serializer: entrySerializer }),
    ],
  }),
);

const served = servedWithUser(app, 'alice');
const post = (path: string, body: unknown) => served.api.request('POST', path, { token: served.user.token, body });
const entries = async () => (await served.api.request('GET', '/api/v1/entries/', { token: served.user.token })).json.results.map((entry: { line: string }) => entry.line);

describe('hooks in the transaction', () => {
  it('hold no transaction while a before-hook that sends nothing waits: another write is answered meanwhile', async () => {
    const inHook = new Promise<void>((resolve) => (entered = resolve));
    const slow = post('/api/v1/slow-notes/', { text: '  waited  ' });
    await inHook;
    const other = await post('/api/v1/notes/', { text: 'meanwhile' });
    expect(other.status).toBe(201);
    release();
    const reply = await slow;
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ text: 'waited' });
  });

  it('commit what a before-hook wrote with the record, and roll it back with a refusal', async () => {
    expect((await post('/api/v1/logged-notes/', { text: 'kept' })).status).toBe(201);
    const refused = await post('/api/v1/logged-notes/', { text: 'refuse' });
    expect(refused.status).toBe(400);
    expect(refused.json.details).toEqual({ text: ['Refused after the entry was written.'] });
    expect(await entries()).toEqual(['note kept']);
  });
});
