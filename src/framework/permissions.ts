/**
 * The permission stage. A check answers for the request as a whole and, once
 * a record is loaded, for that record. A failing check gives 401 to an
 * anonymous request (authenticate first) and 403 to an authenticated one.
 */
import type { AuthUser } from './authentication/index.js';
import { notAuthenticated, permissionDenied, type ApiError } from './errors.js';
import type { Row } from '../core/rows.js';
import { isPending, type MaybePromise } from '../core/maybe-promise.js';

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
  hasPermission: ({ user }) => user?.hasPermission(name) ?? false,
});

/** The record's `field` names the requesting user (their own record, an article they wrote). */
export const isOwner = (field: string): Permission => ({
  description: `the user named by "${field}"`,
  hasPermission: ({ user }) => user !== null,
  hasObjectPermission: ({ user }, record) => user !== null && Number(record[field]) === user.id,
});

/**
 * Whether every one of `checks` passes, in order, stopping at the first that fails. Synchronous
 * while the answers are: most checks (authenticated, owner) answer at once, and awaiting each would
 * cost every request a promise per check; the first answer that is a promise is awaited, and the
 * rest after it.
 */
function every<T>(items: readonly T[], check: (item: T) => MaybePromise<boolean>, from = 0): MaybePromise<boolean> {
  for (let index = from; index < items.length; index++) {
    const passed = check(items[index]!);
    if (isPending(passed)) return Promise.resolve(passed).then((ok) => ok && every(items, check, index + 1));
    if (!passed) return false;
  }
  return true;
}

/** Whether any one of `checks` passes, in order, stopping at the first that does; synchronous while the answers are (see `every`). */
function some<T>(items: readonly T[], check: (item: T) => MaybePromise<boolean>, from = 0): MaybePromise<boolean> {
  for (let index = from; index < items.length; index++) {
    const passed = check(items[index]!);
    if (isPending(passed)) return Promise.resolve(passed).then((ok) => ok || some(items, check, index + 1));
    if (passed) return true;
  }
  return false;
}

/** `then` on the answer: at once when it is not a promise. */
const whenAnswered = (answer: MaybePromise<boolean>, then: (passed: boolean) => MaybePromise<boolean>): MaybePromise<boolean> =>
  isPending(answer) ? Promise.resolve(answer).then(then) : then(answer);

/** Passes when any one of `permissions` passes, for the request and then for the record. */
export const anyOf = (...permissions: Permission[]): Permission => ({
  description: permissions.map((permission) => permission.description).join(' or '),
  hasPermission: (context) => some(permissions, (permission) => permission.hasPermission(context)),
  hasObjectPermission: (context, record) =>
    some(permissions, (permission) =>
      whenAnswered(permission.hasPermission(context), (passed) => passed && (permission.hasObjectPermission?.(context, record) ?? true)),
    ),
});

const denial = (context: PermissionContext): ApiError => (context.user ? permissionDenied() : notAuthenticated());

const RESOLVED: Promise<void> = Promise.resolve();

/** Resolves when the checks passed, else rejects with 401 or 403: no promise made for checks that answered at once. */
function allowedWhen(passed: MaybePromise<boolean>, context: PermissionContext): Promise<void> {
  if (isPending(passed)) {
    return Promise.resolve(passed).then((ok) => {
      if (!ok) throw denial(context);
    });
  }
  return passed ? RESOLVED : Promise.reject(denial(context));
}

export function checkPermissions(permissions: readonly Permission[], context: PermissionContext): Promise<void> {
  return allowedWhen(every(permissions, (permission) => permission.hasPermission(context)), context);
}

export function checkObjectPermissions(permissions: readonly Permission[], context: PermissionContext, record: Row): Promise<void> {
  return allowedWhen(every(permissions, (permission) => permission.hasObjectPermission?.(context, record) ?? true), context);
}
