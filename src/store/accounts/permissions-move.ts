/**
 * Users' own grants, moved by framework migration 0003 from `user_permissions` (keyed by user and
 * name) to `auth_user_permissions` (whose rows have ids, so that the API adds and removes each on its
 * own), while servers of the release before it, which read and write `user_permissions`, still serve
 * (a rolling deploy): 0003 expands, keeping `user_permissions` answering them with the same grants
 * both ways; 0004, a contract step run once none of them is left (`migrate --contract`), removes it.
 */
import type { SqlTypes } from '../dialects/capabilities.js';

export const permissionsMove = (types: SqlTypes) => types.movedRows('user_permissions', 'auth_user_permissions', ['user_id', 'name']);
