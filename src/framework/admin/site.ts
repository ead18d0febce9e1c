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

export function refusedPage(reply: FastifyReply, frame: Frame, status: 403 | 404, message: string): FastifyReply {
  return sendPage(reply, status, Layout, { frame: { ...frame, title: status === 403 ? '403 Forbidden' : 'Not found' }, children: message });
}

export const CSRF_FAILED = 'CSRF verification failed. Request aborted.';

/** The frame of a staff user's page. */
export function staffFrame(site: AdminSite, request: FastifyRequest, reply: FastifyReply, staff: StaffSession, title: string, crumbs: Frame['crumbs']): Frame {
  return { root: site.root, title, crumbs, staff: { username: staff.user.username, csrfToken: staff.csrfToken }, message: takeFlash(request, reply) };
}

/**
 * The staff session of a page's request, else undefined with the answer sent: a redirect to the
 * login page (no session, or not staff: Django's), or 403 for a POST with a bad CSRF token.
 */
export async function staffOnly(site: AdminSite, request: FastifyRequest, reply: FastifyReply, form?: URLSearchParams): Promise<StaffSession | undefined> {
  let staff: StaffSession | undefined;
  try {
    staff = await sessionOf(request, site.sessions, form);
  } catch (error) {
    if (!(error instanceof CsrfRefused)) throw error;
    refusedPage(reply, { root: site.root, title: '' }, 403, CSRF_FAILED);
    return undefined;
  }
  if (staff?.user.isStaff) {
    // Every page asks them; a save asks them again in its hooks, inside its transaction.
    await readPermissions(staff.user);
    return staff;
  }
  const next = request.method === 'GET' ? request.url : site.root;
  await reply.redirect(`${site.root}login/?next=${encodeURIComponent(next)}`, 302);
  return undefined;
}
