/**
 * Administration used by the CLI: users and their named permissions, checked
 * by the same field declarations the API uses.
 */
import type { Database } from '../../store/database.js';
import { insertRecord } from '../../store/records.js';
import { FieldError } from '../fields.js';
import { User } from './users.js';

export interface NewUser {
  username: string;
  password: string | undefined;
  email: string;
  superuser: boolean;
  permissions: readonly string[];
}

/** Thrown for input the CLI should report as the user's mistake. */
export class AdminInputError extends Error {}

async function checked(field: keyof typeof User.fields, value: unknown): Promise<unknown> {
  try {
    return await User.fields[field]!.parse(value);
  } catch (error) {
    if (error instanceof FieldError) throw new AdminInputError(`${field}: ${error.messages.join(' ')}`);
    throw error;
  }
}

export async function createUser(database: Database, user: NewUser): Promise<number> {
  if (user.password === undefined || user.password === '') {
    throw new AdminInputError('A password is required (--password or --password-stdin).');
  }
  const values = {
    username: await checked('username', user.username),
    email: await checked('email', user.email),
    password: await checked('password', user.password),
    is_active: true,
    date_joined: new Date(),
  };
  return database.db.transaction().execute(async (transaction) => {
    const scoped = { ...database, db: transaction };
    let id: number;
    try {
      id = Number(await insertRecord(scoped, User, values));
    } catch (error) {
      if (database.uniqueViolation(error)) throw new AdminInputError(`A user named "${user.username}" already exists.`);
      throw error;
    }
    if (user.superuser) {
      await transaction.updateTable('users').set({ is_superuser: database.dialect === 'postgres' ? true : 1 }).where('id', '=', id).execute();
    }
    await grantPermissions(scoped, id, user.permissions);
    return id;
  });
}

const PERMISSION_NAME = /^[\w.:-]{1,200}$/;

/** The distinct names, all checked before any is stored. */
function permissionNames(names: readonly string[]): string[] {
  const bad = names.find((name) => !PERMISSION_NAME.test(name));
  if (bad !== undefined) throw new AdminInputError(`Invalid permission name "${bad}": use letters, digits and _ . : - (1-200 characters).`);
  return [...new Set(names)];
}

export async function grantPermissions(database: Database, userId: number, names: readonly string[]): Promise<void> {
  for (const name of permissionNames(names)) {
    await database.db
      .insertInto('user_permissions')
      .values({ user_id: userId, name })
      .onConflict((conflict) => conflict.columns(['user_id', 'name']).doNothing())
      .execute();
  }
}

/** How many of `names` the user held. */
export async function revokePermissions(database: Database, userId: number, names: readonly string[]): Promise<number> {
  const distinct = permissionNames(names);
  if (distinct.length === 0) return 0;
  const result = await database.db
    .deleteFrom('user_permissions')
    .where('user_id', '=', userId)
    .where('name', 'in', distinct)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
