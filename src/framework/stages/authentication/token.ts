/**
 * API tokens: random 32 bytes, shown once, stored only as a SHA-256 hash.
 * The `rf_` prefix lets the token kind recognise its own credentials (and
 * lets secret scanners find leaked ones).
 */
import { deleteToken, deleteUserTokens, insertToken, tokenUserQuery } from '../../../store/accounts/tokens.js';
import type { Database } from '../../../store/connection/database.js';
import { credentialShape, hashOf, newCredential } from './opaque-credentials.js';
import { userQueryAuthenticator, type Authenticator } from './index.js';

const PREFIX = 'rf_';
export const tokenShape = credentialShape(PREFIX);

/**
 * `version`: the user's credential version when the password was checked (so a token obtained with
 * a password changed meanwhile is born ended); the current one when not given.
 */
export async function createToken(database: Database, userId: number, version?: number): Promise<string> {
  const token = newCredential(PREFIX);
  await insertToken(database, userId, hashOf(token), version);
  return token;
}

/** Whether the token existed. */
export const revokeToken = (database: Database, token: string): Promise<boolean> => deleteToken(database, hashOf(token));

/** How many tokens were revoked. */
export const revokeUserTokens = deleteUserTokens;

export const tokenAuthentication: Authenticator = userQueryAuthenticator('token', (credential) => {
  if (credential.scheme !== 'bearer' || !tokenShape.test(credential.value)) return undefined;
  const keyHash = hashOf(credential.value);
  const { query, columns, values } = tokenUserQuery(keyHash);
  return { query, columns, values, failure: 'Invalid token.', credentialId: keyHash };
});
