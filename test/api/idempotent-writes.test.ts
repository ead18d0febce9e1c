/**
 * Writes that may run any number of times at once and still mean once, through a record store:
 * `getOrCreate` (a pin made once however many ask at once), `deleteMatching` (unpinning what is
 * gone is no error), and `lockFor`, a named lock for a check for absence and the write after it
 * (the lowest free seat number, chosen by concurrent bookings). On PostgreSQL the requests run at
 * once on parallel connections; on SQLite its write transactions run one at a time, and the
 * answers must be the same.
 */
import { describe, expect, it } from 'vitest';
import {
  collection,
  defineApp,
  fields,
  inTransaction,
  lockFor,
  model,
  recordStore,
  serializer,
  validationFailed,
  type Database,
  type RecordStore,
} from '../../src/framework/index.js';
import { servedWithUser, type Reply } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { statusCounts } from '../support/replies.js';

/** Labels: a unique name, and a unique code; creates refuse a reserved name. */
const Label = model(
  'labels',
  {
    id: fields.id(),
    name: fields.string({ maxLength: 20, unique: true }),
    code: fields.string({ maxLength: 10, unique: true, nullable: true }),
    color: fields.string({ maxLength: 10, nullable: true }),
  },
  {
    creates: (values) => {
      if (values.name === 'reserved') throw validationFailed({ name: ['This name is reserved.'] });
    },
  },
);
const labelSerializer = serializer(Label, { fields: ['id', 'name', 'code', 'color'] });
const labels = (database: Database): RecordStore => recordStore(database, labelSerializer, { name: 'label' });

/** A user's pin on a label: one per user and label. A label with pins cannot be deleted. */
const Pin = model(
  'pins',
  { id: fields.id(), owner: fields.string({ maxLength: 150 }), label_id: fields.foreignKey('labels', { onDelete: 'restrict' }) },
  { uniqueTogether: [['owner', 'label_id']] },
);
const pins = (database: Database): RecordStore => recordStore(database, serializer(Pin, { fields: ['id', 'owner', 'label_id'] }), { name: 'pin' });

/** A booking takes the lowest seat of its show that no booking has: the seat is chosen, not sent. */
const Booking = model(
  'bookings',
  { id: fields.id(), show: fields.string({ maxLength: 20 }), seat: fields.integer() },
  { uniqueTogether: [['show', 'seat']] },
);
const bookingSerializer = serializer(Booking, { fields: ['id', 'show', 'seat'], readOnly: ['seat'] });

const app = withGeneratedMigrations(
  defineApp({
    models: [Pin],
    collections: [
      collection('labels', {
        serializer: labelSerializer,
        actions: {
          pin: {
            detail: true,
            method: 'POST',
            body: false,
            handler: async ({ database, user, record }) => {
              const { created } = await pins(database).getOrCreate({ owner: user!.username, label_id: record!.id });
              return { created };
            },
          },
          unpin: {
            detail: true,
            method: 'DELETE',
            path: 'pin',
            handler: async ({ database, user, record }) => ({ deleted: await pins(database).deleteMatching({ owner: user!.username, label_id: record!.id }) }),
          },
        },
      }),
      collection('bookings', {
        serializer: bookingSerializer,
        hooks: {
          // The lock and the read are in the booking's transaction: the next booking of the show reads once this one is stored.
          inTransaction: true,
          async beforeCreate({ database, values }) {
            await lockFor(database, `bookings.seat ${String(values.show)}`);
            const taken = await recordStore(database, bookingSerializer, { name: 'booking' }).list({ show: values.show }, ['-seat']);
            return { seat: ((taken[0]?.seat as number | undefined) ?? 0) + 1 };
          },
        },
      }),
    ],
  }),
);

const served = servedWithUser(app, 'alice');

const atOnce = (count: number, request: (index: number) => Promise<Reply>): Promise<Reply[]> => Promise.all(Array.from({ length: count }, (_, index) => request(index)));
const pinsOf = (labelId: unknown) => pins(served.api.database).list({ label_id: labelId }, ['id']);

