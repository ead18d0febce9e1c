/**
 * What the admin asks before it shows a page or a button of users and groups: exactly what the API's
 * `/auth/` collections ask (declare/users/group-collections.ts), so no link leads to a refusal. Not
 * the four model permissions of other collections: the framework's collections name their own.
 */
import type { AuthUser } from '../../base/auth-user.js';
import { CHANGE_USERS, MANAGE_GROUPS, VIEW_USERS } from '../../declare/users/group-collections.js';

/** Groups, their grants, and anyone's memberships and own grants. */
export const managesGroups = async (user: AuthUser): Promise<boolean> => user.isSuperuser || (await user.hasPermission(MANAGE_GROUPS));

/** An account's password (its flags, a superuser's alone, are checked by the API: the form shows them to superusers only). */
export const changesUsers = async (user: AuthUser): Promise<boolean> => user.isSuperuser || (await user.hasPermission(CHANGE_USERS));

export const viewsUsers = async (user: AuthUser): Promise<boolean> => (await managesGroups(user)) || (await changesUsers(user)) || user.hasPermission(VIEW_USERS);
