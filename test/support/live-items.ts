/**
 * An app for the live changes tests: items private to their owner (the scope), filtered by status,
 * with a hook that writes a second item through recordStore in the write's transaction ("twin"),
 * one that fails after a create or an update ("boom"), and an action that hands an item to another user
 * through recordStore (out of its owner's scope, into the other's); and notes nested under items.
 */
import { ApiError, collection, defineApp, fields, model, recordStore, serializer, type AppDefinition } from '../../src/framework/index.js';
import { withGeneratedMigrations } from './migrations.js';

export const Item = model('live_items', {
  id: fields.id(),
  text: fields.string({ maxLength: 100 }),
  status: fields.string({ maxLength: 20, default: 'draft' }),
  body: fields.text({ blank: true, default: '' }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});

const itemSerializer = serializer(Item, { fields: ['id', 'text', 'status', 'body', 'owner_id'], readOnly: ['owner_id'] });
const store = (database: Parameters<typeof recordStore>[0]) => recordStore(database, itemSerializer, { name: 'item' });

export const items = collection('items', {
  serializer: itemSerializer,
  filterFields: ['status'],
  bulkCreate: { max: 10 },
  bulkDelete: 'filtered',
  scope: ({ user }) => ({ owner_id: user?.id ?? null }),
  live: { track: 100 },
  hooks: {
    inTransaction: true,
    async afterCreate({ record, database }) {
      if (record.text === 'twin') await store(database).create({ text: 'twin of', status: record.status }, { owner_id: record.owner_id });
      if (record.text === 'boom') throw new ApiError(409, 'validation_failed', 'The hook refused it after the write.');
    },
    afterUpdate({ record }) {
      if (record.text === 'boom') throw new ApiError(409, 'validation_failed', 'The hook refused it after the write.');
    },
  },
  actions: {
    give: {
      detail: true,
      method: 'POST',
      body: { to: fields.integer() },
      handler: async ({ record, body, database }) => store(database).update(record!.id as number, () => ({}), { owner_id: (body as { to: number }).to }),
    },
  },
});

export const Note = model('live_notes', {
  id: fields.id(),
  text: fields.string({ maxLength: 100 }),
  item_id: fields.foreignKey('live_items'),
});

/** Notes on an item, streamed under it (`/items/{parent}/notes/events/`), within the item's scope. */
export const notes = collection('notes', {
  serializer: serializer(Note, { fields: ['id', 'text', 'item_id'], readOnly: ['item_id'] }),
  parent: { collection: items, field: 'item_id' },
  live: true,
});

export const liveItemsApp: AppDefinition = withGeneratedMigrations(defineApp({ collections: [items, notes] }));
