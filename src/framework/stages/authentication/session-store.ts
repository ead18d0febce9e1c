/**
 * Where sessions live between requests: one small interface, kept in the
 * database by default (see session-store-redis.ts for Redis). Sessions are
 * keyed by a hash of their id, so a leaked store holds no usable session.
 */
import { loadSession, removeSession, saveSession } from '../../../store/accounts/sessions.js';
import type { Database } from '../../../store/connection/database.js';

export interface StoredSession {
  readonly userId: number;
  readonly csrfToken: string;
  /** The user's credential version at login (AuthUser.credentialsVersion); absent in sessions older than it (0). */
  readonly version?: number;
}

export interface SessionStore {
  /** Keeps the session under `idHash` for `lifetime` seconds. */
  save(idHash: string, session: StoredSession, lifetime: number): Promise<void>;
  /** The unexpired session under `idHash`, if any. */
  load(idHash: string): Promise<StoredSession | undefined>;
  /** Whether there was one to remove. */
  remove(idHash: string): Promise<boolean>;
}

export const databaseSessionStore = (database: Database): SessionStore => ({
  save: (idHash, { userId, csrfToken, version = 0 }, lifetime) =>
    saveSession(database, idHash, { userId, csrfToken, version }, new Date(Date.now() + lifetime * 1000)),
  load: (idHash) => loadSession(database, idHash),
  remove: (idHash) => removeSession(database, idHash),
});
