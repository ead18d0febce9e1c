/** Users' named permissions. Names come checked by the caller. */
import { storeDatabase, type Database } from '../connection/database.js';
import { compiledStatement, type Build } from '../statements/compiled.js';
import type { Placeholder } from '../statements/placeholder.js';

const permissionsOf: Build<{ name: string }> = (database: Database, userId: Placeholder) =>
  storeDatabase(database).db.selectFrom('user_permissions').select('name').where('user_id', '=', userId).orderBy('name');

/** Read by every request that checks a named permission: compiled once. */
export async function listPermissions(database: Database, userId: number): Promise<string[]> {
  const rows = await compiledStatement(permissionsOf, 'permissions', permissionsOf)(database, [userId]);
  return rows.map((row) => row.name);
}

/** Names the user holds already stay as they are. */
export async function grantPermissions(database: Database, userId: number, names: readonly string[]): Promise<void> {
  for (const name of names) {
    await storeDatabase(database).db
      .insertInto('user_permissions')
      .values({ user_id: userId, name })
      .onConflict((conflict) => conflict.columns(['user_id', 'name']).doNothing())
      .execute();
  }
}

/** How many of `names` the user held. */
export async function revokePermissions(database: Database, userId: number, names: readonly string[]): Promise<number> {
  if (names.length === 0) return 0;
  const result = await storeDatabase(database).db
    .deleteFrom('user_permissions')
    .where('user_id', '=', userId)
    .where('name', 'in', names)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
