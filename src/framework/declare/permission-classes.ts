/**
 * Permissions as an app declares them (DRF's permission classes): each answers for the request as
 * a whole and, once a record is loaded, for that record; the permission stage
 * (stages/permissions.ts) runs them.
 */
import type { AuthUser } from '../base/auth-user.js';
import type { Filter } from '../../core/conditions.js';
import type { Row } from '../../core/rows.js';
import { isPending, type MaybePromise } from '../../core/maybe-promise.js';

export const actions = ['list', 'retrieve', 'create', 'update', 'partial_update', 'destroy'] as const;
/** A built-in action of a collection. */
export type Action = (typeof actions)[number];
/** The actions that read: `list` and `retrieve`. */
export const readActions: ReadonlySet<Action> = new Set(['list', 'retrieve']);

/** What a permission is asked with: the user (null when anonymous), the action and the version. */
export interface PermissionContext {
  readonly user: AuthUser | null;
  readonly action: Action;
  /** The API version the request asked for (the app's `versions`, DRF's `request.version`); undefined when it declares none. */
  readonly version?: string;
}

/**
 * A permission class (DRF's): `hasPermission` per request, `hasObjectPermission` per record. A failing check
 * is 401 for an anonymous request, 403 for a signed-in one (docs/guides/permissions-and-scopes.md).
 */
export interface Permission {
  /** Shown in the API's documents. */
  readonly description: string;
  hasPermission(context: PermissionContext): boolean | Promise<boolean>;
  /** Checked for detail actions once the record is loaded; passes when absent. */
  hasObjectPermission?(context: PermissionContext, record: Row): boolean | Promise<boolean>;
  /**
   * The records `hasObjectPermission` passes for `context`, said as conditions (it must agree with
   * it): then a delete carries them in its statement instead of reading the record first, and
   * reads it only when the statement deletes nothing (to answer 403 rather than 404). Undefined,
   * or absent, where they cannot be said.
   */
  recordConditions?(context: PermissionContext): MaybePromise<RecordConditions | undefined>;
}

/** The records a check passes, as conditions a record meets (every one of them): `true` every record, `false` none. */
export type RecordConditions = readonly Filter[] | boolean;

/** The records `permission` passes once its request check has: every one where it has no object check. */
export const recordConditionsOf = (permission: Permission, context: PermissionContext): MaybePromise<RecordConditions | undefined> =>
  permission.hasObjectPermission ? permission.recordConditions?.(context) : true;

/** The built-in permissions that answer from the request and record alone, never reading the database: `anyOf` asks them first. */
const readingNothing = new WeakSet<Permission>();

/** `permission`, known to read nothing. */
function readsNothing(permission: Permission): Permission {
  readingNothing.add(permission);
  return permission;
}

/** Anyone, signed in or not (DRF's `AllowAny`); a credential sent is still checked (optional authentication). */
export const allowAny: Permission = readsNothing({
  description: 'anyone',
  hasPermission: () => true,
});

/** Signed-in users only (DRF's `IsAuthenticated`): 401 for an anonymous request. */
export const isAuthenticated: Permission = readsNothing({
  description: 'an authenticated user',
  hasPermission: ({ user }) => user !== null,
});

/**
 * A named permission (`hasPermission('library.edit')`), granted with `restfold createuser --permission` or
 * `restfold permissions add`; superusers hold every one.
 */
export const hasPermission = (name: string): Permission => ({
  description: `the permission "${name}"`,
  // A superuser holds every permission (AuthUser.hasPermission): answered at once, with no promise to wait for.
  hasPermission: ({ user }) => user !== null && (user.isSuperuser || user.hasPermission(name)),
});

/** The record's `field` names the requesting user (their own record, an article they wrote). */
export const isOwner = (field: string): Permission =>
  readsNothing({
    description: `the user named by "${field}"`,
    hasPermission: ({ user }) => user !== null,
    hasObjectPermission: ({ user }, record) => user !== null && Number(record[field]) === user.id,
    recordConditions: ({ user }) => user !== null && [{ field, lookup: 'exact', value: user.id }],
  });

