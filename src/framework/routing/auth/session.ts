/**
 * The session endpoints: `POST <prefix>/auth/login/` starts one (a signed,
 * HttpOnly, SameSite=Lax cookie, and the id in the body for Bearer use);
 * `POST <prefix>/auth/logout/` ends it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { notAuthenticated, validationFailed } from '../../base/errors.js';
import { ANONYMOUS, errorResponses } from '../../docs/openapi.js';
import { credentialOf } from '../../stages/authentication/index.js';
import { SESSION_COOKIE, type SessionCredentials } from '../../stages/authentication/session.js';
import { resource } from '../router.js';
import type { AuthenticationKind, CredentialEnded } from './kind.js';
import { credentialsSchema, objectOf, passwordChecked, type LoginCheck } from './login.js';

/** The session's cookie: signed, HttpOnly, SameSite=Lax, Secure over HTTPS (the API's login and the admin's set it alike). */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, session: string, lifetime: number): void {
  reply.setCookie(SESSION_COOKIE, session, {
    signed: true,
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https',
    path: '/',
    maxAge: lifetime,
  });
}

export function sessionKind(sessions: SessionCredentials, checkLogin: LoginCheck, ended: CredentialEnded): AuthenticationKind {
  async function login(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const user = await checkLogin(request, reply);
    request.user = user;
    const { session, csrfToken } = await sessions.start(user);
    setSessionCookie(request, reply, session, sessions.lifetime);
    return reply.send({ session, csrf_token: csrfToken });
  }

  async function logout(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const credential = credentialOf(request, SESSION_COOKIE);
    if (!credential) throw notAuthenticated();
    const current = await sessions.current(credential, request);
    if (!current) {
      throw validationFailed({ non_field_errors: ['Only a session logs out; revoke an API token with DELETE /auth/token/.'] });
    }
    request.user = current.user;
    await sessions.end(current.id);
    ended(current.user.id);
    return reply.clearCookie(SESSION_COOKIE, { path: '/' }).status(204).send();
  }

  return {
    authenticator: sessions.authenticator,
    mount(instance) {
      resource(instance, '/auth/login/', {
        POST: {
          schema: {
            tags: ['auth'],
            summary: 'Log in: start a session (cookie and Bearer credential)',
            operationId: 'sessionLogin',
            ...ANONYMOUS,
            body: credentialsSchema,
            response: passwordChecked({
              200: objectOf({ session: 'The session id, usable as Bearer', csrf_token: 'Send as X-CSRF-Token with the cookie on unsafe methods' }),
              ...errorResponses([400, 413, 415, 429, 503]),
            }),
          },
          handler: login,
        },
      });
      resource(instance, '/auth/logout/', {
        POST: {
          schema: {
            tags: ['auth'],
            summary: 'Log out: end the session',
            operationId: 'sessionLogout',
            // The session to end: in its cookie, or its id in the Authorization header.
            security: [{ session: [] }, { sessionId: [] }],
            headers: { type: 'object', properties: { 'X-CSRF-Token': { type: 'string', description: 'Needed with the cookie: the csrf_token login answered.' } } },
            response: { 204: { description: 'Logged out', type: 'null' }, ...errorResponses([400, 401, 403, 503]) },
          },
          handler: logout,
        },
      });
    },
  };
}
