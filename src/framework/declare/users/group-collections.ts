/**
 * The groups over the API, as collections of the framework's own (mounted under `/auth/` by the
 * router that serves the authentication endpoints), so they have every collection's pagination,
 * filters, errors, ETags and OpenAPI entries: `groups` (a group shows its permission names and its
 * members' ids), and under each group its `permissions` (a grant per record) and `members` (a user
 * per record); `users` (read-only: a user's standing, groups and own permissions), and under each
 * user their `groups` (a membership per record, the same rows as a group's members) and their own
 * `permissions` (a grant per record). Adding or removing one grant or member is one row, so concurrent changes to one group
 * never undo each other, where a list written whole would (DRF's nested routers, Django's
 * `group.permissions.add()`). Superusers, or holders of `auth.manage_groups`, manage them.
 */
import type { ComputedField } from '../computed.js';
import { collection, type Collection } from '../collection.js';
import { hasPermission, type Permission } from '../permission-classes.js';
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

const userSerializer = serializer(User, {
  name: 'AuthUser',
  fields: ['id', 'username', 'is_active', 'is_staff', 'is_superuser', 'groups', 'user_permissions'],
  readOnly: ['id', 'username', 'is_active', 'is_staff', 'is_superuser'],
  search: ['username'],
  computed: {
    groups: listed(GroupMember.table, 'user_id', 'group_id', 'integer'),
    // Their own (Django's user_permissions); what they hold is these and their groups'.
    user_permissions: listed(UserPermission.table, 'user_id', 'name', 'string'),
  },
});

export const users = collection('users', {
  serializer: userSerializer,
  builtInActions: ['list', 'retrieve'],
  filterFields: ['id', 'username', 'is_staff', 'is_superuser', 'is_active'],
  orderingFields: ['id', 'username'],
  permissions: managers,
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
