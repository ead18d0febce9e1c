/**
 * The admin's pages of the framework's users and groups (docs/admin.md, Users and groups): under
 * /admin/auth/, read and written through /api/v1/auth/, to staff holding what the API asks
 * (auth.manage_groups; users.change for a password; a superuser for the flags); escaped, CSRF-checked,
 * and two staff saving one group's permissions at once lose neither's grant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';
import { adminClient, loggedIn, makeStaff, type AdminClient } from '../support/admin-client.js';

let api: TestApi;
let boss: TestUser;
let manager: TestUser;
let changer: TestUser;
let clerk: TestUser;
let bob: TestUser;

beforeAll(async () => {
  api = await startApi({ THROTTLE_LOGIN: 'off' });
  boss = await api.user('boss', { superuser: true });
  manager = await api.user('manager', { permissions: ['auth.manage_groups'] });
  changer = await api.user('changer', { permissions: ['users.change'] });
  clerk = await api.user('clerk', { permissions: ['articles.view'] });
  bob = await api.user('bob');
  for (const user of [boss, manager, changer, clerk]) await makeStaff(api, user.id);
});
afterAll(() => api.close());

const asBoss = (method: string, url: string, body?: unknown) => api.request(method, url, { token: boss.token, body });
const groupNamed = async (name: string) => (await asBoss('GET', `/api/v1/auth/groups/?name=${encodeURIComponent(name)}`)).json.results[0] as { id: number; name: string; permissions: string[] } | undefined;
const account = async (user: TestUser) => (await asBoss('GET', `/api/v1/auth/users/${user.id}/`)).json as { groups: number[]; user_permissions: string[]; is_staff: boolean; is_superuser: boolean };
/** The values of the form's hidden `initial_<name>` fields, as a browser would post them back. */
const initials = (body: string, name: string) => [...body.matchAll(new RegExp(`name="initial_${name}" value="([^"]*)"`, 'g'))].map((found) => found[1]!);
const selected = (body: string, name: string) => {
  const select = new RegExp(`<select id="id_${name}" name="${name}"[^>]*>(.*?)</select>`, 's').exec(body)?.[1] ?? '';
  return [...select.matchAll(/<option value="([^"]*)" selected/g)].map((found) => found[1]!);
};

describe('the admin index', () => {
  it('lists groups and users under "Authentication and authorization" to those who may see them, and to no one else', async () => {
    const index = (await (await loggedIn(api, 'boss')).get('/admin/')).body;
    expect(index).toContain('<caption>Authentication and authorization</caption>');
    expect(index).toContain('href="/admin/auth/groups/"');
    expect(index).toContain('href="/admin/auth/groups/add/"');
    expect(index).toContain('href="/admin/auth/users/"');
    // The app's own users collection keeps its pages beside the framework's.
    expect(index).toContain('href="/admin/users/"');
    const managed = (await (await loggedIn(api, 'manager')).get('/admin/')).body;
    expect(managed).toContain('href="/admin/auth/groups/"');
    expect(managed).toContain('href="/admin/auth/users/"');
    const changing = (await (await loggedIn(api, 'changer')).get('/admin/')).body;
    expect(changing).not.toContain('href="/admin/auth/groups/"');
    expect(changing).toContain('href="/admin/auth/users/"');
    const clerkIndex = (await (await loggedIn(api, 'clerk')).get('/admin/')).body;
    expect(clerkIndex).not.toContain('Authentication and authorization');
  });
});

