/**
 * Credentials for an app's own code (a custom action, a hook): checking a username or e-mail with a
 * password as the `/auth/` endpoints do (the login throttle, then a check that takes as long whether
 * or not the user exists), and issuing a credential of the kind the app authenticates with. What a
 * request issued, and the credential it presented, are what `computed.credential()` may render:
 * never a credential of another user.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Row } from '../../core/rows.js';
import type { Database } from '../../store/database.js';
import type { PasswordThrottle } from '../throttling.js';
import type { UserModel } from '../users/model.js';
import { checkCredentials, type AuthUser } from './auth-user.js';
import { credentialOf } from './index.js';

/** Who is checked: a `username`, or an `email` (the app's user model must declare it unique), with the `password`. */
export type CredentialCheck = { readonly username: unknown; readonly password: unknown } | { readonly email: unknown; readonly password: unknown };

export interface Credentials {
  /**
   * The active user these name, or undefined when wrong (the same answer whether the user or the
   * password was): counted against THROTTLE_LOGIN first (429 over it).
   */
  check(sent: CredentialCheck): Promise<AuthUser | undefined>;
  /** A new credential for the user (an AuthUser, or a user record with its `id`): an API token when token auth is on, else a JWT access token. */
  issue(user: AuthUser | Row): Promise<string>;
  /** The credential shown as this user's in this request's responses: one issued in it, else the one the caller presented, if it is theirs. */
  current(userId: number): string | undefined;
}

/** What every request's credentials share: the app's user model, the login throttle, and the issuer. */
export interface CredentialSetup {
  readonly userModel: UserModel;
  readonly passwordThrottle: PasswordThrottle;
  issue(database: Database, userId: number): Promise<string>;
}

/** One request's credentials; `in(database)` the same ones writing through a transaction (an after-hook's). */
export interface RequestCredentials extends Credentials {
  in(database: Database): RequestCredentials;
}

export function requestCredentials(setup: CredentialSetup, request: FastifyRequest, reply: FastifyReply, database: Database): RequestCredentials {
  const issued = new Map<number, string>();
  const within = (database: Database): RequestCredentials => ({
    async check(sent) {
      // An app may pass a body as it came: anything but an object names nobody.
      if (typeof sent !== 'object' || sent === null) return undefined;
      const by = 'email' in sent ? 'email' : 'username';
      const name = 'email' in sent ? sent.email : sent.username;
      if (by === 'email' && !setup.userModel.fields.email?.unique) {
        throw new Error('credentials.check by email needs a unique email: declare email: fields.email({ unique: true }) in the app\'s userModel.');
      }
      await setup.passwordThrottle(request, reply, typeof name === 'string' ? `${by === 'email' ? 'email' : 'name'}:${name.toLowerCase()}` : undefined);
      return checkCredentials(database, name, sent.password, by);
    },
    async issue(user) {
      const id = Number(user.id);
      if (!Number.isSafeInteger(id)) throw new Error('credentials.issue: pass a user (an AuthUser, or a user record read with its id).');
      const credential = await setup.issue(database, id);
      issued.set(id, credential);
      return credential;
    },
    current(userId) {
      // A session cookie is HttpOnly: it is never rendered into a body scripts can read.
      const presented = request.user?.id === userId ? credentialOf(request, undefined)?.value : undefined;
      return issued.get(userId) ?? presented;
    },
    in: within,
  });
  return within(database);
}
