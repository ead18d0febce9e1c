/**
 * The accounts' tables as the hand-written migrations of Restfold 0.1 made them, kept as history:
 * the generated `0001_initial` (migrations/) replaces them, and a database that ran only some of
 * them runs the rest before it is recorded as at 0001_initial. Never edited; new changes are
 * declared (tables.ts, framework/users/model.ts) and generated.
 */
import { sql } from 'kysely';
import type { MigrationStep } from '../schema/operations.js';

export const releaseAccountMigrations: Readonly<Record<string, MigrationStep>> = {
  '0001_users_permissions_tokens': async (db, types) => {
    await db.schema
      .createTable('users')
      .addColumn('id', sql.raw(types.columnTypes.id), types.idColumn)
      .addColumn('username', 'varchar(150)', (column) => column.notNull().unique())
      .addColumn('email', 'varchar(254)', (column) => column.notNull().defaultTo(''))
      .addColumn('is_active', sql.raw(types.columnTypes.boolean), (column) => column.notNull().defaultTo(sql.lit(types.booleanValue(true))))
      .addColumn('is_superuser', sql.raw(types.columnTypes.boolean), (column) => column.notNull().defaultTo(sql.lit(types.booleanValue(false))))
      .addColumn('date_joined', sql.raw(types.columnTypes.timestamp), (column) => column.notNull())
      .addColumn('password', 'varchar(256)', (column) => column.notNull())
      .execute();
    for (const column of ['email', 'is_active', 'date_joined']) {
      await db.schema.createIndex(`users_${column}_idx`).on('users').column(column).execute();
    }
    await db.schema
      .createTable('user_permissions')
      .addColumn('user_id', sql.raw(types.columnTypes.id), (column) => column.notNull().references('users.id').onDelete('cascade'))
      .addColumn('name', 'varchar(200)', (column) => column.notNull())
      .addPrimaryKeyConstraint('user_permissions_pk', ['user_id', 'name'])
      .execute();
    await db.schema
      .createTable('auth_tokens')
      .addColumn('id', sql.raw(types.columnTypes.id), types.idColumn)
      .addColumn('user_id', sql.raw(types.columnTypes.id), (column) => column.notNull().references('users.id').onDelete('cascade'))
      .addColumn('key_hash', 'varchar(64)', (column) => column.notNull().unique())
      .addColumn('created_at', sql.raw(types.columnTypes.timestamp), (column) => column.notNull())
      .execute();
    await db.schema.createIndex('auth_tokens_user_id_idx').on('auth_tokens').column('user_id').execute();
  },
  '0002_sessions': async (db, types) => {
    await db.schema
      .createTable('auth_sessions')
      .addColumn('id_hash', 'varchar(64)', (column) => column.primaryKey())
      .addColumn('user_id', sql.raw(types.columnTypes.id), (column) => column.notNull().references('users.id').onDelete('cascade'))
      .addColumn('csrf_token', 'varchar(64)', (column) => column.notNull())
      .addColumn('expires_at', sql.raw(types.columnTypes.timestamp), (column) => column.notNull())
      .execute();
    await db.schema.createIndex('auth_sessions_user_id_idx').on('auth_sessions').column('user_id').execute();
    await db.schema.createIndex('auth_sessions_expires_at_idx').on('auth_sessions').column('expires_at').execute();
  },
  /**
   * A password change or deactivation moves the user's version on; each credential carries the
   * version it was issued under (a column, a stored session field, a JWT claim) and is refused once
   * they differ — unless it is the one credential the change kept. Existing credentials carry 0,
   * as their users do, so they survive the upgrade. Refresh families: see refresh-families.ts.
   */
  '0003_credential_versions': async (db, types) => {
    await db.schema.alterTable('users').addColumn('credentials_version', 'integer', (column) => column.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('users').addColumn('credentials_kept', 'varchar(64)').execute();
    for (const table of ['auth_tokens', 'auth_sessions']) {
      await db.schema.alterTable(table).addColumn('credentials_version', 'integer', (column) => column.notNull().defaultTo(0)).execute();
    }
    await db.schema
      .createTable('auth_refresh_families')
      .addColumn('id', 'varchar(64)', (column) => column.primaryKey())
      .addColumn('user_id', sql.raw(types.columnTypes.id), (column) => column.notNull().references('users.id').onDelete('cascade'))
      .addColumn('generation', 'integer', (column) => column.notNull())
      .addColumn('expires_at', sql.raw(types.columnTypes.timestamp), (column) => column.notNull())
      .execute();
    await db.schema.createIndex('auth_refresh_families_user_id_idx').on('auth_refresh_families').column('user_id').execute();
    await db.schema.createIndex('auth_refresh_families_expires_at_idx').on('auth_refresh_families').column('expires_at').execute();
  },
  '0004_usernames_unique_ignoring_case': async (db, types) => {
    const clashing = await db
      .selectFrom('users')
      .select('username')
      .where(
        sql`lower(username)`,
        'in',
        db.selectFrom('users').select(sql`lower(username)`.as('folded')).groupBy(sql`lower(username)`).having(sql`count(*)`, '>', 1),
      )
      .execute();
    if (clashing.length > 0) throw new Error(usernameClashMessage(clashing.map((row) => row.username as string)));
    await db.schema.createIndex('users_username_ignoring_case_key').on('users').unique().expression(types.caseFolded('username')).execute();
  },
};

/** Why the database cannot take the unique index: the usernames that differ only in case, grouped. */
function usernameClashMessage(usernames: readonly string[]): string {
  const groups = new Map<string, string[]>();
  // Sorted here, not by the database, whose collation would order case differently on each.
  for (const username of [...usernames].sort()) {
    const folded = username.toLowerCase();
    groups.set(folded, [...(groups.get(folded) ?? []), username]);
  }
  const listed = [...groups.values()].map((group) => group.map((name) => `"${name}"`).join(' and ')).join('; ');
  return (
    `Usernames must be unique regardless of case, but these users differ only in case: ${listed}. ` +
    'Rename (or delete) all but one of each, then migrate again.'
  );
}
