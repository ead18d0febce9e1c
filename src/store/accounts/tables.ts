/**
 * The accounts' tables beside `users` (whose model is the framework's User): named permissions,
 * API tokens, sessions and JWT refresh families, each with the credential version it was issued
 * under (see refresh-families.ts and framework/authentication/). Declared; migrations/ is generated.
 */
import { fields } from '../../core/fields.js';
import { table } from '../../core/model.js';

const hash = () => fields.string({ maxLength: 64 });
const credentialsVersion = () => fields.integer({ bits: 32, default: 0 });

export const accountTables = [
  table('user_permissions', { user_id: fields.foreignKey('users'), name: fields.string({ maxLength: 200 }) }, { primaryKey: ['user_id', 'name'] }),
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
];
