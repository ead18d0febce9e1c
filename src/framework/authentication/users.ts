/**
 * The user model authentication rests on, its tables, and the queries every
 * authentication kind shares: credentials, users by id, named permissions.
 */
import { sql } from 'kysely';
import type { Database } from '../../store/database.js';
import { precompiled, type Precompiled } from '../../store/precompiled.js';
import type { Companion } from '../../store/records.js';
import type { Migrations } from '../../store/migrations.js';
import { fields } from '../fields.js';
import { model } from '../model.js';
import { verifyAgainstDummy, verifyPassword } from '../passwords.js';
import { sessionMigrations } from './session-store.js';

export const USERNAME_PATTERN = /^[\w.@+-]+$/;

export const User = model('users', {
  id: fields.id(),
  username: fields.string({
    maxLength: 150,
    unique: true,
    pattern: USERNAME_PATTERN,
    patternMessage: 'Enter a valid username: letters, digits and @ . + - _ only.',
  }),
  email: fields.email({ blank: true, default: '' }),
  is_active: fields.boolean({ default: true }),
  date_joined: fields.timestamp({ default: () => new Date() }),
  password: fields.password({ required: 'create' }),
});

/** Who a request is made by, once authenticated. */
export interface AuthUser {
  readonly id: number;
  readonly username: string;
  readonly isSuperuser: boolean;
  /** Superusers hold every permission. Loaded once per request, on first use. */
  hasPermission(name: string): Promise<boolean>;
}

export const authMigrations: Migrations = {
  '0001_users_permissions_tokens': async (db, types) => {
    await db.schema
      .createTable('users')
      .addColumn('id', types.id, types.idColumn)
      .addColumn('username', 'varchar(150)', (column) => column.notNull().unique())
      .addColumn('email', 'varchar(254)', (column) => column.notNull().defaultTo(''))
      .addColumn('is_active', types.boolean, (column) => column.notNull().defaultTo(sql.lit(types.dialect === 'postgres' ? true : 1)))
      .addColumn('is_superuser', types.boolean, (column) => column.notNull().defaultTo(sql.lit(types.dialect === 'postgres' ? false : 0)))
      .addColumn('date_joined', types.timestamp, (column) => column.notNull())
      .addColumn('password', 'varchar(256)', (column) => column.notNull())
      .execute();
    for (const column of ['email', 'is_active', 'date_joined']) {
      await db.schema.createIndex(`users_${column}_idx`).on('users').column(column).execute();
    }
    await db.schema
      .createTable('user_permissions')
      .addColumn('user_id', types.id, (column) => column.notNull().references('users.id').onDelete('cascade'))
      .addColumn('name', 'varchar(200)', (column) => column.notNull())
      .addPrimaryKeyConstraint('user_permissions_pk', ['user_id', 'name'])
      .execute();
    await db.schema
      .createTable('auth_tokens')
      .addColumn('id', types.id, types.idColumn)
      .addColumn('user_id', types.id, (column) => column.notNull().references('users.id').onDelete('cascade'))
      .addColumn('key_hash', 'varchar(64)', (column) => column.notNull().unique())
      .addColumn('created_at', types.timestamp, (column) => column.notNull())
      .execute();
    await db.schema.createIndex('auth_tokens_user_id_idx').on('auth_tokens').column('user_id').execute();
  },
  ...sessionMigrations,
};

export interface UserRow {
  id: number;
  username: string;
  is_superuser: unknown;
}

export function toAuthUser(database: Database, row: UserRow): AuthUser {
  const isSuperuser = Boolean(row.is_superuser);
  let permissions: Promise<Set<string>> | undefined;
  return {
    id: Number(row.id),
    username: row.username,
    isSuperuser,
    async hasPermission(name) {
      if (isSuperuser) return true;
      permissions ??= listPermissions(database, Number(row.id)).then((names) => new Set(names));
      return (await permissions).has(name);
    },
  };
}

export const ACTIVE = 1;

/** The columns a user lookup selects. */
export const USER_COLUMNS = ['id', 'username', 'is_superuser'] as const;

/**
 * The one query that finds a credential's user (selecting USER_COLUMNS), and the message of the
 * 401 when it finds none. Being one query, it can ride along with a view's own read.
 */
export interface UserLookup extends Companion {
  readonly failure: string;
}

const lookups = new WeakMap<UserLookup['query'], Precompiled<UserRow>>();

/** The user a lookup finds, or undefined. */
export async function findUser(database: Database, lookup: UserLookup): Promise<AuthUser | undefined> {
  let query = lookups.get(lookup.query);
  if (!query) lookups.set(lookup.query, (query = precompiled(lookup.query, lookup.values.length) as Precompiled<UserRow>));
  const [row] = await query(database, ...lookup.values);
  return row && toAuthUser(database, row);
}

/** The active user with this id, or undefined (deleted and deactivated users cannot authenticate). */
export async function findActiveUser(database: Database, id: number): Promise<AuthUser | undefined> {
  const row = await database.db
    .selectFrom('users')
    .select(['id', 'username', 'is_superuser'])
    .where('id', '=', id)
    .where('is_active', '=', ACTIVE)
    .executeTakeFirst();
  return row && toAuthUser(database, row as unknown as UserRow);
}

/** The active user these credentials name, or undefined; takes as long either way. */
export async function checkCredentials(database: Database, username: unknown, password: unknown): Promise<AuthUser | undefined> {
  if (typeof username !== 'string' || typeof password !== 'string') return undefined;
  const row = await database.db
    .selectFrom('users')
    .select(['id', 'username', 'is_superuser', 'password'])
    .where('username', '=', username)
    .where('is_active', '=', ACTIVE)
    .executeTakeFirst();
  if (!row) return verifyAgainstDummy(password).then(() => undefined);
  const valid = await verifyPassword(password, row.password as string);
  return valid ? toAuthUser(database, row as unknown as UserRow) : undefined;
}

export async function listPermissions(database: Database, userId: number): Promise<string[]> {
  const rows = await database.db
    .selectFrom('user_permissions')
    .select('name')
    .where('user_id', '=', userId)
    .orderBy('name')
    .execute();
  return rows.map((row) => row.name as string);
}
