/** The `users` collection: the accounts themselves, over the framework's User model. */
import { User, anyOf, collection, hasPermission, isAuthenticated, isOwner, serializer } from '../framework/index.js';

const userSerializer = serializer(User, {
  fields: ['id', 'username', 'email', 'is_active', 'date_joined', 'password'],
  readOnly: ['id', 'date_joined'],
  hidden: ['password'],
  search: ['username', 'email'],
});

/** What other records show of a user. */
export const userSummarySerializer = serializer(User, { name: 'UserSummary', fields: ['id', 'username'] });

const changeOwnOrAny = [anyOf(hasPermission('users.change'), isOwner('id'))];

export const users = collection('users', {
  serializer: userSerializer,
  filterFields: ['id', 'username', 'email', 'is_active', 'date_joined'],
  orderingFields: ['id', 'username', 'email', 'date_joined'],
  // SPEC: a string filter value longer than 200 characters is 400 (an app's filters take any value the field holds).
  maxFilterLength: 200,
  countModes: ['estimated', 'none'],
  // Active users by date joined, ties by id (as articles_author_id_created_at_idx: docs/performance.md).
  indexes: [{ name: 'users_is_active_date_joined_idx', columns: ['is_active', 'date_joined desc', 'id'] }],
  permissions: {
    list: [isAuthenticated],
    retrieve: [isAuthenticated],
    create: [hasPermission('users.add')],
    update: changeOwnOrAny,
    partial_update: changeOwnOrAny,
    destroy: [hasPermission('users.delete')],
  },
});
