/**
 * What the endpoints that hand out credentials share: each kind mounts its
 * own under `<prefix>/auth/` and checks `{username, password}` here.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JsonSchema } from '../../../core/fields.js';
import type { Database } from '../../../store/connection/database.js';
import { validationFailed, throwIfInvalid } from '../../base/errors.js';
import { RATE_LIMIT_HEADERS, withHeaders } from '../../docs/openapi.js';
import { parseJsonBody } from '../../stages/parsers.js';
import type { PasswordThrottle } from '../../stages/throttling.js';
import { checkCredentials, type AuthUser } from '../../base/auth-user.js';

export const credentialsSchema = {
  type: 'object',
  properties: { username: { type: 'string' }, password: { type: 'string', format: 'password' } },
  required: ['username', 'password'],
};

/** A 200 response schema: an object of the named strings, all present. */
export const objectOf = (properties: Readonly<Record<string, string>>) => ({
  description: 'OK',
  type: 'object',
  properties: Object.fromEntries(Object.entries(properties).map(([name, description]) => [name, { type: 'string', description }])),
  required: Object.keys(properties),
});

/** The responses of an endpoint that checks a password: each counts against THROTTLE_LOGIN, and says so in RateLimit-*. */
export const passwordChecked = (responses: Record<string, JsonSchema>): Record<string, JsonSchema> => withHeaders(responses, RATE_LIMIT_HEADERS);

const INVALID_CREDENTIALS = 'Unable to log in with the provided credentials.';

/** `{username, password}` from the body → the user, or 400 (the same whether or not the user exists). */
async function userFromCredentials(database: Database, body: unknown, counted: (account: string) => Promise<void>): Promise<AuthUser> {
  const { username, password } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const details: Record<string, string[]> = {};
  if (typeof username !== 'string' || username === '') details.username = ['This field is required.'];
  if (typeof password !== 'string' || password === '') details.password = ['This field is required.'];
  throwIfInvalid(details);
  const user = await checkCredentials(database, username, password, 'username', counted);
  if (!user) throw validationFailed({ non_field_errors: [INVALID_CREDENTIALS] }, INVALID_CREDENTIALS);
  return user;
}

/** What every endpoint that takes a password runs: the password throttle, then the credentials in the body. */
export type LoginCheck = (request: FastifyRequest, reply: FastifyReply) => Promise<AuthUser>;

/** The same check of credentials already read from a body (the admin's login form posts them as a form). */
export type CredentialCheck = (request: FastifyRequest, reply: FastifyReply, credentials: unknown) => Promise<AuthUser>;

export const credentialCheck =
  (database: Database, throttle: PasswordThrottle): CredentialCheck =>
  async (request, reply, credentials) => {
    await throttle(request, reply, undefined);
    return userFromCredentials(database, credentials, (account) => throttle.account(request, reply, account));
  };

export const loginCheck = (database: Database, throttle: PasswordThrottle): LoginCheck => {
  const check = credentialCheck(database, throttle);
  return async (request, reply) => check(request, reply, parseJsonBody(request));
};
