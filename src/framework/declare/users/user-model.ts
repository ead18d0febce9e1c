/**
 * The user model the framework's authentication rests on: the `users` table's
 * declaration (the framework's migrations are generated from it and the store's
 * other account tables), its rules in rules.ts. An app may extend it (Django's
 * custom user model): `User.extend({ bio: fields.text({ nullable: true }) })`,
 * passed to defineApp as `userModel`; its migrations then alter the framework's table.
 */
import type { Field } from '../../../core/fields.js';
import type { IndexFacts } from '../../../core/schema.js';
import { fields } from '../fields.js';
import { model, type Model } from '../model.js';
import { userRules } from './rules.js';

const USERNAME_PATTERN = /^[\w.@+-]+$/;

/** A model of the `users` table: the framework's, or one an app extended from it. */
export interface UserModel extends Model {
  /**
   * The same table with `added` fields, or with `email` or `date_joined` redeclared; the fields
   * authentication reads cannot be. `currentPassword: false`: a user changing their own password
   * need not send the current one (`current_password`, required by default). `indexes` are added
   * to the framework's (an e-mail unique ignoring case, say).
   */
  extend(added: Record<string, Field>, options?: UserModelOptions): UserModel;
}

/** `User.extend`'s options. */
export interface UserModelOptions {
  readonly currentPassword?: boolean;
  /** Indexes of the app's beside the framework's own, kept by every later `extend`. */
  readonly indexes?: readonly IndexFacts[];
}

/** The fields authentication, permissions and credential versions read: an app's user model keeps the framework's. */
const AUTHENTICATION_FIELDS = ['id', 'username', 'password', 'is_active', 'is_staff', 'is_superuser', 'credentials_version', 'credentials_kept'];

function userModel(declared: Record<string, Field>, options: UserModelOptions): UserModel {
  return {
    ...model('users', declared, {
      ...userRules({ currentPassword: options.currentPassword ?? true }),
      indexes: [
        // Usernames are unique ignoring case, so "Alice" cannot pass for "alice".
        { name: 'users_username_ignoring_case_key', columns: ['username'], unique: true, ignoreCase: true },
        { columns: ['email'] },
        { columns: ['is_active'] },
        { columns: ['date_joined'] },
        ...(options.indexes ?? []),
      ],
    }),
    extend(added, extended = {}) {
      const kept = Object.keys(added).filter((name) => AUTHENTICATION_FIELDS.includes(name));
      if (kept.length > 0) throw new Error(`User.extend: ${kept.join(', ')} cannot be redeclared: authentication reads the framework's own (only other fields, email and date_joined may be).`);
      const missing = Object.entries(added).filter(([, field]) => field === undefined).map(([name]) => name);
      if (missing.length > 0) throw new Error(`User.extend: ${missing.join(', ')} must be a field (a user model cannot drop the framework's fields).`);
      return userModel({ ...declared, ...added }, {
        currentPassword: extended.currentPassword ?? options.currentPassword,
        indexes: [...(options.indexes ?? []), ...(extended.indexes ?? [])],
      });
    },
  };
}

/** A flag only a superuser changes (rules.ts), as the OpenAPI document says wherever a serializer shows it. */
const superusersFlag = (field: Field): Field => ({ ...field, schema: { ...field.schema, description: 'Only a superuser may change it (403 otherwise).' } });

/**
 * The framework's users (username, e-mail, password, flags, permissions); `User.extend` makes an app's own
 * user model (docs/authentication.md).
 */
export const User: UserModel = userModel({
  id: fields.id(),
  username: fields.string({
    maxLength: 150,
    unique: true,
    pattern: USERNAME_PATTERN,
    patternMessage: 'Enter a valid username: letters, digits and @ . + - _ only.',
  }),
  email: fields.email({ blank: true, default: '' }),
  is_active: superusersFlag(fields.boolean({ default: true })),
  is_superuser: superusersFlag(fields.boolean({ default: false })),
  // Django's is_staff: whether the user may use the admin (what they may do there, their permissions say).
  is_staff: superusersFlag(fields.boolean({ default: false })),
  date_joined: fields.timestamp({ default: () => new Date() }),
  password: fields.password({ required: 'create' }),
  // A password change or deactivation moves the version on, ending the credentials issued under the
  // old one, except the one it kept (store/accounts/users.ts).
  credentials_version: fields.integer({ bits: 32, default: 0 }),
  credentials_kept: fields.string({ maxLength: 64, nullable: true }),
}, {});
