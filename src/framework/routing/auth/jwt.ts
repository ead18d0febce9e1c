/**
 * The JWT endpoints: `POST <prefix>/auth/jwt/` trades credentials for an
 * access and a refresh token; `POST <prefix>/auth/jwt/refresh/` trades a
 * refresh token for a new pair.
 */
import { validationFailed } from '../../base/errors.js';
import { ANONYMOUS, errorResponses } from '../../docs/openapi.js';
import type { JwtCredentials } from '../../stages/authentication/jwt.js';
import { parseJsonBody } from '../../stages/parsers.js';
import { resource } from '../router.js';
import type { AuthenticationKind } from './kind.js';
import { credentialsSchema, objectOf, passwordChecked, type LoginCheck } from './login.js';

export const jwtKind = (jwt: JwtCredentials, login: LoginCheck): AuthenticationKind => ({
  issue: (_database, user) => jwt.access(user),
  authenticator: jwt.authenticator,
  mount(instance) {
    resource(instance, '/auth/jwt/', {
      POST: {
        schema: {
          tags: ['auth'],
          summary: 'Obtain a JWT access and refresh token',
          operationId: 'jwtObtain',
          ...ANONYMOUS,
          body: credentialsSchema,
          response: passwordChecked({
            200: objectOf({ access: 'Authenticates requests as Bearer', refresh: 'Obtains new access tokens' }),
            ...errorResponses([400, 413, 415, 429, 503]),
          }),
        },
        handler: async (request, reply) => {
          const user = await login(request, reply);
          request.user = user;
          return reply.send(await jwt.login(user));
        },
      },
    });
    resource(instance, '/auth/jwt/refresh/', {
      POST: {
        schema: {
          tags: ['auth'],
          summary: 'Trade a refresh token for a new access and refresh token (the old one is then refused)',
          operationId: 'jwtRefresh',
          ...ANONYMOUS,
          body: { type: 'object', properties: { refresh: { type: 'string' } }, required: ['refresh'] },
          response: {
            200: objectOf({ access: 'A new access token', refresh: 'The next refresh token' }),
            ...errorResponses([400, 401, 413, 415, 503]),
          },
        },
        handler: async (request, reply) => {
          const body = parseJsonBody(request);
          const refresh = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).refresh : undefined;
          if (typeof refresh !== 'string' || refresh === '') throw validationFailed({ refresh: ['This field is required.'] });
          const { user, next } = await jwt.refresh(refresh);
          request.user = user;
          return reply.send(await next());
        },
      },
    });
  },
});
