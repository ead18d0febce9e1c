import { describe, expect, it, vi } from 'vitest';
import { allowAny, anyOf, hasPermission, isAuthenticated, isOwner, readActions, type Action, type Permission } from '../../src/framework/declare/permission-classes.js';
import { checkObjectPermissions, checkPermissions } from '../../src/framework/stages/permissions.js';
import { ApiError } from '../../src/framework/base/errors.js';
import type { AuthUser } from '../../src/framework/base/auth-user.js';
import type { MaybePromise } from '../../src/core/maybe-promise.js';
import type { Row } from '../../src/core/rows.js';

/** A signed-in user holding `permissions` (looked up asynchronously, as a real user's are). */
function user(id: number, permissions: readonly string[] = [], isSuperuser = false): AuthUser {
  return {
    id,
    username: `user${id}`,
    isSuperuser,
    isStaff: false,
    credentialsVersion: 1,
    credentialId: undefined,
    hasPermission: vi.fn(async (name: string) => isSuperuser || permissions.includes(name)),
  };
}

const anonymous = null;

/** How a check ended: passed or refused (by its error code), at once or through a promise. */
async function outcome(check: () => MaybePromise<void>): Promise<string> {
  let result: MaybePromise<void>;
  try {
    result = check();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return `${(error as ApiError).code} at once`;
  }
  if (result === undefined) return 'passed at once';
  try {
    await result;
    return 'passed later';
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return `${(error as ApiError).code} later`;
  }
}

const request = (permissions: readonly Permission[], who: AuthUser | null, action: Action = 'list') =>
  outcome(() => checkPermissions(permissions, { user: who, action }));

const object = (permissions: readonly Permission[], who: AuthUser | null, record: Row, action: Action = 'retrieve') =>
  outcome(() => checkObjectPermissions(permissions, { user: who, action }, record));

