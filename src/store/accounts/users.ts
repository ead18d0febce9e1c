/**
 * The users table as authentication and administration read and change it:
 * a credential's user, a user's password hash, credential versions, new users.
 */
import type { Model } from '../../core/model.js';
import type { Row } from '../../core/rows.js';
import { storeDatabase, transaction, type Database } from '../connection/database.js';
import { insertRecord, type RecordId, type RowQuery } from '../read/records.js';
import { withWritePosition } from '../connection/write-positions.js';
import { grantPermissions } from './user-permissions.js';
import { joinGroups } from './groups.js';

/** The columns a query finding a user selects. */
export const USER_COLUMNS = ['id', 'username', 'is_superuser', 'is_staff', 'credentials_version'] as const;

/**
 * The columns whose change may change what a user's credentials give: those a credential's user is
 * found by and carries (currentUserRow), and the password, whose change ends the others.
 */
export const CREDENTIAL_COLUMNS: ReadonlySet<string> = new Set([...USER_COLUMNS, 'is_active', 'credentials_kept', 'password']);

export interface UserRow {
  id: number;
  username: string;
  is_superuser: unknown;
  is_staff: unknown;
  credentials_version: unknown;
}

/** is_active's value for an active user, as a bound value (PostgreSQL reads '1' as true). */
export const ACTIVE = 1;

/** A credential that names its user, as the user's credential version stood when it was issued. */
export interface IssuedCredential {
  readonly userId: number;
  readonly version: number;
  /** The credential's id (none: a credential no change can keep). */
  readonly id: string | undefined;
}

/**
 * The credential's user, when it is active and the credential still current (issued under the
 * user's version, or kept by the change that moved it on); else undefined. One read; `positioned`:
 * with the user's last write's position (store/connection/write-positions.ts).
 */
export async function currentUserRow(database: Database, credential: IssuedCredential, positioned = false): Promise<UserRow | undefined> {
  const query = storeDatabase(database).db
    .selectFrom('users')
    .select(USER_COLUMNS)
    .where('id', '=', credential.userId)
    .where('is_active', '=', ACTIVE)
    .where((eb) =>
      credential.id === undefined
        ? eb('credentials_version', '=', credential.version)
        : eb.or([eb('credentials_version', '=', credential.version), eb('credentials_kept', '=', credential.id)]),
    ) as unknown as RowQuery;
  const row = await (positioned ? withWritePosition(database, query) : query).executeTakeFirst();
  return row as UserRow | undefined;
}

/** The active user whose `column` (a unique one: username, or an app's unique email) holds `value`, with their password hash. */
export async function activeUserBy(database: Database, column: 'username' | 'email', value: string): Promise<(UserRow & { password: string }) | undefined> {
  const row = await storeDatabase(database).db
    .selectFrom('users')
    .select([...USER_COLUMNS, 'password'])
    .where(column, '=', value)
    .where('is_active', '=', ACTIVE)
    .executeTakeFirst();
  return row as (UserRow & { password: string }) | undefined;
}

/** The active user of this id. */
export async function activeUserById(database: Database, id: number): Promise<UserRow | undefined> {
  const row = await storeDatabase(database).db.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).where('is_active', '=', ACTIVE).executeTakeFirst();
  return row as UserRow | undefined;
}

/** The id of the user of this exact name, active or not. */
export async function userIdByName(database: Database, username: string): Promise<number | undefined> {
  const row = await storeDatabase(database).db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst();
  return row && Number(row.id);
}

/** The user's password hash. */
export async function passwordHashOf(database: Database, userId: RecordId): Promise<string | undefined> {
  const row = await storeDatabase(database).db.selectFrom('users').select('password').where('id', '=', userId).executeTakeFirst();
  return row?.password as string | undefined;
}

/**
 * Moves the user's credential version on, keeping `kept` (a credential id) current, and deletes
 * the user's other tokens: tokens never expire, so the ended ones are not kept for ever; sessions
 * and refresh tokens expire by themselves.
 */
export async function endCredentials(database: Database, userId: RecordId, kept: string | undefined): Promise<void> {
  await storeDatabase(database).db
    .updateTable('users')
    .set((eb) => ({ credentials_version: eb('credentials_version', '+', 1), credentials_kept: kept ?? null }))
    .where('id', '=', userId)
    .execute();
  let tokens = storeDatabase(database).db.deleteFrom('auth_tokens').where('user_id', '=', userId);
  if (kept !== undefined) tokens = tokens.where('key_hash', '<>', kept);
  await tokens.execute();
}

/** What a new user is given beside its fields, in the same transaction. */
export interface Standing {
  /** A superuser is staff too (Django's createsuperuser). */
  readonly superuser: boolean;
  readonly staff: boolean;
  /** Checked names. */
  readonly permissions: readonly string[];
  /** Ids of existing groups. */
  readonly groups: readonly number[];
}

/**
 * A new user of `model` (the users table's) from checked `values`, made superuser or staff, given
 * `permissions` and put in `groups` in the same transaction: all of it or nothing.
 */
export async function insertUser(database: Database, model: Model, values: Row, standing: Standing): Promise<number> {
  return transaction(database, async (transaction) => {
    const id = Number(await insertRecord(transaction, model, values));
    const { booleanValue } = storeDatabase(database).capabilities.types;
    if (standing.superuser || standing.staff) {
      await storeDatabase(transaction).db
        .updateTable('users')
        .set({ is_superuser: booleanValue(standing.superuser), is_staff: booleanValue(true) })
        .where('id', '=', id)
        .execute();
    }
    await grantPermissions(transaction, id, standing.permissions);
    await joinGroups(transaction, id, standing.groups);
    return id;
  });
}
