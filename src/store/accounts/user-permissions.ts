/**
 * Users' named permissions: their own (`user_permissions`) and, as Django's `get_all_permissions`,
 * those of the groups they are in (groups.ts). Names come checked by the caller.
 */
import { storeDatabase, type Database } from '../connection/database.js';
import { compiledStatement, type Build } from '../statements/compiled.js';
import type { Placeholder } from '../statements/placeholder.js';

/** The user's own names and their groups' (UNION: each name once). */
const effectivePermissionsOf: Build<{ name: string }> = (database: Database, userId: Placeholder) => {
  const { db } = storeDatabase(database);
  return db
    .selectFrom('auth_user_permissions')
    .select('name')
    .where('user_id', '=', userId)
    .union(
      db
        .selectFrom('auth_group_permissions')
        .innerJoin('auth_user_groups', 'auth_user_groups.group_id', 'auth_group_permissions.group_id')
        .select('auth_group_permissions.name')
        .where('auth_user_groups.user_id', '=', userId),
    )
    .orderBy('name');
};

/** The user's effective permissions, read by every request that checks a named permission: compiled once. */
export async function effectivePermissions(database: Database, userId: number): Promise<string[]> {
  const rows = await compiledStatement(effectivePermissionsOf, 'permissions', effectivePermissionsOf)(database, [userId]);
  return rows.map((row) => row.name);
}

/** The user's own names, those `grantPermissions` and `revokePermissions` change. */
export async function listPermissions(database: Database, userId: number): Promise<string[]> {
  const rows = await storeDatabase(database).db.selectFrom('auth_user_permissions').select('name').where('user_id', '=', userId).orderBy('name').execute();
  return rows.map((row) => row.name as string);
}

/** Names the user holds already stay as they are. */
export async function grantPermissions(database: Database, userId: number, names: readonly string[]): Promise<void> {
  for (const name of names) {
    await storeDatabase(database).db
      .insertInto('auth_user_permissions')
      .values({ user_id: userId, name })
      .onConflict((conflict) => conflict.columns(['user_id', 'name']).doNothing())
      .execute();
  }
}

/** How many of `names` the user held. */
export async function revokePermissions(database: Database, userId: number, names: readonly string[]): Promise<number> {
  if (names.length === 0) return 0;
  const result = await storeDatabase(database).db
    .deleteFrom('auth_user_permissions')
    .where('user_id', '=', userId)
    .where('name', 'in', names)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
