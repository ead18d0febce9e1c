/**
 * Where sessions live between requests: one small interface, kept in the
 * database by default (see session-store-redis.ts for Redis). Sessions are
 * keyed by a hash of their id, so a leaked store holds no usable session.
 */
import type { Database } from '../../store/database.js';
import type { Migrations } from '../../store/migrations.js';

export interface StoredSession {
  readonly userId: number;
  readonly csrfToken: string;
}

export interface SessionStore {
  /** Keeps the session under `idHash` for `lifetime` seconds. */
  save(idHash: string, session: StoredSession, lifetime: number): Promise<void>;
  /** The unexpired session under `idHash`, if any. */
  load(idHash: string): Promise<StoredSession | undefined>;
  /** Whether there was one to remove. */
  remove(idHash: string): Promise<boolean>;
  close(): Promise<void>;
}

export const sessionMigrations: Migrations = {
  '0002_sessions': async (db, types) => {
    await db.schema
      .createTable('auth_sessions')
      .addColumn('id_hash', 'varchar(64)', (column) => column.primaryKey())
      .addColumn('user_id', types.id, (column) => column.notNull().references('users.id').onDelete('cascade'))
      .addColumn('csrf_token', 'varchar(64)', (column) => column.notNull())
      .addColumn('expires_at', types.timestamp, (column) => column.notNull())
      .execute();
    await db.schema.createIndex('auth_sessions_user_id_idx').on('auth_sessions').column('user_id').execute();
    await db.schema.createIndex('auth_sessions_expires_at_idx').on('auth_sessions').column('expires_at').execute();
  },
};

// ISO strings order like the instants they name, so SQLite's text column compares correctly too.
const now = (): string => new Date().toISOString();

export const databaseSessionStore = (database: Database): SessionStore => ({
  async save(idHash, { userId, csrfToken }, lifetime) {
    // Expired sessions are swept here, at login, rather than by a timer.
    await database.db.deleteFrom('auth_sessions').where('expires_at', '<=', now()).execute();
    await database.db
      .insertInto('auth_sessions')
      .values({
        id_hash: idHash,
        user_id: userId,
        csrf_token: csrfToken,
        expires_at: new Date(Date.now() + lifetime * 1000).toISOString(),
      })
      .execute();
  },
  async load(idHash) {
    const row = await database.db
      .selectFrom('auth_sessions')
      .select(['user_id', 'csrf_token'])
      .where('id_hash', '=', idHash)
      .where('expires_at', '>', now())
      .executeTakeFirst();
    return row && { userId: Number(row.user_id), csrfToken: row.csrf_token as string };
  },
  async remove(idHash) {
    const result = await database.db.deleteFrom('auth_sessions').where('id_hash', '=', idHash).executeTakeFirst();
    return result.numDeletedRows > 0n;
  },
  // The database belongs to the application, which closes it.
  close: async () => {},
});
