/**
 * What an app's own code (a custom action, a hook, a computed field) checks passwords and issues
 * credentials with; the framework hands one to each request (toolkit/credential-store.ts).
 */
import type { Row } from '../../core/rows.js';
import type { AuthUser } from '../base/auth-user.js';

/** Who is checked: a `username`, or an `email` (the app's user model must declare it unique), with the `password`; both name nobody. */
export type CredentialCheck = { readonly username: unknown; readonly password: unknown } | { readonly email: unknown; readonly password: unknown };

/** What an app's code checks passwords and issues credentials with (docs/authentication.md). */
export interface Credentials {
  /**
   * The active user these name, or undefined when wrong (the same answer whether the user or the
   * password was, or both login fields were sent): counted against THROTTLE_LOGIN per client first,
   * then per account (429 over either), before anything else.
   */
  check(sent: CredentialCheck): Promise<AuthUser | undefined>;
  /**
   * A new credential for an active user: an AuthUser, or a users record the framework handed over (a
   * hook's or custom action's record of a collection over the users table); anything else throws.
   * An API token when token auth is on, else a JWT access token (no refresh token); 400 for an inactive user.
   */
  issue(user: AuthUser | Row): Promise<string>;
  /**
   * The credential shown as this users record's in this request's responses: one issued in it, else
   * the one the caller presented, if it is theirs; none for a row not known as a users record.
   */
  current(record: Row): string | undefined;
}
