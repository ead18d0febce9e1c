/**
 * Credentials for an app's own code (a custom action, a hook): checking a username or e-mail with a
 * password as the `/auth/` endpoints do (the login throttle, then a check that takes as long whether
 * or not the user exists), and issuing a credential of the kind the app authenticates with. What a
 * request issued, and the credential it presented, are what `computed.credential()` may render:
 * never a credential of another user.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Row } from '../../core/rows.js';
import type { Database } from '../../store/connection/database.js';
import type { PasswordThrottle } from '../stages/throttling.js';
import type { Table } from '../../core/model.js';
import { User, type UserModel } from '../declare/users/user-model.js';
import { accountKey, checkCredentials, isAuthUser, type AuthUser, type LoginField } from '../base/auth-user.js';
import { credentialOf } from '../stages/authentication/index.js';
import type { Credentials } from '../declare/credentials.js';

/** Records the framework read from the users table and handed to the app's code or its serializers (by identity). */
const userRecords = new WeakSet<object>();

/** The rows, marked as users records when `table` is the users table: what issue() and computed.credential() accept. */
export function fromTable<T extends object>(table: Table, ...rows: T[]): void {
  if (table.table === User.table) for (const row of rows) userRecords.add(row);
}

/** The user's id, when `user` is an AuthUser or a record the framework read from the users table; else an explicit error. */
function userIdOf(user: AuthUser | Row): number {
  if (!isAuthUser(user) && !userRecords.has(user)) {
    throw new Error('credentials.issue: pass the user (an AuthUser, or a record of the users table as the framework gave it: a users collection\'s hook or action record).');
  }
  return Number(user.id);
}

/** What every request's credentials share: whether users log in by e-mail too, the login throttle, and the issuer. */
export interface CredentialSetup {
  /** Whether the app's user model declares a unique `email`; else a check by email names nobody, and `unusableEmail` tells the app's author (once). */
  readonly byEmail: boolean;
  unusableEmail(request: FastifyRequest): void;
  readonly passwordThrottle: PasswordThrottle;
  issue(database: Database, userId: number): Promise<string>;
}

export function credentialSetup(userModel: UserModel, passwordThrottle: PasswordThrottle, issue: CredentialSetup['issue']): CredentialSetup {
  let told = false;
  return {
    byEmail: userModel.fields.email?.unique === true,
    unusableEmail(request) {
      if (told) return;
      told = true;
      request.log.error("credentials.check by email needs a unique email: declare email: fields.email({ unique: true }) in the app's userModel; until then such a check names nobody.");
    },
    passwordThrottle,
    issue,
  };
}

/** The one login field the check names: both or neither name nobody (an `email` does not silently win over a `username`). */
function loginFieldOf(sent: object): LoginField | undefined {
  const named = (['username', 'email'] as const).filter((field) => Object.hasOwn(sent, field));
  return named.length === 1 ? named[0] : undefined;
}

export interface RequestCredentials extends Credentials {
  in(database: Database): RequestCredentials;
  /** Counts a check of the requesting user's own password (RecordUpdate.countPasswordCheck). */
  countOwnCheck(): Promise<void>;
}

export function requestCredentials(setup: CredentialSetup, request: FastifyRequest, reply: FastifyReply, database: Database): RequestCredentials {
  const issued = new Map<number, string>();
  const within = (database: Database): RequestCredentials => ({
    async check(sent) {
      await setup.passwordThrottle(request, reply, undefined);
      // An app may pass a body as it came: anything but an object naming exactly one of the login fields names nobody.
      const by = typeof sent === 'object' && sent !== null ? loginFieldOf(sent) : undefined;
      if (by === 'email' && !setup.byEmail) {
        setup.unusableEmail(request);
        return undefined;
      }
      if (!by) return undefined;
      return checkCredentials(database, sent[by as keyof typeof sent], sent.password, by, (account) => setup.passwordThrottle.account(request, reply, account));
    },
    async issue(user) {
      const id = userIdOf(user);
      const credential = await setup.issue(database, id);
      issued.set(id, credential);
      return credential;
    },
    current(record) {
      if (!userRecords.has(record)) return undefined;
      const userId = Number(record.id);
      // A session cookie is HttpOnly: it is never rendered into a body scripts can read.
      const presented = request.user?.id === userId ? credentialOf(request, undefined)?.value : undefined;
      return issued.get(userId) ?? presented;
    },
    countOwnCheck: () => setup.passwordThrottle(request, reply, accountKey(request.user?.username)),
    in: within,
  });
  return within(database);
}
