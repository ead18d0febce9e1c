/**
 * API tokens: random 32 bytes, shown once, stored only as a SHA-256 hash.
 * The `rf_` prefix lets the token kind recognise its own credentials (and
 * lets secret scanners find leaked ones).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Database } from '../../store/database.js';
import { authenticationFailed } from '../errors.js';
import type { Authenticator } from './index.js';
import { ACTIVE, toAuthUser, type AuthUser, type UserRow } from './users.js';

const PREFIX = 'rf_';
export const tokenShape = /^rf_[A-Za-z0-9_-]{43}$/;

const hashOf = (token: string): string => createHash('sha256').update(token).digest('hex');

export async function createToken(database: Database, userId: number): Promise<string> {
  const token = PREFIX + randomBytes(32).toString('base64url');
  await database.db
    .insertInto('auth_tokens')
    .values({ user_id: userId, key_hash: hashOf(token), created_at: new Date().toISOString() })
    .execute();
  return token;
}

/** Whether the token existed. */
export async function revokeToken(database: Database, token: string): Promise<boolean> {
  const result = await database.db.deleteFrom('auth_tokens').where('key_hash', '=', hashOf(token)).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** How many tokens were revoked. */
export async function revokeUserTokens(database: Database, userId: number): Promise<number> {
  const result = await database.db.deleteFrom('auth_tokens').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

async function userOfToken(database: Database, token: string): Promise<AuthUser | undefined> {
  // The lookup is by hash: timing reveals nothing about the stored tokens.
  const row = await database.db
    .selectFrom('auth_tokens')
    .innerJoin('users', 'users.id', 'auth_tokens.user_id')
    .select(['users.id', 'users.username', 'users.is_superuser'])
    .where('auth_tokens.key_hash', '=', hashOf(token))
    .where('users.is_active', '=', ACTIVE)
    .executeTakeFirst();
  return row && toAuthUser(database, row as unknown as UserRow);
}

export const tokenAuthentication = (database: Database): Authenticator => ({
  kind: 'token',
  async authenticate(credential) {
    if (credential.scheme !== 'bearer' || !tokenShape.test(credential.value)) return undefined;
    const user = await userOfToken(database, credential.value);
    if (!user) throw authenticationFailed('Invalid token.');
    return user;
  },
});
