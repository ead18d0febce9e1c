/**
 * The permission stage: an action's checks, for the request and then, once its record is loaded,
 * for that record. A failing check gives 401 to an anonymous request (authenticate first) and 403
 * to an authenticated one.
 */
import type { Row } from '../../core/rows.js';
import { isPending, type MaybePromise } from '../../core/maybe-promise.js';
import { notAuthenticated, permissionDenied, type ApiError } from '../base/errors.js';
import type { Filter } from '../../core/conditions.js';
import { passesRecord, passesRequest, recordConditionsOf, type Check, type Permission, type PermissionContext, type RecordConditions } from '../declare/permission-classes.js';

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

/**
 * The records every one of `permissions` passes (checkObjectPermissions), as conditions a record
 * meets, all of them (`true`: every record); undefined where one of them cannot say.
 */
export async function recordConditions(permissions: readonly Permission[], context: PermissionContext): Promise<RecordConditions | undefined> {
  const all: Filter[] = [];
  for (const permission of permissions) {
    const conditions = await recordConditionsOf(permission, context);
    if (conditions === undefined || conditions === false) return conditions;
    if (conditions !== true) all.push(...conditions);
  }
  return all.length === 0 || all;
}
