/**
 * The framework's groups and users as the admin reaches them: its pages under `<admin>/auth/`
 * (Django's `/admin/auth/group/`, apart from the app's own collections, whose names they may share:
 * the example service has a `users` of its own), read and written through the API's `/auth/`
 * collections under its first router, as the app's defaults style them (envelopes, trailing slash).
 */
import type { Collection } from '../../declare/collection.js';

export interface AuthAdmin {
  /** The API's `/auth` path (`/api/v1/auth`). */
  readonly api: string;
  /** The API's trailing slash: `/` or none. */
  readonly end: string;
  readonly groups: Collection;
  readonly users: Collection;
}

/** The two kinds of page, as Django's `auth` app registers them. */
export type AuthKind = 'groups' | 'users';

/** An API path under `/auth/`: `apiPath(auth, 'groups', '3', 'permissions')` → `/api/v1/auth/groups/3/permissions/`. */
export const apiPath = (auth: AuthAdmin, ...segments: readonly string[]): string => `${auth.api}/${segments.map(encodeURIComponent).join('/')}${auth.end}`;

/** An admin page of a kind: its change list, or a record's page (`change`, `delete`, `password`). */
export const pagePath = (root: string, kind: AuthKind, id?: string, page?: string): string => `${root}auth/${kind}/${id === undefined ? '' : `${encodeURIComponent(id)}/`}${page ? `${page}/` : ''}`;

/** Django's app label for them on the index and in breadcrumbs. */
export const AUTH_GROUP = 'Authentication and authorization';

/** The throttle bucket a page of a kind counts in: the API's for its `/auth/` collection (views.ts, bucketPrefix). */
export const authBucket = (kind: AuthKind): string => `auth/${kind}`;
