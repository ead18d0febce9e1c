/**
 * What every admin page shares: the mounted collections it may show, the staff check and Django's
 * answers to its failures (a redirect to the login page, a 403 page), and rendering a page.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { h, type FunctionComponent } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { Collection } from '../declare/collection.js';
import { readPermissions, type AuthUser } from '../base/auth-user.js';
import type { SessionCredentials } from '../stages/authentication/session.js';
import type { Throttle } from '../stages/throttling.js';
import { ApiError } from '../base/errors.js';
import type { CredentialCheck } from '../routing/auth/login.js';
import type { CredentialEnded } from '../routing/auth/kind.js';
import type { LogEntryRow } from '../../store/accounts/log-entries.js';
import { CsrfRefused, sessionOf, takeFlash, type StaffSession } from './access.js';
import { Layout, type Frame } from './pages/layout.js';
import type { ModelAdminOptions } from './declare.js';
import type { AuthAdmin } from './auth/auth-paths.js';

/** A collection as the admin shows it: the API paths it reads and writes it through, and its group on the index. */
export interface AdminCollection {
  readonly collection: Collection;
  readonly group: string;
  /** The API's list path (`/api/v1/articles/`). */
  readonly list: string;
  /** The API's path of a record. */
  detail(id: string): string;
  /** The app's declared options (docs/admin.md, Declaring the admin); `{}` for the defaults. */
  readonly options: ModelAdminOptions;
  /** The nested collections edited inline on a record's change form, as the API serves them. */
  readonly inlines: readonly Collection[];
  /** The API's path of a detail custom action on a record. */
  action(id: string, name: string): string;
  /** The API's path of a nested collection's list under a record. */
  nestedList(parentId: string, child: Collection): string;
  /** The API's path of a nested record under a record. */
  nestedDetail(parentId: string, child: Collection, id: string): string;
}

export interface AdminSite {
  /** The admin's root path, ending in `/`. */
  readonly root: string;
  readonly collections: readonly AdminCollection[];
  /** The framework's users and groups, with their pages under `auth/` (auth/routes.ts). */
  readonly auth: AuthAdmin;
  readonly sessions: SessionCredentials;
  readonly check: CredentialCheck;
  readonly ended: CredentialEnded;
  /** The API's throttle, which counts each page once (its in-process calls are not counted again). */
  readonly throttle: Throttle;
  /** A form with files: its bytes in all (FILES_MAX_BODY_BYTES), past which one refused unread is dropped (its connection closed). */
  readonly uploads: { readonly maxBodyBytes: number };
  /** The record's history, newest first (the write unit's log: framework/write/change-log.ts). */
  history(collection: Collection, id: string): Promise<readonly LogEntryRow[]>;
}

/** Django's model permissions, by the admin's verb. */
export type ModelPermission = 'view' | 'add' | 'change' | 'delete';

export async function may(user: AuthUser, collection: Collection, permission: ModelPermission): Promise<boolean> {
  if (user.isSuperuser) return true;
  // Django: change implies view.
  if (permission === 'view' && (await user.hasPermission(`${collection.name}.change`))) return true;
  return user.hasPermission(`${collection.name}.${permission}`);
}

export function sendPage<Props extends object>(reply: FastifyReply, status: number, page: FunctionComponent<Props>, props: Props): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .send(`<!doctype html>\n${renderToString(h(page, props))}`);
}

const REFUSED_TITLES = { 400: 'Bad request', 403: '403 Forbidden', 404: 'Not found', 429: 'Too many requests' } as const;

export function refusedPage(reply: FastifyReply, frame: Frame, status: keyof typeof REFUSED_TITLES, message: string): FastifyReply {
  return sendPage(reply, status, Layout, { frame: { ...frame, title: REFUSED_TITLES[status] }, children: message });
}

export const CSRF_FAILED = 'CSRF verification failed. Request aborted.';

/** The frame of a staff user's page. */
export function staffFrame(site: AdminSite, request: FastifyRequest, reply: FastifyReply, staff: StaffSession, title: string, crumbs: Frame['crumbs']): Frame {
  return { root: site.root, title, crumbs, staff: { username: staff.user.username, csrfToken: staff.csrfToken }, message: takeFlash(request, reply) };
}

/** The pages' staff sessions: a page that shows another (a refused inline shows its change form) is checked and counted once. */
const staffOf = new WeakMap<FastifyRequest, StaffSession>();

/**
 * The staff session of a page's request, else undefined with the answer sent: a redirect to the
 * login page (no session, or not staff: Django's), 403 for a POST with a bad CSRF token, or 429
 * over the user's rate. The page is counted once in the throttle, in `bucket`'s window as the API
 * counts a request to that collection (the default window without one), and its user is the one
 * its in-process calls to the API are made by (api.ts): they are neither authenticated nor counted again.
 */
export async function staffOnly(site: AdminSite, request: FastifyRequest, reply: FastifyReply, form?: URLSearchParams, bucket = ''): Promise<StaffSession | undefined> {
  const checked = staffOf.get(request);
  if (checked) return checked;
  let staff: StaffSession | undefined;
  try {
    staff = await sessionOf(request, site.sessions, form);
  } catch (error) {
    if (!(error instanceof CsrfRefused)) throw error;
    refusedPage(reply, { root: site.root, title: '' }, 403, CSRF_FAILED);
    return undefined;
  }
  if (staff?.user.isStaff) {
    request.user = staff.user;
    try {
      await site.throttle.check(request, reply, staff.user, bucket);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 429) throw error;
      reply.headers(error.headers);
      refusedPage(reply, { root: site.root, title: '' }, 429, error.message);
      return undefined;
    }
    // Every page asks them; a save asks them again in its hooks, inside its transaction.
    await readPermissions(staff.user);
    staffOf.set(request, staff);
    return staff;
  }
  const next = request.method === 'GET' ? request.url : site.root;
  await reply.redirect(`${site.root}login/?next=${encodeURIComponent(next)}`, 302);
  return undefined;
}
