/**
 * The app bench/features.mjs creates records in: five collections of one shape, each with one
 * feature beside the plain one (a file field, hooks in the transaction, live changes, a scope), so
 * each feature's cost on a create is the ratio of its rate to the plain one's. Its migration was
 * made by `restfold makemigrations`.
 */
import { collection, defineApp, fields, isAuthenticated, model, serializer } from 'restfold';

const columns = () => ({
  id: fields.id(),
  title: fields.string({ maxLength: 200 }),
  body: fields.text({ blank: true, default: '' }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const shown = ['id', 'title', 'body', 'owner_id'];
const permissions = [isAuthenticated];

const Plain = model('plain_items', columns());
const Filed = model('filed_items', { ...columns(), attachment: fields.file({ nullable: true }) });
const Hooked = model('hooked_items', columns());
const Live = model('live_items', columns());
const Scoped = model('scoped_items', columns());

export default defineApp({
  collections: [
    collection('plain', { serializer: serializer(Plain, { fields: shown }), permissions }),
    collection('filed', { serializer: serializer(Filed, { fields: [...shown, 'attachment'] }), permissions }),
    collection('hooked', {
      serializer: serializer(Hooked, { fields: shown }),
      permissions,
      hooks: { inTransaction: true, beforeCreate: ({ values }) => ({ title: String(values.title).trim() }) },
    }),
    collection('live', { serializer: serializer(Live, { fields: shown }), permissions, live: true }),
    collection('scoped', { serializer: serializer(Scoped, { fields: shown }), permissions, scope: ({ user }) => ({ owner_id: user?.id ?? null }) }),
  ],
});
