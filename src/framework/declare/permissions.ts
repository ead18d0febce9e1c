/**
 * The permission stage. A check answers for the request as a whole and, once
 * a record is loaded, for that record. A failing check gives 401 to an
 * anonymous request (authenticate first) and 403 to an authenticated one.
 */
import type { AuthUser } from '../base/auth-user.js';
import { notAuthenticated, permissionDenied, type ApiError } from '../base/errors.js';
import type { Row } from '../../core/rows.js';
import { isPending, type MaybePromise } from '../../core/maybe-promise.js';

export const actions = ['list', 'retrieve', 'create', 'update', 'partial_update', 'destroy'] as const;
export type Action = (typeof actions)[number];
export const readActions: ReadonlySet<Action> = new Set(['list', 'retrieve']);

export interface PermissionContext {
  readonly user: AuthUser | null;
  readonly action: Action;
}

export interface Permission {
  /** Shown in the API's documents. */
  readonly description: string;
  hasPermission(context: PermissionContext): boolean | Promise<boolean>;
  /** Checked for detail actions once the record is loaded; passes when absent. */
  hasObjectPermission?(context: PermissionContext, record: Row): boolean | Promise<boolean>;
}

export const allowAny: Permission = {
  description: 'anyone',
  hasPermission: () => true,
};

export const isAuthenticated: Permission = {
  description: 'an authenticated user',
  hasPermission: ({ user }) => user !== null,
};

export const hasPermission = (name: string): Permission => ({
  description: `the permission "${name}"`,
  // A superuser holds every permission (AuthUser.hasPermission): answered at once, with no promise to wait for.
  hasPermission: ({ user }) => user !== null && (user.isSuperuser || user.hasPermission(name)),
});

/** The record's `field` names the requesting user (their own record, an article they wrote). */
export const isOwner = (field: string): Permission => ({
  description: `the user named by "${field}"`,
  hasPermission: ({ user }) => user !== null,
  hasObjectPermission: ({ user }, record) => user !== null && Number(record[field]) === user.id,
});

/** One permission's answer to `context`, for the request or (given `record`) for the record; at module level, so a check builds no closure per request. */
type Check<R> = (permission: Permission, context: PermissionContext, record: R) => MaybePromise<boolean>;

/**
 * Whether every one of `permissions` passes `check`, in order, stopping at the first that fails.
 * Synchronous while the answers are: most checks (authenticated, owner) answer at once, and
 * awaiting each would cost every request a promise per check; the first answer that is a promise
 * is awaited, and the rest after it.
 */
function every<R>(permissions: readonly Permission[], check: Check<R>, context: PermissionContext, record: R, from = 0): MaybePromise<boolean> {
  for (let index = from; index < permissions.length; index++) {
    const passed = check(permissions[index]!, context, record);
    if (isPending(passed)) return Promise.resolve(passed).then((ok) => ok && every(permissions, check, context, record, index + 1));
    if (!passed) return false;
  }
  return true;
}

/** Whether any one of `permissions` passes `check`, in order, stopping at the first that does; synchronous while the answers are (see `every`). */
function some<R>(permissions: readonly Permission[], check: Check<R>, context: PermissionContext, record: R, from = 0): MaybePromise<boolean> {
  for (let index = from; index < permissions.length; index++) {
    const passed = check(permissions[index]!, context, record);
    if (isPending(passed)) return Promise.resolve(passed).then((ok) => ok || some(permissions, check, context, record, index + 1));
    if (passed) return true;
  }
  return false;
}

const passesRequest: Check<unknown> = (permission, context) => permission.hasPermission(context);

const passesRecord: Check<Row> = (permission, context, record) => permission.hasObjectPermission?.(context, record) ?? true;

/** The request's check, then the record's: at once when the first is not a promise. */
const passesBoth: Check<Row> = (permission, context, record) => {
  const passed = permission.hasPermission(context);
  if (isPending(passed)) return Promise.resolve(passed).then((ok) => ok && passesRecord(permission, context, record));
  return passed && passesRecord(permission, context, record);
};

/** Passes when any one of `permissions` passes, for the request and then for the record. */
export const anyOf = (...permissions: Permission[]): Permission => ({
  description: permissions.map((permission) => permission.description).join(' or '),
  hasPermission: (context) => some(permissions, passesRequest, context, undefined),
  hasObjectPermission: (context, record) => some(permissions, passesBoth, context, record),
});

const denial = (context: PermissionContext): ApiError => (context.user ? permissionDenied() : notAuthenticated());

/**
 * Nothing when the checks passed at once, a promise when one answers later (rejected with 401 or 403
 * when they fail), or 401 or 403 thrown at once: callers await only what is pending.
 */
function allowedWhen(passed: MaybePromise<boolean>, context: PermissionContext): MaybePromise<void> {
  if (isPending(passed)) {
    return Promise.resolve(passed).then((ok) => {
      if (!ok) throw denial(context);
    });
  }
  if (!passed) throw denial(context);
  return undefined;
}

export function checkPermissions(permissions: readonly Permission[], context: PermissionContext): MaybePromise<void> {
  return allowedWhen(every(permissions, passesRequest, context, undefined), context);
}

export function checkObjectPermissions(permissions: readonly Permission[], context: PermissionContext, record: Row): MaybePromise<void> {
  return allowedWhen(every(permissions, passesRecord, context, record), context);
}
