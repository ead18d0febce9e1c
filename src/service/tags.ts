/** The `tags` collection: names articles are filed under (their `tags`, a many-to-many). */
import { collection, fields, hasPermission, isAuthenticated, model, serializer } from '../framework/index.js';

export const Tag = model('tags', {
  id: fields.id(),
  name: fields.string({ maxLength: 50, unique: true }),
});

export const tags = collection('tags', {
  serializer: serializer(Tag, { fields: ['id', 'name'], readOnly: ['id'], search: ['name'] }),
  filterFields: ['name'],
  orderingFields: ['name'],
  // Anyone who writes articles may add a tag for them; renaming or removing one changes every article filed under it.
  permissions: {
    list: [isAuthenticated],
    retrieve: [isAuthenticated],
    create: [isAuthenticated],
    update: [hasPermission('tags.change')],
    partial_update: [hasPermission('tags.change')],
    destroy: [hasPermission('tags.delete')],
  },
});