/** One permission's answer to `context`: for the request, or (given `record`) for the record. */
export type Check<R> = (permission: Permission, context: PermissionContext, record: R) => MaybePromise<boolean>;

/** Whether any one of `permissions` passes `check`, in order, stopping at the first that does; at once while the answers are. */
function some<R>(permissions: readonly Permission[], check: Check<R>, context: PermissionContext, record: R, from = 0): MaybePromise<boolean> {
  for (let index = from; index < permissions.length; index++) {
    const passed = check(permissions[index]!, context, record);
    if (isPending(passed)) return Promise.resolve(passed).then((ok) => ok || some(permissions, check, context, record, index + 1));
    if (passed) return true;
  }
  return false;
}

export const passesRequest: Check<unknown> = (permission, context) => permission.hasPermission(context);

export const passesRecord: Check<Row> = (permission, context, record) => permission.hasObjectPermission?.(context, record) ?? true;

/** The request's check, then the record's: at once when the first is not a promise. */
const passesBoth: Check<Row> = (permission, context, record) => {
  const passed = permission.hasPermission(context);
  if (isPending(passed)) return Promise.resolve(passed).then((ok) => ok && passesRecord(permission, context, record));
  return passed && passesRecord(permission, context, record);
};

/**
 * The records one of `permissions` passes, for the request and then for the record: every record
 * where one passes them all, the one's conditions where only one has some; not said where several
 * have conditions (their union is no list of conditions).
 */
async function eitherConditions(permissions: readonly Permission[], context: PermissionContext): Promise<RecordConditions | undefined> {
  let said: RecordConditions = false;
  for (const permission of permissions) {
    if (!(await permission.hasPermission(context))) continue;
    const conditions = await recordConditionsOf(permission, context);
    if (conditions === undefined || conditions === true) return conditions;
    if (conditions === false) continue;
    if (said !== false) return undefined;
    said = conditions;
  }
  return said;
}

/**
 * Passes when any one of `permissions` passes, for the request and then for the record. The
 * built-ins that never read the database (`allowAny`, `isAuthenticated`, `isOwner`) are asked
 * first, the others in the order given: a `hasPermission` may read the user's permissions, which
 * an owner passing `isOwner` spares. The answer is the same in any order.
 */
export const anyOf = (...permissions: Permission[]): Permission => {
  const first = (permission: Permission) => readingNothing.has(permission);
  const asked = [...permissions.filter(first), ...permissions.filter((permission) => !first(permission))];
  return {
    description: permissions.map((permission) => permission.description).join(' or '),
    hasPermission: (context) => some(asked, passesRequest, context, undefined),
    hasObjectPermission: (context, record) => some(asked, passesBoth, context, record),
    recordConditions: (context) => eitherConditions(asked, context),
  };
};

/** The four model permissions' suffixes (Django's convention: `<collection>.view`, `.add`, `.change`, `.delete`), by action. */
const MODEL_PERMISSIONS: Readonly<Record<Action, string>> = {
  list: 'view',
  retrieve: 'view',
  create: 'add',
  update: 'change',
  partial_update: 'change',
  destroy: 'delete',
};

/** A collection's model permission names: `tags` → tags.view, tags.add, tags.change, tags.delete. */
export const modelPermissionNames = (collection: string): string[] => [...new Set(Object.values(MODEL_PERMISSIONS))].map((suffix) => `${collection}.${suffix}`);

/**
 * DRF's DjangoModelPermissions, as a collection's per-action `permissions`: creating needs
 * `<collection>.add`, updating `.change`, deleting `.delete` (held by the user or one of their groups;
 * superusers hold every one); reading needs an authenticated user, or with `view: true`
 * `<collection>.view` too (DRF's common subclass, and what the admin asks). An app opts in:
 * `permissions: modelPermissions('tags')`, and may spread it to change one action.
 */
export function modelPermissions(collection: string, { view = false }: { view?: boolean } = {}): Readonly<Record<Action, readonly Permission[]>> {
  const checks = {} as Record<Action, readonly Permission[]>;
  for (const action of actions) checks[action] = readActions.has(action) && !view ? [isAuthenticated] : [hasPermission(`${collection}.${MODEL_PERMISSIONS[action]}`)];
  return checks;
}
