/**
 * The rules a user record keeps through any collection that serves it: only a superuser changes a
 * superuser's record; a user changing their own password proves the current one; a password change
 * or a deactivation ends every credential of the user issued before it, except the one the change
 * was made with (credential versions: see the User model and the store's accounts/users.ts).
 */
import { endCredentials, passwordHashOf } from '../../../store/accounts/users.js';
import type { Row } from '../../../core/rows.js';
import type { MaybePromise } from '../../../core/maybe-promise.js';
import type { AuthUser } from '../../base/auth-user.js';
import { permissionDenied, validationFailed } from '../../base/errors.js';
import type { ModelRules, RecordUpdate } from '../model.js';
import { verifyPassword } from '../../base/passwords.js';
import { readActions, type Permission } from '../permission-classes.js';

/** What a user changing their own password sends beside it (the API's name; the admin's form asks it as Django's `old_password`). */
export const CURRENT_PASSWORD = 'current_password';
const MAX_PASSWORD_LENGTH = 4096;

/** Only a superuser may change or delete a superuser's record. */
const superusersBySuperusers: Permission = {
  description: "a superuser, for a superuser's record",
  hasPermission: () => true,
  hasObjectPermission: ({ user, action }, record) => readActions.has(action) || user?.isSuperuser === true || !record.is_superuser,
};

const isOwn = ({ id, user }: RecordUpdate): boolean => user !== null && BigInt(id) === BigInt(user.id);

const currentPasswordError = (message: string) => validationFailed({ [CURRENT_PASSWORD]: [message] });

/** A user setting their own password sends the current one: a stolen session or token alone cannot lock its owner out. */
function checkCurrentPassword(update: RecordUpdate): MaybePromise<void> {
  if (update.values.password === undefined || !isOwn(update)) return;
  const sent = update.body[CURRENT_PASSWORD];
  if (sent === undefined || sent === null || sent === '') throw currentPasswordError('Send your current password to change it.');
  if (typeof sent !== 'string') throw currentPasswordError('Not a valid string.');
  return verifyCurrentPassword(update, sent);
}

async function verifyCurrentPassword(update: RecordUpdate, sent: string): Promise<void> {
  // A stolen token must not make guessing the password it cannot change fast: counted as a login.
  await update.countPasswordCheck();
  const hash = await passwordHashOf(update.database, update.id);
  const valid = hash !== undefined && sent.length <= MAX_PASSWORD_LENGTH && (await verifyPassword(sent, hash, 'write'));
  if (!valid) throw currentPasswordError('The current password is incorrect.');
}

/** The flags only a superuser sets, on any record through any serializer, with their value on a new record. */
const ACCOUNT_FLAGS: Readonly<Record<string, boolean>> = { is_superuser: false, is_staff: false, is_active: true };

/**
 * Only a superuser makes a superuser or (de)activates an account, whatever the record: a write by
 * anyone else must leave the flags as they stand (`stored`), or as a new record has them.
 */
function assertAccountFlags(values: Row, stored: Row | undefined, user: AuthUser | null): void {
  if (user?.isSuperuser) return;
  const changed = Object.entries(ACCOUNT_FLAGS).filter(([flag, initial]) => values[flag] !== undefined && Boolean(values[flag]) !== Boolean(stored ? stored[flag] : initial));
  if (changed.length > 0) throw permissionDenied(`Only a superuser may change ${changed.map(([flag]) => flag).join(' or ')}.`);
}

async function endCredentialsOnChange(update: RecordUpdate, stored: Row): Promise<void> {
  assertAccountFlags(update.values, stored, update.user);
  const deactivating = update.values.is_active === false;
  if (update.values.password === undefined && !deactivating) return;
  // Every credential issued before now ends, but the one the change was made with (AuthUser.credentialId):
  // the version moves on, so the read that authenticates them refuses the rest. A deactivated user
  // keeps nothing: reactivation must not bring any credential back.
  await endCredentials(update.database, update.id, isOwn(update) && !deactivating ? update.user!.credentialId : undefined);
}

/**
 * `currentPassword`: whether a user changing their own password sends the current one (the
 * default; an app whose API has no such field, as Conduit's PUT /user, may turn it off).
 */
export const userRules = ({ currentPassword }: { currentPassword: boolean }): ModelRules => ({
  reads: Object.keys(ACCOUNT_FLAGS),
  // Credential versions (store/accounts/users.ts): moving one revives or ends a user's credentials.
  internal: ['credentials_version', 'credentials_kept'],
  permissions: [superusersBySuperusers],
  creates: (values, user) => assertAccountFlags(values, undefined, user),
  updates: {
    inputs: currentPassword
      ? {
          [CURRENT_PASSWORD]: {
            type: 'string',
            format: 'password',
            writeOnly: true,
            description: 'Your current password: required when you change your own password; never stored.',
          },
        }
      : {},
    check: currentPassword ? checkCurrentPassword : () => undefined,
    beforeStore: endCredentialsOnChange,
    beforeStoreOn: ['password', ...Object.keys(ACCOUNT_FLAGS)],
  },
});
