/**
 * The `tags` collection: unique names, an addition beside the contract's users and articles that links
 * to neither (no record of theirs changes: docs/contract.md, the example service's collections).
 */
import { collection, fields, hasPermission, isAuthenticated, model, serializer } from '../framework/index.js';

const Tag = model('tags', {
  id: fields.id(),
  name: fields.string({ maxLength: 50, unique: true }),
});

export const tags = collection('tags', {
  serializer: serializer(Tag, { fields: ['id', 'name'], readOnly: ['id'], search: ['name'] }),
  filterFields: ['name'],
  orderingFields: ['name'],
  // SPEC: a string filter value longer than 200 characters is 400 (an app's filters take any value the field holds).
  maxFilterLength: 200,
  // Any signed-in user may add a tag; renaming or removing one, which others may use, takes a permission.
  permissions: {
    list: [isAuthenticated],
    retrieve: [isAuthenticated],
    create: [isAuthenticated],
    update: [hasPermission('tags.change')],
    partial_update: [hasPermission('tags.change')],
    destroy: [hasPermission('tags.delete')],
  },
});
