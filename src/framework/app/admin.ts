/**
 * Administration used by the CLI (and by an app's own code and tests: the public API exports it):
 * users, groups and their named permissions, checked by the same field declarations the API uses.
 */
import { randomBytes } from 'node:crypto';
import { transaction, type Database } from '../../store/connection/database.js';
import * as permissions from '../../store/accounts/user-permissions.js';
import * as groups from '../../store/accounts/groups.js';
import { insertUser, userIdByName } from '../../store/accounts/users.js';
import { FieldError } from '../../core/fields.js';
import { User, type UserModel } from '../declare/users/user-model.js';
import { Group, PERMISSION_NAME, PERMISSION_NAME_RULE } from '../declare/users/group-models.js';

export { effectivePermissions, listPermissions } from '../../store/accounts/user-permissions.js';
export { groupMembers, groupPermissions, groupsOf, listGroups } from '../../store/accounts/groups.js';

export interface NewUser {
  username: string;
  /** Required unless `unusablePassword`. */
  password: string | undefined;
  /**
   * true: the user has no password anyone can log in with (Django's set_unusable_password), for
   * accounts that sign in otherwise and for tests that force their requests' user; nothing is hashed.
   */
  unusablePassword?: boolean;
  email: string;
  /** A superuser is staff too (Django's createsuperuser). */
  superuser: boolean;
  /** Django's is_staff (default false). */
  staff?: boolean;
  permissions: readonly string[];
  /** Names of existing groups to put the user in (default none). */
  groups?: readonly string[];
}

/** Thrown for input the CLI should report as the user's mistake. */
export class AdminInputError extends Error {}

async function checked(model: { readonly fields: UserModel['fields'] }, name: string, value: unknown): Promise<unknown> {
  const field = model.fields[name]!;
  try {
    const parsed = await field.parse(value);
    await field.validate?.(parsed);
    return parsed;
  } catch (error) {
    if (error instanceof FieldError) throw new AdminInputError(`${name}: ${error.messages.join(' ')}`);
    throw error;
  }
}

/** `model`: the app's user model (its checks, e.g. an email required and unique), else the framework's. */
export async function createUser(database: Database, user: NewUser, model: UserModel = User): Promise<number> {
  if (!user.unusablePassword && (user.password === undefined || user.password === '')) {
    throw new AdminInputError('A password is required (--password or --password-stdin).');
  }
  const values = {
    username: await checked(model, 'username', user.username),
    email: await checked(model, 'email', user.email),
    // Django's unusable password: `!` and random text, which no hash matches (verifyPassword).
    password: user.unusablePassword ? `!${randomBytes(30).toString('base64url')}` : await checked(model, 'password', user.password),
    is_active: true,
    date_joined: new Date(),
  };
  const names = permissionNames(user.permissions);
  const groupIds = await Promise.all((user.groups ?? []).map((name) => groupNamed(database, name)));
  try {
    return await insertUser(database, model, values, { superuser: user.superuser, staff: user.staff ?? false, permissions: names, groups: groupIds });
  } catch (error) {
    if (database.uniqueViolation(error)) {
      const withEmail = model.fields.email?.unique ? ` or with the e-mail "${user.email}"` : '';
      throw new AdminInputError(`A user named "${user.username}"${withEmail} already exists. Usernames are unique regardless of case.`);
    }
    throw error;
  }
}

/** The id of the user of this exact name. */
export async function userNamed(database: Database, username: string): Promise<number> {
  const id = await userIdByName(database, username);
  if (id === undefined) throw new AdminInputError(`No user named "${username}".`);
  return id;
}

/** The distinct names, all checked before any is stored. */
function permissionNames(names: readonly string[]): string[] {
  const bad = names.find((name) => !PERMISSION_NAME.test(name));
  if (bad !== undefined) throw new AdminInputError(`Invalid permission name "${bad}": ${PERMISSION_NAME_RULE}.`);
  return [...new Set(names)];
}

export async function grantPermissions(database: Database, userId: number, names: readonly string[]): Promise<void> {
  await permissions.grantPermissions(database, userId, permissionNames(names));
}

/** How many of `names` the user held. */
export async function revokePermissions(database: Database, userId: number, names: readonly string[]): Promise<number> {
  return permissions.revokePermissions(database, userId, permissionNames(names));
}

/** The id of the group of this exact name. */
export async function groupNamed(database: Database, name: string): Promise<number> {
  const id = await groups.groupIdByName(database, name);
  if (id === undefined) throw new AdminInputError(`No group named "${name}".`);
  return id;
}

/** A new group, its name checked as the API checks it, holding `permissions` (checked names). */
export async function createGroup(database: Database, name: string, permissions: readonly string[] = []): Promise<number> {
  const checkedName = (await checked(Group, 'name', name)) as string;
  const names = permissionNames(permissions);
  try {
    return await transaction(database, async (within) => {
      const id = await groups.insertGroup(within, checkedName);
      await groups.grantGroupPermissions(within, id, names);
      return id;
    });
  } catch (error) {
    if (database.uniqueViolation(error)) throw new AdminInputError(`A group named "${name}" already exists.`);
    throw error;
  }
}

/** Deletes the group; its members lose its permissions. The ids of its members. */
export async function deleteGroup(database: Database, groupId: number): Promise<number[]> {
  return groups.deleteGroup(database, groupId);
}

export async function grantGroupPermissions(database: Database, groupId: number, names: readonly string[]): Promise<void> {
  await groups.grantGroupPermissions(database, groupId, permissionNames(names));
}

/** How many of `names` the group held. */
export async function revokeGroupPermissions(database: Database, groupId: number, names: readonly string[]): Promise<number> {
  return groups.revokeGroupPermissions(database, groupId, permissionNames(names));
}

/** Puts the user in the groups of these names (all found before any is joined). */
export async function addToGroups(database: Database, userId: number, names: readonly string[]): Promise<void> {
  await groups.joinGroups(database, userId, await Promise.all(names.map((name) => groupNamed(database, name))));
}

/** How many of the groups of these names the user was in. */
export async function removeFromGroups(database: Database, userId: number, names: readonly string[]): Promise<number> {
  return groups.leaveGroups(database, userId, await Promise.all(names.map((name) => groupNamed(database, name))));
}
