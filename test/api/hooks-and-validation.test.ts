/**
 * Lifecycle hooks and object validation: a before-create hook sets the owner, a before-update
 * hook derives a column, a before-delete hook refuses; after-hooks run in the write's
 * transaction (a throw rolls the write back) and may write more in it; the after-commit hook sees
 * each committed write. `validate` sees the whole record (the stored one under a PATCH).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, permissionDenied, recordStore, serializer, type CommitEvent } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Event = model('events', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  starts: fields.integer(),
  ends: fields.integer(),
  slug: fields.string({ maxLength: 100, default: () => '' }),
  owner_id: fields.foreignKey('users'),
});
const Log = model('event_log', { id: fields.id(), line: fields.string({ maxLength: 200 }) });
const logSerializer = serializer(Log, { fields: ['id', 'line'] });

const committed: CommitEvent[] = [];
let failAfterUpdate = false;

const eventSerializer = serializer(Event, {
  fields: ['id', 'title', 'starts', 'ends', 'slug', 'owner_id'],
  readOnly: ['slug', 'owner_id'],
  validate: (values, { existing, user }) => {
    if ((values.starts as number) > (values.ends as number)) return { ends: [`Must not be before ${String(values.starts)}.`] };
    if (values.title === 'forbidden' && user) return { non_field_errors: [`Not a title for ${user.username}${existing ? ' to keep' : ''}.`] };
  },
});

const app = withGeneratedMigrations(defineApp({
  collections: [
    collection('events', {
      serializer: eventSerializer,
      bulkCreate: { max: 5 },
      hooks: {
        beforeCreate: ({ user, values }) => ({ owner_id: user!.id, slug: String(values.title).toLowerCase() }),
        beforeUpdate: ({ values, existing }) => (values.title ? { slug: String(values.title).toLowerCase() } : { slug: existing.slug }),
        beforeDelete: ({ existing }) => {
          if (existing.title === 'Keep') throw permissionDenied('This event is kept.');
        },
        afterCreate: async ({ record, database }) => {
          await recordStore(database, logSerializer, { name: 'line' }).create({ line: `created ${String(record.title)}` });
          if (record.title === 'Doomed') throw new Error('the after-create hook failed');
        },
        afterUpdate: async ({ record }) => {
          if (failAfterUpdate) throw new Error(`the after-update hook failed on ${String(record.title)}`);
        },
        afterDelete: async ({ existing, database }) => {
          await recordStore(database, logSerializer, { name: 'line' }).create({ line: `deleted ${String(existing.title)}` });
        },
        afterCommit: (event) => {
          committed.push(event);
          throw new Error('a failed side effect does not undo the write');
        },
      },
    }),
    collection('event-log', { serializer: logSerializer }),
  ],
}));

let api: TestApi;
let alice: TestUser;

beforeAll(async () => {
  api = await startApi({}, app);
  alice = await api.user('alice');
});
afterAll(() => api.close());
beforeEach(() => {
  committed.length = 0;
  failAfterUpdate = false;
});

const create = (body: unknown) => api.request('POST', '/api/v1/events/', { token: alice.token, body });
const log = async () => (await api.request('GET', '/api/v1/event-log/?page_size=100', { token: alice.token })).json.results.map((row: { line: string }) => row.line);

describe('lifecycle hooks', () => {
  it('sets the owner and a derived column before a create, and logs it in the same transaction', async () => {
    const reply = await create({ title: 'Launch', starts: 1, ends: 2 });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ title: 'Launch', owner_id: alice.id, slug: 'launch' });
    expect(await log()).toContain('created Launch');
    expect(committed).toMatchObject([{ action: 'create', record: { id: reply.json.id, title: 'Launch' }, user: { id: alice.id } }]);
  });

  it('rolls the create back, with what its after-hook wrote, when that hook throws', async () => {
    const reply = await create({ title: 'Doomed', starts: 1, ends: 2 });
    expect(reply.status).toBe(500);
    const listed = await api.request('GET', '/api/v1/events/?page_size=100', { token: alice.token });
    expect(listed.json.results.map((event: { title: string }) => event.title)).not.toContain('Doomed');
    expect(await log()).not.toContain('created Doomed');
    expect(committed).toEqual([]);
  });

  it('rolls an update back when the after-update hook throws', async () => {
    const { id } = (await create({ title: 'Before', starts: 1, ends: 2 })).json;
    failAfterUpdate = true;
    const failed = await api.request('PATCH', `/api/v1/events/${id}/`, { token: alice.token, body: { title: 'After' } });
    expect(failed.status).toBe(500);
    const stored = await api.request('GET', `/api/v1/events/${id}/`, { token: alice.token });
    expect(stored.json).toMatchObject({ title: 'Before', slug: 'before' });
    failAfterUpdate = false;
    const changed = await api.request('PATCH', `/api/v1/events/${id}/`, { token: alice.token, body: { title: 'After' } });
    expect(changed.json).toMatchObject({ title: 'After', slug: 'after' });
    expect(committed.map((event) => event.action)).toEqual(['create', 'update']);
  });

  it('lets a before-delete hook refuse, and logs a delete from its after-hook', async () => {
    const kept = (await create({ title: 'Keep', starts: 1, ends: 2 })).json.id;
    const refused = await api.request('DELETE', `/api/v1/events/${kept}/`, { token: alice.token });
    expect(refused).toMatchObject({ status: 403, json: { code: 'permission_denied', error: 'This event is kept.' } });
    const gone = (await create({ title: 'Gone', starts: 1, ends: 2 })).json.id;
    expect((await api.request('DELETE', `/api/v1/events/${gone}/`, { token: alice.token })).status).toBe(204);
    expect(await log()).toContain('deleted Gone');
    expect(committed.at(-1)).toMatchObject({ action: 'delete', record: { id: gone, title: 'Gone' } });
  });

  it('runs the hooks for each record of a bulk create', async () => {
    const reply = await create([{ title: 'One', starts: 1, ends: 1 }, { title: 'Two', starts: 1, ends: 1 }]);
    expect(reply.json.map((event: { slug: string }) => event.slug)).toEqual(['one', 'two']);
    expect(await log()).toEqual(expect.arrayContaining(['created One', 'created Two']));
  });
});

describe('object validation', () => {
  it('checks the record as a whole on create, as field errors are reported', async () => {
    const reply = await create({ title: 'Backwards', starts: 5, ends: 2 });
    expect(reply.status).toBe(400);
    expect(reply.json.details).toEqual({ ends: ['Must not be before 5.'] });
    const whole = await create({ title: 'forbidden', starts: 1, ends: 2 });
    expect(whole.json.details).toEqual({ non_field_errors: ['Not a title for alice.'] });
  });

  it('sees the stored values under a PATCH', async () => {
    const { id } = (await create({ title: 'Span', starts: 3, ends: 9 })).json;
    const reply = await api.request('PATCH', `/api/v1/events/${id}/`, { token: alice.token, body: { ends: 2 } });
    expect(reply.status).toBe(400);
    expect(reply.json.details).toEqual({ ends: ['Must not be before 3.'] });
    const renamed = await api.request('PATCH', `/api/v1/events/${id}/`, { token: alice.token, body: { title: 'forbidden' } });
    expect(renamed.json.details).toEqual({ non_field_errors: ['Not a title for alice to keep.'] });
    expect((await api.request('PATCH', `/api/v1/events/${id}/`, { token: alice.token, body: { ends: 3 } })).json.ends).toBe(3);
  });

  it('reports each record of a bulk create under its index', async () => {
    const reply = await create([{ title: 'Fine', starts: 1, ends: 2 }, { title: 'Backwards', starts: 5, ends: 2 }]);
    expect(reply.json.details).toEqual({ '1.ends': ['Must not be before 5.'] });
  });
});
