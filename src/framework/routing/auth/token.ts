/** `POST <prefix>/auth/token/` hands out an API token; `DELETE` on it, with the token, revokes it. */
import type { Database } from '../../../store/connection/database.js';
import { styleOf } from '../../base/style.js';
import { authenticationFailed, notAuthenticated } from '../../base/errors.js';
import { ANONYMOUS, errorResponses } from '../../docs/openapi.js';
import { authorizationCredential } from '../../stages/authentication/opaque-credentials.js';
import { createToken, revokeToken, tokenAuthentication, tokenShape } from '../../stages/authentication/token.js';
import { resource } from '../router.js';
import { requestReader } from '../../../store/read/reader.js';
import type { AuthenticationKind, CredentialEnded } from './kind.js';
import { credentialsSchema, objectOf, passwordChecked, type LoginCheck } from './login.js';

export const tokenKind = (database: Database, login: LoginCheck, ended: CredentialEnded): AuthenticationKind => ({
  authenticator: tokenAuthentication,
  issue: (database, user) => createToken(database, user.id, user.credentialsVersion),
  mount(instance) {
    resource(instance, '/auth/token/', {
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
          if (!tokenShape.test(token)) throw authenticationFailed('Invalid token.');
          // Its user, if it still names one, has streams to check again once it is gone; a token that names none has no stream left either.
          const user = await tokenAuthentication.authenticate({ scheme: 'bearer', value: token }, request, requestReader(database)).catch(() => undefined);
          if (!(await revokeToken(database, token))) throw authenticationFailed('Invalid token.');
          if (user) ended(user.id);
          return reply.status(204).send();
        },
      },
    });
  },
});
