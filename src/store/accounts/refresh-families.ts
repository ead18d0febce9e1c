/**
 * JWT refresh families: one row per live login, whose generation the latest
 * refresh token carries (see framework/authentication/jwt.ts).
 */
import { storeDatabase, type Database } from '../connection/database.js';

/** A new family at generation 0; expired families are swept here, at login, as sessions are. */
export async function startRefreshFamily(database: Database, family: string, userId: number, expiresAt: Date): Promise<void> {
  await storeDatabase(database).db.deleteFrom('auth_refresh_families').where('expires_at', '<=', new Date().toISOString()).execute();
  await storeDatabase(database).db
    .insertInto('auth_refresh_families')
    .values({ id: family, user_id: userId, generation: 0, expires_at: expiresAt.toISOString() })
    .execute();
}

/**
 * Compare-and-set: moves the user's unexpired family from `generation` to the next, until
 * `expiresAt`. Of two moves from the same generation, one wins; whether this one did.
 */
export async function advanceRefreshFamily(database: Database, family: string, userId: number, generation: number, expiresAt: Date): Promise<boolean> {
  const moved = await storeDatabase(database).db
    .updateTable('auth_refresh_families')
    .set({ generation: generation + 1, expires_at: expiresAt.toISOString() })
    .where('id', '=', family)
    .where('user_id', '=', userId)
    .where('generation', '=', generation)
    .where('expires_at', '>', new Date().toISOString())
    .executeTakeFirst();
  return moved.numUpdatedRows > 0n;
}

export async function endRefreshFamily(database: Database, family: string): Promise<void> {
  await storeDatabase(database).db.deleteFrom('auth_refresh_families').where('id', '=', family).execute();
}
