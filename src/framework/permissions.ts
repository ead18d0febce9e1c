/**
 * The permission stage. A check answers for the request as a whole and, once
 * a record is loaded, for that record. A failing check gives 401 to an
 * anonymous request (authenticate first) and 403 to an authenticated one.
 */
import type { AuthUser } from './authentication/index.js';
import { notAuthenticated, permissionDenied } from './errors.js';
import type { Row } from '../core/rows.js';

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

/** Passes when any one of `permissions` passes, for the request and then for the record. */
export const anyOf = (...permissions: Permission[]): Permission => ({
  description: permissions.map((permission) => permission.description).join(' or '),
  async hasPermission(context) {
    for (const permission of permissions) if (await permission.hasPermission(context)) return true;
    return false;
  },
  async hasObjectPermission(context, record) {
    for (const permission of permissions) {
      if (
        (await permission.hasPermission(context)) &&
        (await (permission.hasObjectPermission?.(context, record) ?? true))
      ) {
        return true;
      }
    }
    return false;
  },
});

const deny = (context: PermissionContext): never => {
  throw context.user ? permissionDenied() : notAuthenticated();
};

export async function checkPermissions(permissions: readonly Permission[], context: PermissionContext): Promise<void> {
  for (const permission of permissions) {
    if (!(await permission.hasPermission(context))) deny(context);
  }
}

export async function checkObjectPermissions(
  permissions: readonly Permission[],
  context: PermissionContext,
  record: Row,
): Promise<void> {
  for (const permission of permissions) {
    if (permission.hasObjectPermission && !(await permission.hasObjectPermission(context, record))) deny(context);
  }
}
