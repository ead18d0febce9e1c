/**
 * The groups over the API, as collections of the framework's own (mounted under `/auth/` by the
 * router that serves the authentication endpoints), so they have every collection's pagination,
 * filters, errors, ETags and OpenAPI entries: `groups` (a group shows its permission names and its
 * members' ids), and under each group its `permissions` (a grant per record) and `members` (a user
 * per record); `users` (read-only: a user's standing, groups and own permissions), and under each
 * user their `groups` (a membership per record, the same rows as a group's members) and their own
 * `permissions` (a grant per record). Adding or removing one grant or member is one row, so concurrent changes to one group
 * never undo each other, where a list written whole would (DRF's nested routers, Django's
 * `group.permissions.add()`). Superusers, or holders of `auth.manage_groups`, manage them. A user's
 * account (password, flags) is changed by a PATCH of the user, which needs `users.change`, and
 * whose flags only a superuser changes (the User model's rules: rules.ts).
 */
import type { ComputedField } from '../computed.js';
import { collection, type Collection } from '../collection.js';
import { anyOf, hasPermission, type Permission } from '../permission-classes.js';
import { serializer } from '../serializer.js';
import type { Model } from '../model.js';
import { Group, GroupMember, GroupPermission, UserPermission } from './group-models.js';
import { User } from './user-model.js';

/** The permission that manages groups, their grants and members (superusers hold it). */
export const MANAGE_GROUPS = 'auth.manage_groups';

const managers: readonly Permission[] = [hasPermission(MANAGE_GROUPS)];

/** Values of `column` of the rows of `table` whose `via` names the record, ascending. */
const listed = (table: string, via: string, column: string, items: 'string' | 'integer'): ComputedField => ({
  schema: { type: 'array', items: { type: items }, readOnly: true },
  aggregate: { kind: 'ids', table, via, column, ...(items === 'string' && { text: true }), visibility: 'all' },
});

const groupSerializer = serializer(Group, {
  name: 'AuthGroup',
  fields: ['id', 'name', 'permissions', 'members'],
  readOnly: ['id'],
  search: ['name'],
  computed: {
    permissions: listed(GroupPermission.table, 'group_id', 'name', 'string'),
    members: listed(GroupMember.table, 'group_id', 'user_id', 'integer'),
  },
});

export const groups = collection('groups', {
  serializer: groupSerializer,
  filterFields: ['id', 'name'],
  orderingFields: ['id', 'name'],
  permissions: managers,
});

/**
 * The links of `parent`'s record (its foreign key `field` in `model`'s rows), one `key` per record:
 * added by POST, removed by DELETE, or by DELETE on the list naming the key (`?name=x`).
 */
const links = (name: string, model: Model, serializerName: string, parent: Collection, field: string, key: string): Collection =>
  collection(name, {
    serializer: serializer(model, { name: serializerName, fields: ['id', key], readOnly: ['id'] }),
    parent: { collection: parent, field },
    filterFields: [key],
    orderingFields: ['id', key],
    bulkDelete: 'filtered',
    permissions: managers,
  });

export const groupPermissions = links('permissions', GroupPermission, 'AuthGroupPermission', groups, 'group_id', 'name');
export const groupMembers = links('members', GroupMember, 'AuthGroupMember', groups, 'group_id', 'user_id');

/**
 * Who changes an account (its password, its flags): the users table's model permission, the one an
 * app's own users collection asks for updates, so it is one power over one table. The flags stay a
 * superuser's alone whoever holds it (rules.ts): stricter than Django's admin, where `change_user`
 * lets its holder make themselves superuser.
 */
export const CHANGE_USERS = 'users.change';
export const VIEW_USERS = 'users.view';

const userSerializer = serializer(User, {
  name: 'AuthUser',
  fields: ['id', 'username', 'is_active', 'is_staff', 'is_superuser', 'password', 'groups', 'user_permissions'],
  readOnly: ['id', 'username'],
  hidden: ['password'],
  search: ['username'],
  computed: {
    groups: listed(GroupMember.table, 'user_id', 'group_id', 'integer'),
    // Their own (Django's user_permissions); what they hold is these and their groups'.
    user_permissions: listed(UserPermission.table, 'user_id', 'name', 'string'),
  },
});

// Read by those who manage groups, or who may view or change users (Django's view_user shows a user's groups and permissions).
const userReaders: readonly Permission[] = [anyOf(hasPermission(MANAGE_GROUPS), hasPermission(VIEW_USERS), hasPermission(CHANGE_USERS))];

export const users = collection('users', {
  serializer: userSerializer,
  builtInActions: ['list', 'retrieve', 'partial_update'],
  filterFields: ['id', 'username', 'is_staff', 'is_superuser', 'is_active'],
  orderingFields: ['id', 'username'],
  permissions: { list: userReaders, retrieve: userReaders, partial_update: [hasPermission(CHANGE_USERS)] },
});

export const userGroups = links('groups', GroupMember, 'AuthUserGroup', users, 'user_id', 'group_id');
export const userPermissions = links('permissions', UserPermission, 'AuthUserPermission', users, 'user_id', 'name');

/**
 * What the `/auth/` router mounts beside the authentication endpoints: two sets, each mounted on its
 * own, as a user's `groups` and the groups themselves share a name (a name is a path segment).
 */
export const authCollections: readonly (readonly Collection[])[] = [
  [groups, groupPermissions, groupMembers],
  [users, userGroups, userPermissions],
];