describe('groups', () => {
  it('adds a group with permissions picked and typed, lists it, and changes them through the API', async () => {
    const client = await loggedIn(api, 'manager');
    const form = await client.get('/admin/auth/groups/add/');
    expect(form.status).toBe(200);
    expect(form.body).toContain('<select id="id_permissions" name="permissions" multiple');
    expect(form.body).toContain('<option value="articles.change">articles.change</option>');
    expect(form.body).toContain('class="choice-filter"');
    // The filter box's script is the service's own file (the CSP allows no other).
    expect(form.body).toContain('<script src="/api/static/admin-filter.js" defer></script>');
    const script = await api.app.inject({ method: 'GET', url: '/api/static/admin-filter.js' });
    expect([script.statusCode, script.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
    const added = await client.post('/admin/auth/groups/add/', { name: 'editors', permissions: ['articles.change', 'articles.view'], permissions_other: 'organizers shop.refund', _continue: '' });
    expect(added.status, added.body).toBe(302);
    const group = (await groupNamed('editors'))!;
    expect(group.permissions).toEqual(['articles.change', 'articles.view', 'organizers', 'shop.refund']);
    expect(added.location).toBe(`/admin/auth/groups/${group.id}/change/`);
    const change = await client.get(added.location!);
    expect(change.body).toContain('The group “editors” was saved successfully.');
    expect(selected(change.body, 'permissions')).toEqual(['articles.change', 'articles.view', 'organizers', 'shop.refund']);

    const list = await client.get('/admin/auth/groups/?q=edit');
    expect(list.status).toBe(200);
    expect(list.body).toContain(`href="/admin/auth/groups/${group.id}/change/">editors</a>`);
    expect(list.body).toContain('1 result');

    // Drop one, add one, rename: each through /auth/groups/.
    const saved = await client.post(added.location!, { name: 'writers', permissions: ['articles.view', 'organizers', 'shop.refund', 'articles.add'], initial_permissions: initials(change.body, 'permissions') });
    expect(saved.status).toBe(302);
    expect(saved.location).toBe('/admin/auth/groups/');
    expect(await groupNamed('writers')).toMatchObject({ id: group.id, permissions: ['articles.add', 'articles.view', 'organizers', 'shop.refund'] });
  });

  it('shows a refused name and a bad permission name beside their fields, writing nothing', async () => {
    const client = await loggedIn(api, 'manager');
    await client.get('/admin/auth/groups/add/');
    await client.post('/admin/auth/groups/add/', { name: 'taken' });
    const taken = await client.post('/admin/auth/groups/add/', { name: 'taken', permissions: ['articles.view'] });
    expect(taken.status).toBe(400);
    expect(taken.body).toContain('Please correct the errors below.');
    expect(taken.body).toMatch(/<ul class="errorlist"><li>[^<]*already exists/);
    const bad = await client.post('/admin/auth/groups/add/', { name: 'odd', permissions_other: 'has;semicolon' });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('Not a valid permission name');
    expect(await groupNamed('odd')).toBeUndefined();
    expect((await client.post('/admin/auth/groups/add/', { name: 'x'.repeat(151) })).status).toBe(400);
    // A record that is not there, or an id no record can have: Django's 404 page, never a 500.
    for (const page of ['/admin/auth/groups/999999/change/', '/admin/auth/groups/abc/change/', '/admin/auth/groups/999999/delete/', '/admin/auth/users/999999/change/', '/admin/auth/users/abc/change/']) {
      expect((await client.get(page)).status, page).toBe(404);
    }
    const boss = await loggedIn(api, 'boss');
    expect((await boss.get('/admin/auth/users/999999/password/')).status).toBe(404);
    expect((await boss.post('/admin/auth/groups/999999/change/', { name: 'ghost', permissions: ['articles.view'] })).status).toBe(404);
    expect((await boss.post('/admin/auth/users/999999/change/', { is_staff: 'true' })).status).toBe(404);
    expect(await groupNamed('ghost')).toBeUndefined();
  });

  it('shows a group named <script> as text on its list and form', async () => {
    const client = await loggedIn(api, 'boss');
    await client.get('/admin/auth/groups/add/');
    const name = '<script>alert("x")</script>';
    expect((await client.post('/admin/auth/groups/add/', { name })).status).toBe(302);
    const group = (await groupNamed(name))!;
    for (const page of ['/admin/auth/groups/', `/admin/auth/groups/${group.id}/change/`, `/admin/auth/groups/${group.id}/delete/`]) {
      const body = (await client.get(page)).body;
      expect(body, page).not.toContain('<script>alert');
      expect(body, page).toContain('&lt;script>alert');
    }
    const flashed = await client.post(`/admin/auth/groups/${group.id}/change/`, { name });
    expect((await client.get(flashed.location!)).body).not.toContain('<script>alert');
  });

  it('deletes a group and a selection after a confirmation', async () => {
    const client = await loggedIn(api, 'manager');
    for (const name of ['gone.1', 'gone.2', 'gone.3']) expect((await asBoss('POST', '/api/v1/auth/groups/', { name })).status).toBe(201);
    const [one, two, three] = await Promise.all(['gone.1', 'gone.2', 'gone.3'].map(async (name) => (await groupNamed(name))!.id));
    const confirm = await client.get(`/admin/auth/groups/${one}/delete/`);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('group “gone.1”');
    expect(await groupNamed('gone.1')).toBeDefined();
    expect((await client.post(`/admin/auth/groups/${one}/delete/`, { post: 'yes' })).status).toBe(302);
    expect(await groupNamed('gone.1')).toBeUndefined();
    const bulk = await client.post('/admin/auth/groups/', { action: 'delete_selected', _selected_action: [String(two), String(three)] });
    expect(bulk.body).toContain('group “gone.3”');
    const done = await client.post('/admin/auth/groups/', { action: 'delete_selected', _selected_action: [String(two), String(three)], post: 'yes' });
    expect(done.status).toBe(302);
    expect((await client.get('/admin/auth/groups/')).body).toContain('Successfully deleted 2 groups.');
    expect(await groupNamed('gone.2')).toBeUndefined();
  });
});

describe('users', () => {
  it("changes a user's groups and own permissions, one membership and grant at a time", async () => {
    const made = await asBoss('POST', '/api/v1/auth/groups/', { name: 'members' });
    const client = await loggedIn(api, 'manager');
    const list = await client.get('/admin/auth/users/?is_staff=false');
    expect(list.body).toContain(`href="/admin/auth/users/${bob.id}/change/">bob</a>`);
    expect(list.body).not.toContain('>boss</a>');
    const form = await client.get(`/admin/auth/users/${bob.id}/change/`);
    expect(form.status).toBe(200);
    expect(form.body).toContain(`<option value="${made.json.id}">members</option>`);
    // Flags are a superuser's to change: shown as text to a manager.
    expect(form.body).not.toContain('name="is_superuser"');
    const saved = await client.post(`/admin/auth/users/${bob.id}/change/`, { groups: String(made.json.id), user_permissions: ['articles.view'], user_permissions_other: 'organizers', is_superuser: 'true' });
    expect(saved.status).toBe(302);
    expect(await account(bob)).toMatchObject({ groups: [made.json.id], user_permissions: ['articles.view', 'organizers'], is_superuser: false });
    const again = await client.get(`/admin/auth/users/${bob.id}/change/`);
    expect(selected(again.body, 'groups')).toEqual([String(made.json.id)]);
    const left = await client.post(`/admin/auth/users/${bob.id}/change/`, { user_permissions: ['organizers'], initial_groups: initials(again.body, 'groups'), initial_user_permissions: initials(again.body, 'user_permissions') });
    expect(left.status).toBe(302);
    expect(await account(bob)).toMatchObject({ groups: [], user_permissions: ['organizers'] });
  });

  it('lets a superuser set the flags, and no one else, themselves included', async () => {
    const target = await api.user('flagged');
    const boss = await loggedIn(api, 'boss');
    const form = await boss.get(`/admin/auth/users/${target.id}/change/`);
    expect(form.body).toContain('name="is_staff"');
    expect((await boss.post(`/admin/auth/users/${target.id}/change/`, { is_active: 'true', is_staff: 'true' })).status).toBe(302);
    expect(await account(target)).toMatchObject({ is_staff: true, is_superuser: false });
    // users.change alone: the password, never the flags; its holder's own page has no form to post.
    const client = await loggedIn(api, 'changer');
    const own = await client.get(`/admin/auth/users/${changer.id}/change/`);
    expect(own.status).toBe(200);
    expect(own.body).not.toContain('name="is_superuser"');
    expect(own.body).toContain(`href="/admin/auth/users/${changer.id}/password/">Change password</a>`);
    expect((await client.post(`/admin/auth/users/${changer.id}/change/`, { is_superuser: 'true', is_staff: 'true', is_active: 'true' })).status).toBe(403);
    expect(await account(changer)).toMatchObject({ is_superuser: false });
  });

  it('changes a password on a form that never shows the hash, for users.change only', async () => {
    const target = await api.user('renamed');
    const hash = (await api.database.db.selectFrom('users').select('password').where('id', '=', target.id).executeTakeFirstOrThrow()).password as string;
    const client = await loggedIn(api, 'changer');
    const path = `/admin/auth/users/${target.id}/password/`;
    const form = await client.get(path);
    expect(form.status).toBe(200);
    expect(form.body).not.toContain(hash);
    expect(form.body).not.toContain('name="old_password"');
    expect((await client.get(`/admin/auth/users/${target.id}/change/`)).body).not.toContain(hash);
    expect((await client.post(path, { password1: 'another-passphrase', password2: 'another-passphrase' })).location).toBe(`/admin/auth/users/${target.id}/change/`);
    expect((await api.request('POST', '/api/v1/auth/login/', { body: { username: 'renamed', password: 'another-passphrase' } })).status).toBe(200);
    const manager = await loggedIn(api, 'manager');
    expect((await manager.get(path)).status).toBe(403);
    expect((await client.get(`/admin/auth/users/${boss.id}/password/`)).status).toBe(200);
    expect((await client.post(`/admin/auth/users/${boss.id}/password/`, { password1: 'taken-over-now', password2: 'taken-over-now' })).status).toBe(403);
  });

  it('asks for the old password on the staff user’s own account, as the API does', async () => {
    const self = await api.user('self', { superuser: true });
    await makeStaff(api, self.id);
    const client = await loggedIn(api, 'self');
    const path = `/admin/auth/users/${self.id}/password/`;
    expect((await client.get(path)).body).toContain('name="old_password"');
    const wrong = await client.post(path, { old_password: 'not-it-at-all', password1: 'my-own-new-one', password2: 'my-own-new-one' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatch(/<label class="field" for="id_old_password">.*The current password is incorrect\./s);
    expect((await client.post(path, { old_password: PASSWORD, password1: 'my-own-new-one', password2: 'my-own-new-one' })).status).toBe(302);
    expect((await api.request('POST', '/api/v1/auth/login/', { body: { username: 'self', password: 'my-own-new-one' } })).status).toBe(200);
    // The session the change was made with goes on.
    expect((await client.get(`/admin/auth/users/${self.id}/change/`)).body).toContain('Password changed successfully.');
  });
});

describe('who reaches the pages', () => {
  const pages = () => ['/admin/auth/groups/', '/admin/auth/groups/add/', `/admin/auth/users/${bob.id}/change/`, '/admin/auth/users/', `/admin/auth/users/${bob.id}/password/`];

  it('answers 403 to staff without the permission, GET and POST alike', async () => {
    const client = await loggedIn(api, 'clerk');
    for (const page of pages()) expect((await client.get(page)).status, page).toBe(403);
    expect((await client.post('/admin/auth/groups/add/', { name: 'clerks', permissions: ['articles.delete'] })).status).toBe(403);
    expect((await client.post(`/admin/auth/users/${bob.id}/change/`, { groups: '1' })).status).toBe(403);
    expect(await groupNamed('clerks')).toBeUndefined();
    // users.change reads users but manages no group.
    const changer = await loggedIn(api, 'changer');
    expect((await changer.get('/admin/auth/groups/')).status).toBe(403);
  });

  it('sends anyone not staff to the login page, with or without a session', async () => {
    const anonymous = adminClient(api);
    for (const page of pages()) expect((await anonymous.get(page)).location, page).toBe(`/admin/login/?next=${encodeURIComponent(page)}`);
    // bob logs in through the API: the same session cookie, but he is not staff.
    const login = await api.app.inject({ method: 'POST', url: '/api/v1/auth/login/', payload: { username: 'bob', password: PASSWORD } });
    const cookie = login.cookies.find(({ name }) => name === 'restfold_session')!;
    for (const page of pages()) {
      const reply = await api.app.inject({ method: 'GET', url: page, headers: { cookie: `restfold_session=${cookie.value}` } });
      expect(reply.statusCode, page).toBe(302);
    }
  });

  it('refuses a POST without the session CSRF token, writing nothing', async () => {
    const client = await loggedIn(api, 'boss');
    for (const token of ['', 'forged']) {
      const reply = await client.post('/admin/auth/groups/add/', { csrfmiddlewaretoken: token, name: `forged${token}` });
      expect(reply.status).toBe(403);
      expect(reply.body).toContain('CSRF verification failed');
    }
    expect(await groupNamed('forged')).toBeUndefined();
    expect((await client.post(`/admin/auth/users/${bob.id}/change/`, { csrfmiddlewaretoken: 'x', is_superuser: 'true' })).status).toBe(403);
    expect((await account(bob)).is_superuser).toBe(false);
  });
});

describe('two staff saving one group at once', () => {
  it('keeps both grants and both removals (each saves what it changed), with no 500', async () => {
    const made = await asBoss('POST', '/api/v1/auth/groups/', { name: 'contested' });
    for (const name of ['shared.keep', 'drop.a', 'drop.b']) await asBoss('POST', `/api/v1/auth/groups/${made.json.id}/permissions/`, { name });
    const path = `/admin/auth/groups/${made.json.id}/change/`;
    const editors: AdminClient[] = await Promise.all(['boss', 'manager'].map((name) => loggedIn(api, name)));
    const forms = await Promise.all(editors.map((client) => client.get(path)));
    const shown = initials(forms[0]!.body, 'permissions');
    expect(shown).toEqual(['drop.a', 'drop.b', 'shared.keep']);
    // Each drops one and adds one of their own; both also add the same one.
    const saves = await Promise.all(
      editors.map((client, index) =>
        client.post(path, { name: 'contested', permissions: ['shared.keep', index === 0 ? 'drop.b' : 'drop.a', `added.${index}`, 'added.both'], initial_permissions: shown }),
      ),
    );
    for (const save of saves) expect(save.status, save.body).toBe(302);
    for (const [index, client] of editors.entries()) expect((await client.get(saves[index]!.location!)).body).not.toContain('Not saved');
    expect((await groupNamed('contested'))!.permissions).toEqual(['added.0', 'added.1', 'added.both', 'shared.keep']);
  });

  it('ends consistent under ten staff saving at once', async () => {
    const made = await asBoss('POST', '/api/v1/auth/groups/', { name: 'crowded' });
    const path = `/admin/auth/groups/${made.json.id}/change/`;
    const clients = await Promise.all(Array.from({ length: 10 }, () => loggedIn(api, 'manager')));
    await Promise.all(clients.map((client) => client.get(path)));
    const saves = await Promise.all(clients.map((client, index) => client.post(path, { name: 'crowded', permissions: [`crowd.${index}`, 'crowd.all'] })));
    for (const save of saves) expect(save.status).toBe(302);
    expect((await groupNamed('crowded'))!.permissions).toEqual([...Array.from({ length: 10 }, (_, index) => `crowd.${index}`), 'crowd.all'].sort());
  });
});
