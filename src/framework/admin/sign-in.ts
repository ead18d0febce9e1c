/**
 * Django's admin login and logout: a form posting username, password and the CSRF field, checked
 * as the API's login checks them (its throttle included); only an active staff user gets a session,
 * in the cookie the API's session login sets.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../base/errors.js';
import { setSessionCookie } from '../routing/auth/session.js';
import { SESSION_COOKIE } from '../stages/authentication/session.js';
import { checkLoginCsrf, CsrfRefused, loginCsrfToken, sessionOf } from './access.js';
import { LoggedOutPage, LoginPage } from './pages/login.js';
import { CSRF_FAILED, refusedPage, sendPage, staffOnly, type AdminSite } from './site.js';

const WRONG = 'Please enter the correct username and password for a staff account. Note that both fields may be case-sensitive.';

/** Where to go after logging in: a path of the admin's own, never another site (an open redirect). */
function nextOf(site: AdminSite, next: string | null | undefined): string {
  return next && next.startsWith(site.root) && !next.startsWith('//') && !next.includes('\\') ? next : site.root;
}

function loginPage(site: AdminSite, request: FastifyRequest, reply: FastifyReply, status: number, shown: { next: string; username?: string; error?: string; signedInAs?: string }) {
  const frame = { root: site.root, title: 'Log in', error: shown.error };
  return sendPage(reply, status, LoginPage, { frame, csrfToken: loginCsrfToken(request, reply), next: shown.next, username: shown.username ?? '', signedInAs: shown.signedInAs });
}

export async function showLogin(site: AdminSite, request: FastifyRequest<{ Querystring: { next?: string } }>, reply: FastifyReply): Promise<FastifyReply> {
  const next = nextOf(site, request.query.next);
  const current = await sessionOf(request, site.sessions);
  if (current?.user.isStaff) return reply.redirect(next, 302);
  return loginPage(site, request, reply, 200, { next, signedInAs: current?.user.username });
}

export async function logIn(site: AdminSite, request: FastifyRequest, reply: FastifyReply, form: URLSearchParams): Promise<FastifyReply> {
  const next = nextOf(site, form.get('next'));
  const username = form.get('username') ?? '';
  try {
    checkLoginCsrf(request, form);
  } catch (error) {
    if (error instanceof CsrfRefused) return refusedPage(reply, { root: site.root, title: '' }, 403, CSRF_FAILED);
    throw error;
  }
  let user;
  try {
    user = await site.check(request, reply, { username, password: form.get('password') ?? '' });
  } catch (error) {
    // Wrong credentials (400) or the login throttle (429, with its Retry-After): the form again, with the reason.
    if (error instanceof ApiError && (error.status === 400 || error.status === 429)) {
      reply.headers(error.headers);
      return loginPage(site, request, reply, error.status === 429 ? 429 : 200, { next, username, error: error.status === 429 ? error.message : WRONG });
    }
    throw error;
  }
  if (!user.isStaff) return loginPage(site, request, reply, 200, { next, username, error: WRONG });
  const { session } = await site.sessions.start(user);
  setSessionCookie(request, reply, session, site.sessions.lifetime);
  return reply.redirect(next, 302);
}

export async function logOut(site: AdminSite, request: FastifyRequest, reply: FastifyReply, form: URLSearchParams): Promise<FastifyReply> {
  const staff = await staffOnly(site, request, reply, form);
  if (!staff) return reply;
  await site.sessions.end(staff.id);
  site.ended(staff.user.id);
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
  return sendPage(reply, 200, LoggedOutPage, { frame: { root: site.root, title: 'Logged out' } });
}