describe('recordStore.getOrCreate', () => {
  it('creates the record the first time, with `set`, and finds it after, `set` unused', async () => {
    const store = labels(served.api.database);
    const first = await store.getOrCreate({ name: 'urgent' }, { color: 'red' });
    expect(first).toEqual({ record: { id: expect.any(Number), name: 'urgent', code: null, color: 'red' }, created: true });
    const again = await store.getOrCreate({ name: 'urgent' }, { color: 'blue' });
    expect(again).toEqual({ record: first.record, created: false });
    expect(await store.list({ name: 'urgent' }, ['id'])).toHaveLength(1);
  });

  it("checks the new record as create's body is, and by the model's create rules", async () => {
    const store = labels(served.api.database);
    await expect(store.getOrCreate({ name: 'x'.repeat(21) })).rejects.toMatchObject({ status: 400, details: { name: [expect.any(String)] } });
    await expect(store.getOrCreate({ name: 'reserved' })).rejects.toMatchObject({ status: 400, details: { name: ['This name is reserved.'] } });
    await expect(store.getOrCreate({ name__startswith: 'u' })).rejects.toThrow(/not by name__startswith/);
    expect(await store.list({ name__in: ['x'.repeat(21), 'reserved'] }, ['id'])).toEqual([]);
  });

  it("answers a clash on another unique field with create's 400, and fails no transaction it runs in", async () => {
    const store = labels(served.api.database);
    await store.create({ name: 'first', code: 'C1' });
    const refusal = await store.create({ name: 'second', code: 'C1' }).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ status: 400, details: { code: [expect.any(String)] } });
    await expect(store.getOrCreate({ name: 'second' }, { code: 'C1' })).rejects.toEqual(refusal);
    // In a transaction the refusal is caught, and the transaction goes on to commit what it writes after it.
    await inTransaction(served.api.database, async (transaction) => {
      await expect(labels(transaction).getOrCreate({ name: 'second' }, { code: 'C1' })).rejects.toMatchObject({ status: 400 });
      await labels(transaction).getOrCreate({ name: 'second' }, { code: 'C2' });
    });
    expect(await store.list({ name: 'second' }, ['id'])).toEqual([expect.objectContaining({ code: 'C2' })]);
  });

  it('10 concurrent pins of one label by one user: all 200, one created, one pin stored', async () => {
    const { id } = await labels(served.api.database).create({ name: 'popular' });
    const replies = await atOnce(10, () => served.api.request('POST', `/api/v1/labels/${id}/pin/`, { token: served.user.token }));
    expect(statusCounts(replies)).toEqual({ 200: 10 });
    expect(replies.filter((reply) => reply.json.created)).toHaveLength(1);
    expect(await pinsOf(id)).toHaveLength(1);
  });
});

describe('recordStore.deleteMatching', () => {
  it('deletes what its conditions select, lookups too, and answers how many', async () => {
    const store = labels(served.api.database);
    for (const name of ['tmp-a', 'tmp-b', 'tmp-c', 'kept']) await store.create({ name });
    expect(await store.deleteMatching({ name__startswith: 'tmp-', name__in: ['tmp-a', 'tmp-b', 'kept'] })).toBe(2);
    expect((await store.list({ name__in: ['tmp-a', 'tmp-b', 'tmp-c', 'kept'] }, ['name'])).map((row) => row.name)).toEqual(['kept', 'tmp-c']);
    expect(await store.deleteMatching({ name: 'tmp-a' })).toBe(0);
  });

  it('refuses no conditions, and a record others still refer to (400, protected), deleting nothing', async () => {
    const store = labels(served.api.database);
    await expect(store.deleteMatching({})).rejects.toThrow(/at least one/);
    const { id } = await store.create({ name: 'held' });
    await pins(served.api.database).create({ owner: 'bob', label_id: id });
    await expect(store.deleteMatching({ id })).rejects.toMatchObject({ status: 400, code: 'protected' });
    expect(await store.list({ id }, ['id'])).toHaveLength(1);
  });

  it('20 pins and unpins of one label by one user at once: all 200, at most one pin stored', async () => {
    const { id } = await labels(served.api.database).create({ name: 'fickle' });
    const replies = await atOnce(20, (i) => served.api.request(i % 2 === 0 ? 'POST' : 'DELETE', `/api/v1/labels/${id}/pin/`, { token: served.user.token }));
    expect(statusCounts(replies)).toEqual({ 200: 20 });
    expect((await pinsOf(id)).length).toBeLessThanOrEqual(1);
  });
});

describe('lockFor', () => {
  it('is refused outside a transaction, and taken in one inTransaction opens', async () => {
    await expect(lockFor(served.api.database, 'anything')).rejects.toThrow(/transaction/);
    await expect(inTransaction(served.api.database, (transaction) => lockFor(transaction, 'anything'))).resolves.toBeUndefined();
  });

  it('makes a check for absence and the write after it safe: 10 concurrent bookings of one show get seats 1 to 10', async () => {
    const replies = await atOnce(10, () => served.api.request('POST', '/api/v1/bookings/', { token: served.user.token, body: { show: 'premiere' } }));
    expect(statusCounts(replies)).toEqual({ 201: 10 });
    expect(replies.map((reply) => reply.json.seat as number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});