describe('checkPermissions', () => {
  it('passes when no permission is required, or allowAny', async () => {
    expect(await request([], anonymous)).toBe('passed at once');
    expect(await request([allowAny], anonymous)).toBe('passed at once');
  });

  it('refuses an anonymous request with 401 and a Bearer challenge, an authenticated one with 403', () => {
    const denying: Permission = { description: 'nobody', hasPermission: () => false };
    let thrown: unknown;
    try {
      void checkPermissions([denying], { user: anonymous, action: 'list' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ status: 401, code: 'not_authenticated', headers: { 'WWW-Authenticate': 'Bearer' } });
    expect(() => checkPermissions([denying], { user: user(1), action: 'list' })).toThrow(
      expect.objectContaining({ status: 403, code: 'permission_denied', message: 'You do not have permission to perform this action.' }),
    );
  });

  it('isAuthenticated: passes any user, refuses anonymous requests', async () => {
    expect(await request([isAuthenticated], user(1))).toBe('passed at once');
    expect(await request([isAuthenticated], anonymous)).toBe('not_authenticated at once');
  });

  it("hasPermission: asks the user's permissions, a superuser holding them all without asking", async () => {
    const editor = user(1, ['books.add']);
    expect(await request([hasPermission('books.add')], editor)).toBe('passed later');
    expect(editor.hasPermission).toHaveBeenCalledWith('books.add');
    expect(await request([hasPermission('books.delete')], editor)).toBe('permission_denied later');
    expect(await request([hasPermission('books.add')], anonymous)).toBe('not_authenticated at once');
    const admin = user(2, [], true);
    expect(await request([hasPermission('books.delete')], admin)).toBe('passed at once');
    expect(admin.hasPermission).not.toHaveBeenCalled();
  });

  it('requires every permission, in order, stopping at the first that fails', async () => {
    const after = vi.fn(() => true);
    const later: Permission = { description: 'later', hasPermission: after };
    expect(await request([isAuthenticated, later], anonymous)).toBe('not_authenticated at once');
    expect(after).not.toHaveBeenCalled();
    expect(await request([isAuthenticated, later], user(1))).toBe('passed at once');
    expect(after).toHaveBeenCalledTimes(1);
  });

  it('awaits an asynchronous permission, and checks the ones after it', async () => {
    const slowYes: Permission = { description: 'yes, later', hasPermission: async () => true };
    const slowNo: Permission = { description: 'no, later', hasPermission: async () => false };
    expect(await request([slowYes, isAuthenticated], user(1))).toBe('passed later');
    expect(await request([slowYes, isAuthenticated], anonymous)).toBe('not_authenticated later');
    expect(await request([slowNo], user(1))).toBe('permission_denied later');
    expect(await request([slowNo], anonymous)).toBe('not_authenticated later');
  });

  it('gives a permission the action it is checked for', async () => {
    const readOnly: Permission = { description: 'reads', hasPermission: ({ action }) => readActions.has(action) };
    expect(await request([readOnly], user(1), 'retrieve')).toBe('passed at once');
    expect(await request([readOnly], user(1), 'destroy')).toBe('permission_denied at once');
  });
});

describe('checkObjectPermissions', () => {
  const mine = { id: 10, author_id: 7 };
  const theirs = { id: 11, author_id: 8 };

  it("isOwner: passes the record's own user, whatever type the key was read as", async () => {
    expect(await request([isOwner('author_id')], user(7))).toBe('passed at once');
    expect(await object([isOwner('author_id')], user(7), mine)).toBe('passed at once');
    expect(await object([isOwner('author_id')], user(7), { id: 10, author_id: '7' })).toBe('passed at once');
    expect(await object([isOwner('author_id')], user(7), theirs)).toBe('permission_denied at once');
    expect(await object([isOwner('author_id')], anonymous, mine)).toBe('not_authenticated at once');
  });

  it('passes permissions that say nothing of records', async () => {
    expect(await object([allowAny, isAuthenticated, hasPermission('books.change')], user(1), theirs)).toBe('passed at once');
  });

  it('awaits an asynchronous record check', async () => {
    const published: Permission = { description: 'published', hasPermission: () => true, hasObjectPermission: async (_context, record) => record.id === 10 };
    expect(await object([published], user(1), mine)).toBe('passed later');
    expect(await object([published], user(1), theirs)).toBe('permission_denied later');
  });
});

describe('anyOf', () => {
  const ownerOrEditor = anyOf(isOwner('author_id'), hasPermission('books.change'));

  it('describes its alternatives', () => {
    expect(ownerOrEditor.description).toBe('the user named by "author_id" or the permission "books.change"');
  });

  it('passes a request when any alternative does', async () => {
    expect(await request([anyOf(isAuthenticated, allowAny)], anonymous)).toBe('passed at once');
    expect(await request([anyOf(isAuthenticated, hasPermission('books.add'))], anonymous)).toBe('not_authenticated at once');
  });

  it('passes a record when any alternative passes both its request and its record check', async () => {
    expect(await object([ownerOrEditor], user(7), { author_id: 7 })).toBe('passed at once');
    expect(await object([ownerOrEditor], user(1, ['books.change']), { author_id: 7 })).toBe('passed later');
    expect(await object([ownerOrEditor], user(1, ['books.view']), { author_id: 7 })).toBe('permission_denied later');
    expect(await object([ownerOrEditor], anonymous, { author_id: 7 })).toBe('not_authenticated at once');
  });

  it('does not pass a record by an alternative whose request check fails', async () => {
    // `refusing` has no record check (which passes), but its request check refuses this user.
    const refusing: Permission = { description: 'never', hasPermission: () => false };
    expect(await object([anyOf(isOwner('author_id'), refusing)], user(1), { author_id: 7 })).toBe('permission_denied at once');
  });
  it('asks the built-ins that never read the database first, the others in the order given', async () => {
    const asked: string[] = [];
    const custom = (name: string): Permission => ({ description: name, hasPermission: () => (asked.push(name), false) });
    const author = user(7, ['books.change']);
    // The owner passes before their permissions are read, wherever isOwner is written.
    expect(await object([anyOf(hasPermission('books.change'), custom('first'), isOwner('author_id'))], author, { author_id: 7 })).toBe('passed at once');
    expect(author.hasPermission).not.toHaveBeenCalled();
    expect(asked).toEqual([]);
    // Among the others the declared order holds: an app's own check written first is asked first.
    expect(await request([anyOf(custom('first'), hasPermission('books.change'), custom('last'))], user(1, ['books.change']))).toBe('passed later');
    expect(asked).toEqual(['first']);
  });
});
