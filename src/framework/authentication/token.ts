/**
 * API tokens: random 32 bytes, shown once, stored only as a SHA-256 hash.
 * The `rf_` prefix lets the token kind recognise its own credentials (and
 * lets secret scanners find leaked ones).
 */
import type { Database } from '../../store/database.js';
import type { Placeholder } from '../../store/precompiled.js';
import type { RowQuery } from '../../store/records.js';
import { authenticationFailed, notAuthenticated } from '../errors.js';
import { errorResponses } from '../openapi.js';
import { resource } from '../router.js';
import { credentialShape, hashOf, newCredential } from './credentials.js';
import { lookupAuthenticator, type AuthenticationKind, type Authenticator } from './index.js';
import { credentialsSchema, objectOf, type LoginCheck } from './routes.js';
import { ACTIVE, USER_COLUMNS } from './users.js';

const PREFIX = 'rf_';
export const tokenShape = credentialShape(PREFIX);

export async function createToken(database: Database, userId: number): Promise<string> {
  const token = newCredential(PREFIX);
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

// The lookup is by hash: timing reveals nothing about the stored tokens.
const tokenUser = (database: Database, keyHash: Placeholder, active: Placeholder): RowQuery =>
  database.db
    .selectFrom('auth_tokens')
    .innerJoin('users', 'users.id', 'auth_tokens.user_id')
    .select(USER_COLUMNS.map((column) => `users.${column}` as const))
    .where('auth_tokens.key_hash', '=', keyHash)
    .where('users.is_active', '=', active) as unknown as RowQuery;

export const tokenAuthentication = (database: Database): Authenticator =>
  lookupAuthenticator('token', database, (credential) =>
    credential.scheme === 'bearer' && tokenShape.test(credential.value)
      ? { query: tokenUser, columns: USER_COLUMNS, values: [hashOf(credential.value), ACTIVE], failure: 'Invalid token.' }
      : undefined,
  );

/** `POST <prefix>/auth/token/` hands out a token; `DELETE` on it, with the token, revokes it. */
export const tokenKind = (database: Database, login: LoginCheck): AuthenticationKind => ({
  authenticator: tokenAuthentication(database),
  mount(scope) {
    resource(scope, '/auth/token/', {
      POST: {
        schema: {
          tags: ['auth'],
          summary: 'Obtain an API token',
          body: credentialsSchema,
          response: { 200: objectOf({ token: 'The new API token' }), ...errorResponses([400, 413, 415, 503]) },
        },
        handler: async (request, reply) => {
          const user = await login(request, reply);
          request.user = user;
          return reply.send({ token: await createToken(database, user.id) });
        },
      },
      DELETE: {
        schema: {
          tags: ['auth'],
          summary: 'Revoke the bearer token',
          response: { 204: { description: 'Revoked', type: 'null' }, ...errorResponses([401, 503]) },
        },
        handler: async (request, reply) => {
          const match = /^Bearer +(\S+)\s*$/i.exec(request.headers.authorization ?? '');
          if (!match) throw notAuthenticated();
          if (!tokenShape.test(match[1]!) || !(await revokeToken(database, match[1]!))) throw authenticationFailed('Invalid token.');
          return reply.status(204).send();
        },
      },
    });
  },
});
