/**
 * The admin's password change form (`/admin/users/<id>/password/`): the new password twice, sent
 * through the users collection's own PATCH; the stored hash is never on the page; only those who
 * may change the collection reach it; the history names the field, not the value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';
import { loggedIn, makeStaff } from '../support/admin-client.js';

let api: TestApi;
let boss: TestUser;
let target: TestUser;

beforeAll(async () => {
  api = await startApi({ THROTTLE_LOGIN: 'off', HISTORY: 'true' });
  boss = await api.user('boss', { superuser: true });
  const viewer = await api.user('viewer', { permissions: ['users.view'] });
  target = await api.user('target');
  for (const user of [boss, viewer]) await makeStaff(api, user.id);
});
afterAll(() => api.close());

const login = (password: string) => api.request('POST', '/api/v1/auth/login/', { body: { username: 'target', password } });

describe('the admin password change form', () => {
  it('changes a password through the API, refusing a mismatch, never showing the hash', async () => {
    const stored = (await api.database.db.selectFrom('users').select('password').where('id', '=', target.id).executeTakeFirstOrThrow()).password as string;
    const client = await loggedIn(api, 'boss');
    const path = `/admin/users/${target.id}/password/`;
    expect((await client.get(`/admin/users/${target.id}/change/`)).body).toContain(`href="${path}"`);
    const form = await client.get(path);
    expect(form.status).toBe(200);
    expect(form.body).toContain('name="password1"');
    // The old password only on one's own account (the API asks it of anyone changing their own).
    expect(form.body).not.toContain('name="old_password"');
    expect((await client.get(`/admin/users/${boss.id}/password/`)).body).toContain('name="old_password"');
    expect(form.body).not.toContain(stored);
    const mismatch = await client.post(path, { password1: 'a-new-passphrase', password2: 'another-one' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toContain('The two password fields didn’t match.');
    expect(mismatch.body).not.toContain('a-new-passphrase');
    const changed = await client.post(path, { password1: 'a-new-passphrase', password2: 'a-new-passphrase' });
    expect(changed.status).toBe(302);
    expect(changed.location).toBe(`/admin/users/${target.id}/change/`);
    expect((await login(PASSWORD)).status).toBe(400);
    expect((await login('a-new-passphrase')).status).toBe(200);
    const history = await client.get(`/admin/users/${target.id}/history/`);
    expect(history.body).toContain('Changed password.');
    const changedHash = (await api.database.db.selectFrom('users').select('password').where('id', '=', target.id).executeTakeFirstOrThrow()).password as string;
    expect(history.body).not.toContain(changedHash);
  });

  it('is refused to a staff user who may only view users, and to a collection without a password', async () => {
    const viewer = await loggedIn(api, 'viewer');
    expect((await viewer.get(`/admin/users/${target.id}/password/`)).status).toBe(403);
    const boss = await loggedIn(api, 'boss');
    expect((await boss.get('/admin/articles/1/password/')).status).toBe(403);
    expect((await boss.get('/admin/users/999999/password/')).status).toBe(404);
  });
});
