/**
 * API tokens: random 32 bytes, shown once, stored only as a SHA-256 hash.
 * The `rf_` prefix lets the token kind recognise its own credentials (and
 * lets secret scanners find leaked ones).
 */
import { deleteToken, deleteUserTokens, insertToken, tokenUserLookup } from '../../../store/accounts/tokens.js';
import type { Database } from '../../../store/database.js';
import { styleOf } from '../../base/style.js';
import { authenticationFailed, notAuthenticated } from '../../base/errors.js';
import { ANONYMOUS, errorResponses } from '../../docs/openapi.js';
import { resource } from '../../routing/router.js';
import { authorizationCredential, credentialShape, hashOf, newCredential } from './credentials.js';
import { lookupAuthenticator, type AuthenticationKind, type Authenticator } from './index.js';
import { credentialsSchema, objectOf, passwordChecked, type LoginCheck } from '../../routing/auth/login.js';

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

export const tokenAuthentication: Authenticator = lookupAuthenticator('token', (credential) => {
  if (credential.scheme !== 'bearer' || !tokenShape.test(credential.value)) return undefined;
  const keyHash = hashOf(credential.value);
  // Named, not spread: a spread followed by properties its source lacks takes V8's slow path (a new map per object).
  const { query, columns, values } = tokenUserLookup(keyHash);
  return { query, columns, values, failure: 'Invalid token.', credentialId: keyHash };
});

/** `POST <prefix>/auth/token/` hands out a token; `DELETE` on it, with the token, revokes it. */
export const tokenKind = (database: Database, login: LoginCheck): AuthenticationKind => ({
  authenticator: tokenAuthentication,
  issue: (database, user) => createToken(database, user.id, user.credentialsVersion),
  mount(scope) {
    resource(scope, '/auth/token/', {
      POST: {
        schema: {
          tags: ['auth'],
          summary: 'Obtain an API token',
          operationId: 'tokenObtain',
          ...ANONYMOUS,
          body: credentialsSchema,
          response: passwordChecked({ 200: objectOf({ token: 'The new API token' }), ...errorResponses([400, 413, 415, 429, 503]) }),
        },
        handler: async (request, reply) => {
          const user = await login(request, reply);
          request.user = user;
          return reply.send({ token: await createToken(database, user.id, user.credentialsVersion) });
        },
      },
      DELETE: {
        schema: {
          tags: ['auth'],
          summary: 'Revoke the API token the request carries',
          operationId: 'tokenRevoke',
          security: [{ token: [] }],
          response: { 204: { description: 'Revoked', type: 'null' }, ...errorResponses([401, 503]) },
        },
        handler: async (request, reply) => {
          const token = authorizationCredential(request.headers.authorization ?? '', styleOf(request).credentialKeywords)?.credential;
          if (!token) throw notAuthenticated();
          if (!tokenShape.test(token) || !(await revokeToken(database, token))) throw authenticationFailed('Invalid token.');
          return reply.status(204).send();
        },
      },
    });
  },
});
