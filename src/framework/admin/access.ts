/**
 * Who may use the admin: an active staff user with a session (the API's own sessions, so one
 * login serves both). Every POST carries the session's CSRF token in a hidden field, checked by
 * the session's own check; the login form, posted before any session exists, carries a token
 * kept in a signed cookie of its own (double submit, as Django's csrftoken cookie).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../base/errors.js';
import type { AuthUser } from '../base/auth-user.js';
import { SESSION_COOKIE, type SessionCredentials } from '../stages/authentication/session.js';
import { constantTimeEqual, newCredential } from '../stages/authentication/opaque-credentials.js';

/** The hidden field of every admin form (Django's name). */
export const CSRF_FIELD = 'csrfmiddlewaretoken';
/** The header a script's post may carry the token in instead (Django's CSRF_HEADER_NAME, `X-CSRFToken`). */
const CSRF_HEADER = 'x-csrftoken';

/** The token a post's `X-CSRFToken` header carries, if it carries one. */
export function csrfHeader(request: FastifyRequest): string | undefined {
  const sent = request.headers[CSRF_HEADER];
  return typeof sent === 'string' && sent !== '' ? sent : undefined;
}
const LOGIN_CSRF_COOKIE = 'restfold_admin_csrf';
const MESSAGE_COOKIE = 'restfold_admin_message';

export interface StaffSession {
  readonly id: string;
  readonly user: AuthUser;
  readonly csrfToken: string;
}

/** Thrown for a POST whose CSRF token is missing or wrong: Django's 403. */
export class CsrfRefused extends Error {}

/**
 * The request's session and user, or undefined without a valid one. `form`: a POST's fields,
 * whose hidden token, or where it has none the `X-CSRFToken` header's (as Django reads them), the
 * session's check compares (it reads the header the API's clients send).
 */
export async function sessionOf(request: FastifyRequest, sessions: SessionCredentials, form?: URLSearchParams): Promise<StaffSession | undefined> {
  const cookie = request.cookies[SESSION_COOKIE];
  if (!cookie) {
    if (form) throw new CsrfRefused();
    return undefined;
  }
  if (form) request.headers['x-csrf-token'] = form.get(CSRF_FIELD) || csrfHeader(request) || '';
  try {
    const current = await sessions.current({ scheme: 'cookie', value: cookie }, request);
    return current && { ...current, csrfToken: request.csrfToken! };
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) throw new CsrfRefused();
    if (error instanceof ApiError && error.status === 401) return undefined;
    throw error;
  }
}

/** The login form's token: the one in its cookie, else a new one set in it. */
export function loginCsrfToken(request: FastifyRequest, reply: FastifyReply): string {
  const kept = request.cookies[LOGIN_CSRF_COOKIE];
  const unsigned = kept ? request.unsignCookie(kept) : undefined;
  if (unsigned?.valid && unsigned.value) return unsigned.value;
  const token = newCredential('');
  reply.setCookie(LOGIN_CSRF_COOKIE, token, { signed: true, httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https', path: '/' });
  return token;
}

export function checkLoginCsrf(request: FastifyRequest, form: URLSearchParams): void {
  const kept = request.cookies[LOGIN_CSRF_COOKIE];
  const unsigned = kept ? request.unsignCookie(kept) : undefined;
  const sent = form.get(CSRF_FIELD);
  if (!unsigned?.valid || !unsigned.value || !sent || !constantTimeEqual(sent, unsigned.value)) throw new CsrfRefused();
}

/** A message for the next page (Django's messages framework), in a signed cookie read once. */
export function flash(request: FastifyRequest, reply: FastifyReply, message: string): void {
  reply.setCookie(MESSAGE_COOKIE, message, { signed: true, httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https', path: '/' });
}

export function takeFlash(request: FastifyRequest, reply: FastifyReply): string | undefined {
  const kept = request.cookies[MESSAGE_COOKIE];
  if (!kept) return undefined;
  reply.clearCookie(MESSAGE_COOKIE, { path: '/' });
  const unsigned = request.unsignCookie(kept);
  return unsigned.valid && unsigned.value ? unsigned.value : undefined;
}
