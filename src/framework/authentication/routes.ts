/**
 * The endpoints that hand out and take back credentials, one set per enabled
 * kind, under `<prefix>/auth/`.
 */
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../store/database.js';
import { authenticationFailed, notAuthenticated, validationFailed } from '../errors.js';
import { errorResponses } from '../openapi.js';
import { parseJsonBody } from '../parsers.js';
import { resource } from '../router.js';
import type { AuthKind } from './index.js';
import { createToken, revokeToken, tokenShape } from './token.js';
import { checkCredentials, type AuthUser } from './users.js';

export const credentialsSchema = {
  type: 'object',
  properties: { username: { type: 'string' }, password: { type: 'string', format: 'password' } },
  required: ['username', 'password'],
};

export const INVALID_CREDENTIALS = 'Unable to log in with the provided credentials.';

/** `{username, password}` from the body → the user, or 400 (the same whether or not the user exists). */
export async function userFromCredentials(database: Database, body: unknown): Promise<AuthUser> {
  const { username, password } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const details: Record<string, string[]> = {};
  if (typeof username !== 'string' || username === '') details.username = ['This field is required.'];
  if (typeof password !== 'string' || password === '') details.password = ['This field is required.'];
  if (Object.keys(details).length > 0) throw validationFailed(details);
  const user = await checkCredentials(database, username, password);
  if (!user) throw validationFailed({ non_field_errors: [INVALID_CREDENTIALS] }, INVALID_CREDENTIALS);
  return user;
}

export function mountAuthRoutes(scope: FastifyInstance, database: Database, kinds: readonly AuthKind[]): void {
  if (kinds.includes('token')) {
    resource(scope, '/auth/token/', {
      POST: {
        schema: {
          tags: ['auth'],
          summary: 'Obtain an API token',
          body: credentialsSchema,
          response: { 200: { type: 'object', properties: { token: { type: 'string' } }, required: ['token'] }, ...errorResponses([400, 413, 415, 429, 503]) },
        },
        handler: async (request, reply) => {
          const user = await userFromCredentials(database, parseJsonBody(request));
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
  }
}
