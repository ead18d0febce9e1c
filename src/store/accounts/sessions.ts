/** Sessions kept in the database, by the hash of their id. */
import { storeDatabase, type Database } from '../connection/database.js';

export interface SessionRow {
  readonly userId: number;
  readonly csrfToken: string;
  readonly version: number;
}

// ISO strings order like the instants they name, so SQLite's text column compares correctly too.
const now = (): string => new Date().toISOString();

/** Keeps the session until `expiresAt`; expired sessions are swept here, at login, rather than by a timer. */
export async function saveSession(database: Database, idHash: string, session: SessionRow, expiresAt: Date): Promise<void> {
  await storeDatabase(database).db.deleteFrom('auth_sessions').where('expires_at', '<=', now()).execute();
  await storeDatabase(database).db
    .insertInto('auth_sessions')
    .values({
      id_hash: idHash,
      user_id: session.userId,
      csrf_token: session.csrfToken,
      credentials_version: session.version,
      expires_at: expiresAt.toISOString(),
    })
    .execute();
}

/** The unexpired session under `idHash`. */
export async function loadSession(database: Database, idHash: string): Promise<SessionRow | undefined> {
  const row = await storeDatabase(database).db
    .selectFrom('auth_sessions')
    .select(['user_id', 'csrf_token', 'credentials_version'])
    .where('id_hash', '=', idHash)
    .where('expires_at', '>', now())
    .executeTakeFirst();
  return row && { userId: Number(row.user_id), csrfToken: row.csrf_token as string, version: Number(row.credentials_version) };
}

/** Whether there was one to remove. */
export async function removeSession(database: Database, idHash: string): Promise<boolean> {
  const result = await storeDatabase(database).db.deleteFrom('auth_sessions').where('id_hash', '=', idHash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
