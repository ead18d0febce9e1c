/**
 * The user model the framework's authentication rests on: the `users` table's
 * declaration (the framework's migrations are generated from it and the store's
 * other account tables), its rules in rules.ts.
 */
import { fields } from '../fields.js';
import { model } from '../model.js';
import { userRules } from './rules.js';

const USERNAME_PATTERN = /^[\w.@+-]+$/;

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
  is_superuser: fields.boolean({ default: false }),
  date_joined: fields.timestamp({ default: () => new Date() }),
  password: fields.password({ required: 'create' }),
  // A password change or deactivation moves the version on, ending the credentials issued under the
  // old one, except the one it kept (store/accounts/users.ts).
  credentials_version: fields.integer({ bits: 32, default: 0 }),
  credentials_kept: fields.string({ maxLength: 64, nullable: true }),
}, {
  ...userRules,
  indexes: [
    // Usernames are unique ignoring case, so "Alice" cannot pass for "alice".
    { name: 'users_username_ignoring_case_key', columns: ['username'], unique: true, ignoreCase: true },
    { columns: ['email'] },
    { columns: ['is_active'] },
    { columns: ['date_joined'] },
  ],
});
