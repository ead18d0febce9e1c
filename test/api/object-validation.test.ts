/**
 * Object validation declared on the collection as well as on the serializer: both see the record as
 * it would be stored, and what both find is reported together. An update validates the record it
 * writes: when another writer changes it between the request's read and its write (PostgreSQL's
 * conditional UPDATE then matches nothing and the record is read again under a lock; SQLite reads
 * it again in the write's transaction), the rules are checked again on the record as it is then.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { interloper } from '../support/interloper.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { testDialect } from '../support/database.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const Span = model('spans', { id: fields.id(), title: fields.string({ maxLength: 100 }), starts: fields.integer(), ends: fields.integer() });

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('spans', {
        serializer: serializer(Span, {
          fields: ['id', 'title', 'starts', 'ends'],
          validate: (values) => {
            if ((values.starts as number) > (values.ends as number)) return { ends: [`Must not be before ${String(values.starts)}.`] };
          },
        }),
        validate: (values, { existing, user }) => {
          if (values.title === 'reserved') return { title: [`Reserved${existing ? ` (was ${String(existing.title)})` : ''}, ${user?.username ?? ''}.`] };
          if ((values.ends as number) - (values.starts as number) > 100) return { ends: ['At most 100 long.'] };
        },
      }),
    ],
  }),
);

const sent: string[] = [];
/** Another writer, changing the record right after the request's read of it. */
const other = interloper('spans');

let api: TestApi;
let alice: TestUser;

beforeAll(async () => {
  api = await startApi({}, app, { appDatabase: (database) => other.database(recording(sent)(database)) });
  alice = await api.user('alice');
});
afterAll(() => api.close());

const create = (body: unknown) => api.request('POST', '/api/v1/spans/', { token: alice.token, body });
const patch = (id: number, body: unknown) => api.request('PATCH', `/api/v1/spans/${id}/`, { token: alice.token, body });

describe('validate on the collection', () => {
  it('checks a create, beside the serializer’s, both findings reported at once', async () => {
    const reply = await create({ title: 'reserved', starts: 5, ends: 2 });
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ code: 'validation_failed', details: { ends: ['Must not be before 5.'], title: ['Reserved, alice.'] } });
    const both = await create({ title: 'long', starts: 0, ends: 500 });
    expect(both.json.details).toEqual({ ends: ['At most 100 long.'] });
    expect((await create({ title: 'fine', starts: 0, ends: 100 })).status).toBe(201);
  });

  it('sees the stored record under a PATCH', async () => {
    const { id } = (await create({ title: 'kept', starts: 10, ends: 20 })).json;
    const renamed = await patch(id, { title: 'reserved' });
    expect(renamed.status).toBe(400);
    expect(renamed.json.details).toEqual({ title: ['Reserved (was kept), alice.'] });
    expect((await patch(id, { ends: 200 })).json.details).toEqual({ ends: ['At most 100 long.'] });
    expect((await patch(id, { ends: 110 })).json).toMatchObject({ id, title: 'kept', starts: 10, ends: 110 });
  });
});

describe('an update whose record changes between its read and its write', () => {
  it('validates the record it would write, and stores nothing when that fails', async () => {
    const { id } = (await create({ title: 'moving', starts: 3, ends: 9 })).json;
    // Valid over the record as first read (3 … 5); not once another writer has moved the start to 7.
    other.next(() => api.database.db.updateTable('spans').set({ starts: 7 }).where('id', '=', id).execute());
    sent.length = 0;
    const reply = await patch(id, { ends: 5 });
    expect(other.waiting).toBe(false);
    expect(reply.status).toBe(400);
    expect(reply.json.details).toEqual({ ends: ['Must not be before 7.'] });
    if (testDialect === 'postgres') {
      // The conditional UPDATE was tried and matched nothing; the record was then read under a lock.
      expect(sent.some((text) => /^update "spans".*"xmin"::text = /is.test(text))).toBe(true);
      expect(sent.some((text) => /from "spans".*for update/is.test(text))).toBe(true);
    }
    expect((await api.request('GET', `/api/v1/spans/${id}/`, { token: alice.token })).json).toMatchObject({ starts: 7, ends: 9 });
  });

  it('writes when the record as it is then passes, and the other writer’s change stays', async () => {
    const { id } = (await create({ title: 'drifting', starts: 3, ends: 9 })).json;
    other.next(() => api.database.db.updateTable('spans').set({ title: 'theirs' }).where('id', '=', id).execute());
    const reply = await patch(id, { ends: 5 });
    expect(other.waiting).toBe(false);
    expect(reply.json).toMatchObject({ id, title: 'theirs', starts: 3, ends: 5 });
  });
});
