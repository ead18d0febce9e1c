/**
 * Who a request is made by, and the ways every authentication kind finds
 * them: by one query, by an issued credential, by username and password.
 */
import type { Database } from '../../store/connection/database.js';
import type { Companion } from '../../store/read/records.js';
import type { RequestReader } from '../../store/read/reader.js';
import { activeUserBy, currentUserRow, type IssuedCredential, type UserRow } from '../../store/accounts/users.js';
import { effectivePermissions } from '../../store/accounts/user-permissions.js';
import { verifyAgainstDummy, verifyPassword } from './passwords.js';

/** Who a request is made by, once authenticated. */
export interface AuthUser {
  readonly id: number;
  readonly username: string;
  readonly isSuperuser: boolean;
  /** Django's is_staff: the user may use the admin. */
  readonly isStaff: boolean;
  /** The user's credential version: credentials are issued under it, and stop working once it moves on. */
  readonly credentialsVersion: number;
  /** Names the credential the request came with (a token's or session's hash, a JWT's id), so a change it makes can keep it. */
  readonly credentialId: string | undefined;
  /**
   * Superusers hold every permission; others their own and their groups' (read once per request, when
   * first asked, so a permission removed from the user or a group is refused from the next request on).
   * First asked inside a transaction opened on the `database` the request hands the app's code (a
   * write's, a custom action's), they are read through that transaction's own connection (on SQLite
   * it holds the one connection a read elsewhere would wait for); an app route or admin page reads them
   * as it authenticates, as its code may open a transaction the framework does not see.
   */
  hasPermission(name: string): Promise<boolean>;
}

/** How a user's permissions are read: once, through the transaction lent to it while one is open (`readIn`), else through the database it was found in. */
interface Permissions {
  read(): Promise<Set<string>>;
  /** Once asked: then a transaction has nothing to lend. */
  names?: Promise<Set<string>>;
  lent?: Database;
}

/** The AuthUsers the framework made, each from a users row (what credentials.issue takes as a user), with how their permissions are read (none for a superuser). */
const madeHere = new WeakMap<object, Permissions | undefined>();
export const isAuthUser = (value: object): value is AuthUser => madeHere.has(value);

/**
 * The user's permissions read now unless they are already (nothing for a superuser, or a user the
 * framework did not make): called outside any transaction where the app's code may open one the
 * framework does not see (an app route's handler), after which `hasPermission` answers from what was read.
 */
export async function readPermissions(user: AuthUser | null): Promise<void> {
  if (user) await madeHere.get(user)?.read();
}

/**
 * `work`, run in `transaction`, during which the user's permissions, if first asked, are read through
 * it: on SQLite the transaction holds the one connection a read elsewhere would wait for, for ever;
 * on PostgreSQL the connection it holds spares taking a second. Nothing is read unless asked.
 */
export async function readIn<T>(user: AuthUser, transaction: Database, work: () => Promise<T>): Promise<T> {
  const permissions = madeHere.get(user);
  // Already read, or lent another transaction of the request's (PostgreSQL only: SQLite opens one at a time).
  if (!permissions || permissions.names || permissions.lent) return work();
  permissions.lent = transaction;
  try {
    return await work();
  } finally {
    permissions.lent = undefined;
  }
}

export function toAuthUser(database: Database, row: UserRow, credentialId?: string): AuthUser {
  const isSuperuser = Boolean(row.is_superuser);
  const id = Number(row.id);
  const permissions: Permissions = {
    // A read that failed (in a transaction that failed before it, say) is not kept: the next ask reads again.
    read: () =>
      (permissions.names ??= effectivePermissions(permissions.lent ?? database, id).then(
        (found) => new Set(found),
        (error: unknown) => {
          permissions.names = undefined;
          throw error;
        },
      )),
  };
  const user: AuthUser = {
    id,
    username: row.username,
    isSuperuser,
    isStaff: Boolean(row.is_staff),
    credentialsVersion: Number(row.credentials_version),
    credentialId,
    async hasPermission(name) {
      return isSuperuser || (await permissions.read()).has(name);
    },
  };
  madeHere.set(user, isSuperuser ? undefined : permissions);
  return user;
}

/**
 * The store's one query that finds a credential's user, and the message of the 401 when it finds
 * none. Being one query, it can ride along with a view's own read.
 */
export interface UserQuery extends Companion {
  readonly failure: string;
  /** AuthUser.credentialId of the user it finds. */
  readonly credentialId: string;
}

/**
 * The credential's user, when it is active and the credential still current (issued under the
 * user's version, or kept by the change that moved it on; credential.id is AuthUser.credentialId); else undefined.
 * Read on the primary; through the request's `reader` when authenticating one (which keeps what it needs of the row).
 */
export async function findCurrentUser(database: Database, credential: IssuedCredential, reader?: RequestReader): Promise<AuthUser | undefined> {
  const row = await (reader ? reader.currentUser(credential) : currentUserRow(database, credential));
  return row && toAuthUser(database, row, credential.id);
}

/**
 * The login throttle's bucket of an account: its username folded, which names one account (usernames
 * are unique ignoring case), however the account is named (username in any case, e-mail) and whether
 * a login or a current password is checked. An e-mail that finds nobody counts under itself: one
 * shared bucket for every unknown name would, once full, tell which names exist.
 */
export const accountKey = (username: string | undefined): string | undefined => username && `name:${username.toLowerCase()}`;

/** The column a login names its user by: the username, or an app's unique `email`. */
export type LoginField = 'username' | 'email';

/**
 * The active user these credentials name, or undefined; takes as long either way. `counted` is
 * called once the query knows whom the check is about (the login throttle's per-account count).
 */
export async function checkCredentials(database: Database, name: unknown, password: unknown, by: LoginField, counted: (account: string) => Promise<void>): Promise<AuthUser | undefined> {
  if (typeof name !== 'string' || typeof password !== 'string') return undefined;
  const row = await activeUserBy(database, by, name);
  await counted(accountKey(by === 'username' ? name : row?.username) ?? `email:${name.toLowerCase()}`);
  if (!row) return verifyAgainstDummy(password).then(() => undefined);
  const valid = await verifyPassword(password, row.password);
  return valid ? toAuthUser(database, row) : undefined;
}
