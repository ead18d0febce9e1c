/** The field kinds an application declares: the core's (both modules), with passwords hashed by scrypt on the hashing slots. */
import { moreFields } from '../../core/field-kinds.js';
import { fileFields } from '../../core/file-fields.js';
import { fields as plainFields, passwordField, type PasswordOptions } from '../../core/fields.js';
import { hashPassword } from '../base/passwords.js';

/**
 * Every field kind (`fields.string({ maxLength: 200 })`, `fields.foreignKey('authors')`, …): what each
 * accepts, renders and stores is in docs/guides/serializers-and-fields.md, its column in
 * docs/guides/models-and-migrations.md.
 */
export const fields = {
  ...plainFields,
  ...moreFields,
  ...fileFields,
  /** Write-only; stored as a salted scrypt hash, rendered as null. */
  password: (options: PasswordOptions = {}) => passwordField(hashPassword, options),
};
