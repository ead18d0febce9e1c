/**
 * Django's groups: a named set of permissions its members hold beside their own (a user's effective
 * permissions, store/accounts/user-permissions.ts). Four tables of the framework's, declared here
 * as the User model is (its migrations are generated from them): the groups, each group's permission
 * names, who is in which group, and each user's own permission names. The link tables have ids of
 * their own so that each link is a record the API adds and removes on its own (a grant, a
 * membership), never a list rewritten whole.
 */
import { fields } from '../fields.js';
import { model, type Model } from '../model.js';

/** Permission names: letters, digits and _ . : - (the CLI's rule, checked before anything is stored). */
export const PERMISSION_NAME = /^[\w.:-]{1,200}$/;
export const PERMISSION_NAME_RULE = 'use letters, digits and _ . : - (1-200 characters)';

/** Permission names granted to the row `owner` names (a group, a user), one grant per record, each name once. */
const grants = (table: string, owner: string, ownerTable: string): Model =>
  model(
    table,
    {
      id: fields.id(),
      [owner]: fields.foreignKey(ownerTable),
      name: fields.string({ maxLength: 200, pattern: PERMISSION_NAME, patternMessage: `Enter a valid permission name: ${PERMISSION_NAME_RULE}.` }),
    },
    { uniqueTogether: [[owner, 'name']] },
  );

export const Group: Model = model('auth_groups', {
  id: fields.id(),
  name: fields.string({ maxLength: 150, unique: true }),
});

export const GroupPermission: Model = grants('auth_group_permissions', 'group_id', 'auth_groups');

export const GroupMember: Model = model(
  'auth_user_groups',
  { id: fields.id(), group_id: fields.foreignKey('auth_groups'), user_id: fields.foreignKey('users') },
  { uniqueTogether: [['group_id', 'user_id']] },
);

/** A user's own permission names (Django's user_permissions). */
export const UserPermission: Model = grants('auth_user_permissions', 'user_id', 'users');

/** The tables whose rows decide what users hold beside their own flags. */
export const groupModels: readonly Model[] = [Group, GroupPermission, GroupMember, UserPermission];
