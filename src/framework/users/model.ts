/**
 * The user model the framework's authentication rests on: its table is made
 * by the store's account migrations, its rules are in rules.ts.
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
  date_joined: fields.timestamp({ default: () => new Date() }),
  password: fields.password({ required: 'create' }),
}, userRules);
