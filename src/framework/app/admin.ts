/**
 * Administration used by the CLI: users and their named permissions, checked
 * by the same field declarations the API uses.
 */
import { randomBytes } from 'node:crypto';
import type { Database } from '../../store/connection/database.js';
import * as permissions from '../../store/accounts/user-permissions.js';
import { insertUser, userIdByName } from '../../store/accounts/users.js';
import { FieldError } from '../../core/fields.js';
import { User, type UserModel } from '../declare/users/user-model.js';

export { listPermissions } from '../../store/accounts/user-permissions.js';

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
  superuser: boolean;
  permissions: readonly string[];
}

/** Thrown for input the CLI should report as the user's mistake. */
export class AdminInputError extends Error {}

async function checked(model: UserModel, name: string, value: unknown): Promise<unknown> {
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
  try {
    return await insertUser(database, model, values, { superuser: user.superuser, permissions: names });
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

const PERMISSION_NAME = /^[\w.:-]{1,200}$/;

/** The distinct names, all checked before any is stored. */
function permissionNames(names: readonly string[]): string[] {
  const bad = names.find((name) => !PERMISSION_NAME.test(name));
  if (bad !== undefined) throw new AdminInputError(`Invalid permission name "${bad}": use letters, digits and _ . : - (1-200 characters).`);
  return [...new Set(names)];
}

export async function grantPermissions(database: Database, userId: number, names: readonly string[]): Promise<void> {
  await permissions.grantPermissions(database, userId, permissionNames(names));
}

/** How many of `names` the user held. */
export async function revokePermissions(database: Database, userId: number, names: readonly string[]): Promise<number> {
  return permissions.revokePermissions(database, userId, permissionNames(names));
}
