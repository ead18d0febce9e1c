/**
 * The accounts' tables beside `users` (whose model is the framework's User and its permissions'
 * and groups' models): API tokens, sessions and JWT refresh families, each with the credential
 * version it was issued under (see refresh-families.ts and framework/authentication/), and the log
 * of writes (Django's LogEntry, log-entries.ts). Declared; migrations/ is generated.
 */
import { fields } from '../../core/fields.js';
import { table } from '../../core/model.js';

const hash = () => fields.string({ maxLength: 64 });
const credentialsVersion = () => fields.integer({ bits: 32, default: 0 });

export const accountTables = [
  table('auth_tokens', {
    id: fields.id(),
    user_id: fields.foreignKey('users'),
    key_hash: fields.string({ maxLength: 64, unique: true }),
    created_at: fields.timestamp(),
    credentials_version: credentialsVersion(),
  }),
  table(
    'auth_sessions',
    { id_hash: hash(), user_id: fields.foreignKey('users'), csrf_token: hash(), expires_at: fields.timestamp(), credentials_version: credentialsVersion() },
    { primaryKey: ['id_hash'], indexes: [{ columns: ['expires_at'] }] },
  ),
  table(
    'auth_refresh_families',
    { id: hash(), user_id: fields.foreignKey('users'), generation: fields.integer({ bits: 32 }), expires_at: fields.timestamp() },
    { primaryKey: ['id'], indexes: [{ columns: ['expires_at'] }] },
  ),
  // Who wrote which record of which collection, how, and the fields a change set: names, never values.
  table(
    'admin_log_entries',
    {
      id: fields.id(),
      action_time: fields.timestamp(),
      // Kept when the user goes, as the record of what happened.
      user_id: fields.foreignKey('users', { nullable: true, onDelete: 'set null' }),
      collection: fields.string({ maxLength: 200 }),
      record_id: fields.string({ maxLength: 255 }),
      // add, change or delete (Django's ADDITION, CHANGE, DELETION).
      action: fields.string({ maxLength: 10 }),
      changed: fields.text(),
    },
    { indexes: [{ columns: ['collection', 'record_id'] }] },
  ),
];
