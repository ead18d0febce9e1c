/** API tokens, stored by the hash of their key only. */
import { storeDatabase, type Database } from '../connection/database.js';
import type { Placeholder } from '../statements/placeholder.js';
import type { Companion, RowQuery } from '../read/records.js';
import { ACTIVE, USER_COLUMNS } from './users.js';

/** `version`: the credential version the token is issued under; the user's current one when not given. */
export async function insertToken(database: Database, userId: number, keyHash: string, version?: number): Promise<void> {
  await storeDatabase(database).db
    .insertInto('auth_tokens')
    .values({
      user_id: userId,
      key_hash: keyHash,
      created_at: new Date().toISOString(),
      credentials_version: version ?? storeDatabase(database).db.selectFrom('users').select('credentials_version').where('id', '=', userId),
    })
    .execute();
}

/** Whether the token existed. */
export async function deleteToken(database: Database, keyHash: string): Promise<boolean> {
  const result = await storeDatabase(database).db.deleteFrom('auth_tokens').where('key_hash', '=', keyHash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** How many tokens the user had. */
export async function deleteUserTokens(database: Database, userId: number): Promise<number> {
  const result = await storeDatabase(database).db.deleteFrom('auth_tokens').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// The token is found by its hash: timing reveals nothing about the stored tokens. A token is current while it
// carries its user's credential version, or is the one a password change kept (see endCredentials).
const tokenUser = (database: Database, keyHash: Placeholder, active: Placeholder): RowQuery =>
  storeDatabase(database).db
    .selectFrom('auth_tokens')
    .innerJoin('users', 'users.id', 'auth_tokens.user_id')
    .select(USER_COLUMNS.map((column) => `users.${column}` as const))
    .where('auth_tokens.key_hash', '=', keyHash)
    .where('users.is_active', '=', active)
    .where((eb) =>
      eb.or([
        eb('auth_tokens.credentials_version', '=', eb.ref('users.credentials_version')),
        eb('auth_tokens.key_hash', '=', eb.ref('users.credentials_kept')),
      ]),
    ) as unknown as RowQuery;

/** The one query that finds the active user of a current token (USER_COLUMNS): it can ride along with another read. */
export const tokenUserQuery = (keyHash: string): Companion => ({ query: tokenUser, columns: USER_COLUMNS, values: [keyHash, ACTIVE] });
