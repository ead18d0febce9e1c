import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';
import { adminClient, loggedIn, makeStaff } from '../support/admin-client.js';

let api: TestApi;
let boss: TestUser;
let editor: TestUser;
let viewer: TestUser;

beforeAll(async () => {
  api = await startApi({ THROTTLE_LOGIN: 'off' });
  boss = await api.user('boss', { superuser: true });
  editor = await api.user('editor', { permissions: ['articles.view', 'articles.add', 'articles.change', 'articles.delete'] });
  viewer = await api.user('viewer', { permissions: ['articles.view'] });
  await api.user('plain');
  for (const user of [boss, editor, viewer]) await makeStaff(api, user.id);
});
afterAll(() => api.close());

describe('admin login and logout', () => {
  it('logs a staff user in with a form and a CSRF field, and out with a POST', async () => {
    const client = adminClient(api);
    const first = await client.get('/admin/');
    expect(first.status).toBe(302);
    expect(first.location).toBe('/admin/login/?next=%2Fadmin%2F');
    const form = await client.get(first.location!);
    expect(form.status).toBe(200);
    expect(form.body).toMatch(/<input type="hidden" name="csrfmiddlewaretoken" value="[^"]+"/);
    expect(form.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(String(form.headers['content-security-policy'])).toContain("default-src 'self'");
    const login = await client.post('/admin/login/', { username: 'boss', password: PASSWORD, next: '/admin/' });
    expect(login.status).toBe(302);
    expect(login.location).toBe('/admin/');
    const index = await client.get('/admin/');
    expect(index.status).toBe(200);
    expect(index.body).toContain('Welcome, <strong>boss</strong>');
    // The session is the API's: the same cookie reads the API.
    const out = await client.post('/admin/logout/', {});
    expect(out.status).toBe(200);
    expect(out.body).toContain('Logged out');
    expect((await client.get('/admin/')).status).toBe(302);
  });

  it("refuses wrong passwords and non-staff users with Django's message, ", async () => {
    const client = adminClient(api);
    await client.get('/admin/login/');
    const wrong = await client.post('/admin/login/', { username: 'boss', password: 'nope' });
    expect(wrong.status).toBe(200);
    expect(wrong.body).toContain('Please enter the correct username and password for a staff account.');
    const plain = await client.post('/admin/login/', { username: 'plain', password: PASSWORD });
    expect(plain.body).toContain('Please enter the correct username and password for a staff account.');
    expect(client.cookies.has('restfold_session')).toBe(false);
  });

  it('counts logins against the login throttle', async () => {
    const throttled = await startApi({ THROTTLE_LOGIN: '3/min' });
    try {
      const client = adminClient(throttled);
      await client.get('/admin/login/');
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await client.post('/admin/login/', { username: 'nobody', password: 'nope' })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const refused = await client.post('/admin/login/', { username: 'nobody', password: 'nope' });
      expect(refused.headers['retry-after']).toBeDefined();
    } finally {
      await throttled.close();
    }
  });

  it('refuses a login or a logout without the CSRF field, and never redirects off the site', async () => {
    const client = adminClient(api);
    await client.get('/admin/login/');
    expect((await client.post('/admin/login/', { csrfmiddlewaretoken: 'forged', username: 'editor', password: PASSWORD })).status).toBe(403);
    const away = await client.post('/admin/login/', { username: 'editor', password: PASSWORD, next: '//evil.example/' });
    expect(away.location).toBe('/admin/');
    expect((await client.post('/admin/logout/', { csrfmiddlewaretoken: 'forged' })).status).toBe(403);
    expect((await client.get('/admin/')).status).toBe(200);
  });

  it("sends a non-staff session (the API's login) to the login page, which says who it is", async () => {
    const session = await api.request('POST', '/api/v1/auth/login/', { body: { username: 'plain', password: PASSWORD } });
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    const index = await api.request('GET', '/admin/', { headers: { cookie } });
    expect(index.status).toBe(302);
    const login = await api.request('GET', index.headers.location as string, { headers: { cookie } });
    expect(login.body).toContain('You are authenticated as plain, but are not authorized to access this page.');
  });
});

describe('admin index and change lists', () => {
  it('lists only the collections the staff user may view', async () => {
    const all = await (await loggedIn(api, 'boss')).get('/admin/');
    for (const name of ['users', 'articles', 'tags']) expect(all.body).toContain(`href="/admin/${name}/"`);
    const some = await loggedIn(api, 'viewer');
    const index = await some.get('/admin/');
    expect(index.body).toContain('href="/admin/articles/"');
    expect(index.body).not.toContain('href="/admin/users/"');
    expect(index.body).not.toContain('href="/admin/articles/add/"');
    expect((await some.get('/admin/users/')).status).toBe(403);
  });

  it('shows a change list with search, filters, ordering, a count and escaped values', async () => {
    const hostile = '<script>alert(1)</script>';
    for (const title of ['alpha', 'beta', hostile]) {
      expect((await api.request('POST', '/api/v1/articles/', { token: editor.token, body: { title } })).status).toBe(201);
    }
    const client = await loggedIn(api, 'editor');
    const list = await client.get('/admin/articles/?o=-title');
    expect(list.status).toBe(200);
    expect(list.body).not.toContain('<script>alert');
    expect(list.body).toContain('&lt;script>alert(1)&lt;/script>');
    expect(list.body).toContain('3 results');
    expect(list.body).toMatch(/name="_selected_action"/);
    expect(list.body).toContain('href="/admin/articles/?o=title"');
    // The editor may not view the users in the admin: the author filter is a text box of the id.
    expect(list.body).toContain('<input type="text" id="filter-author_id" name="author_id" value/>');
    expect(list.body.indexOf('beta')).toBeLessThan(list.body.indexOf('alpha'));
    const found = await client.get('/admin/articles/?q=alph');
    expect(found.body).toContain('1 result<');
    expect(found.body).not.toContain('beta');
    const filtered = await client.get(`/admin/articles/?author_id=${boss.id}`);
    expect(filtered.body).toContain('0 results');
  });
});

describe('admin forms', () => {
  it('adds a record through the API, shows refusals beside the field, and saves a change', async () => {
    const client = await loggedIn(api, 'editor');
    const form = await client.get('/admin/articles/add/');
    expect(form.status).toBe(200);
    expect(form.body).toContain('name="title"');
    const refused = await client.post('/admin/articles/add/', { title: 'x'.repeat(201), body: '' });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('Please correct the errors below.');
    expect(refused.body).toMatch(/name="title"[^>]*>\s*<ul class="errorlist"><li>[^<]*200/);
    const added = await client.post('/admin/articles/add/', { title: 'from the admin', body: 'text', _continue: '' });
    expect(added.status).toBe(302);
    const id = /\/admin\/articles\/(\d+)\/change\//.exec(added.location!)![1]!;
    const changed = await client.get(added.location!);
    expect(changed.body).toContain('The article “from the admin” was added successfully.');
    expect(changed.body).toMatch(/name="title"[^>]*value="from the admin"/);
    const article = await api.request('GET', `/api/v1/articles/${id}/`, { token: editor.token });
    expect(article.json).toMatchObject({ title: 'from the admin', author_id: editor.id });
    const saved = await client.post(`/admin/articles/${id}/change/`, { title: 'renamed', body: 'text' });
    expect(saved.location).toBe('/admin/articles/');
    expect((await api.request('GET', `/api/v1/articles/${id}/`, { token: editor.token })).json.title).toBe('renamed');
  });

  it("shows a record's author once: by name beside the author_id box (Django's raw-id widget), not again read-only", async () => {
    const client = await loggedIn(api, 'boss');
    const article = await api.request('POST', '/api/v1/articles/', { token: editor.token, body: { title: 'by the editor' } });
    const form = await client.get(`/admin/articles/${article.json.id}/change/`);
    expect(form.body).toMatch(new RegExp(`name="author_id"[^>]*value="${editor.id}"`));
    // The name the users' admin shows it by, linked to its change page, right after the box's lookup.
    expect(form.body).toMatch(new RegExp(`Look up author_id</a><strong class="related-name"><a href="/admin/users/${editor.id}/change/">editor</a></strong>`));
    // The nested author is the same record: not listed again among the read-only fields.
    expect(form.body).not.toMatch(/<dt>author<\/dt>/);
    expect(form.body.match(/>editor<\/a>/g)).toHaveLength(1);
    // A refused form names the record its posted id names, as the API shows it to the user.
    const refused = await client.post(`/admin/articles/${article.json.id}/change/`, { title: 'x'.repeat(201), author_id: String(boss.id) });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain(`<strong class="related-name"><a href="/admin/users/${boss.id}/change/">boss</a></strong>`);
    // With view alone, the values as text: the author once, by name.
    const viewed = await (await loggedIn(api, 'viewer')).get(`/admin/articles/${article.json.id}/change/`);
    expect(viewed.body).toContain('<dt>author_id</dt>');
    expect(viewed.body).not.toContain('<dt>author</dt>');
  });

  it('refuses a write without the CSRF field, and a change by a user with only view', async () => {
    const client = await loggedIn(api, 'editor');
    await client.get('/admin/articles/add/');
    expect((await client.post('/admin/articles/add/', { csrfmiddlewaretoken: 'forged', title: 'forged' })).status).toBe(403);
    const list = await api.request('GET', '/api/v1/articles/?search=forged', { token: boss.token });
    expect(list.json.count).toBe(0);
    const viewing = await loggedIn(api, 'viewer');
    const article = await api.request('POST', '/api/v1/articles/', { token: editor.token, body: { title: 'read only' } });
    const page = await viewing.get(`/admin/articles/${article.json.id}/change/`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('name="title"');
    expect(page.body).toContain('read only');
    expect((await viewing.post(`/admin/articles/${article.json.id}/change/`, { title: 'changed' })).status).toBe(403);
    expect((await viewing.get('/admin/articles/add/')).status).toBe(403);
    const changer = await api.user('changer', { permissions: ['articles.change'] });
    await makeStaff(api, changer.id);
    const changing = await (await loggedIn(api, 'changer')).get(`/admin/articles/${article.json.id}/change/`);
    expect(changing.body).toMatch(/name="title"[^>]*value="read only"/);
    expect(changing.body).not.toContain(`/admin/articles/${article.json.id}/delete/`);
  });

  it('deletes one record, and a selection after a confirmation page listing it', async () => {
    const client = await loggedIn(api, 'editor');
    const ids: number[] = [];
    for (const title of ['doomed one', 'doomed two', 'kept']) ids.push((await api.request('POST', '/api/v1/articles/', { token: editor.token, body: { title } })).json.id);
    await client.get('/admin/articles/');
    const confirm = await client.post('/admin/articles/', { action: 'delete_selected', _selected_action: [String(ids[0]), String(ids[1])] });
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('Are you sure?');
    expect(confirm.body).toContain('doomed one');
    expect(confirm.body).toContain('doomed two');
    expect((await api.request('GET', `/api/v1/articles/${ids[0]}/`, { token: editor.token })).status).toBe(200);
    const done = await client.post('/admin/articles/', { action: 'delete_selected', _selected_action: [String(ids[0]), String(ids[1])], post: 'yes' });
    expect(done.status).toBe(302);
    expect((await client.get('/admin/articles/')).body).toContain('Successfully deleted 2 articles.');
    expect((await api.request('GET', `/api/v1/articles/${ids[0]}/`, { token: editor.token })).status).toBe(404);
    const single = await client.get(`/admin/articles/${ids[2]}/delete/`);
    expect(single.body).toContain('kept');
    expect((await client.post(`/admin/articles/${ids[2]}/delete/`, { post: 'yes' })).status).toBe(302);
    expect((await api.request('GET', `/api/v1/articles/${ids[2]}/`, { token: editor.token })).status).toBe(404);
  });
});

describe('admin and hostile input', () => {
  it('answers odd ids, parameters and bodies with a page or a refusal, never a 500', async () => {
    const client = await loggedIn(api, 'boss');
    for (const url of ['/admin/articles/abc/change/', '/admin/articles/99999999999999999999/change/', '/admin/articles/%2e%2e/delete/', '/admin/articles/%00/change/']) {
      const reply = await client.get(url);
      expect([400, 404]).toContain(reply.status);
    }
    const unknownOrder = await client.get('/admin/articles/?o=password');
    expect(unknownOrder.status).toBe(200);
    expect(unknownOrder.body).toContain('The list could not be read');
    expect((await client.get('/admin/articles/?p=9999')).status).toBe(404);
    const json = await api.app.inject({ method: 'POST', url: '/admin/articles/add/', headers: { cookie: [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; '), 'content-type': 'application/json' }, payload: '{}' });
    expect(json.statusCode).toBe(415);
    const nothing = await client.post('/admin/articles/', { action: 'delete_selected' });
    expect(nothing.status).toBe(302);
    expect((await client.get('/admin/articles/')).body).toContain('Items must be selected');
  });
});

describe('admin settings', () => {
  it('can be turned off, or moved', async () => {
    const off = await startApi({ ADMIN: 'false' });
    try {
      expect((await off.request('GET', '/admin/login/')).status).toBe(404);
    } finally {
      await off.close();
    }
    const moved = await startApi({ ADMIN_PREFIX: '/staff/console' });
    try {
      expect((await moved.request('GET', '/staff/console/login/')).status).toBe(200);
      expect((await moved.request('GET', '/admin/login/')).status).toBe(404);
    } finally {
      await moved.close();
    }
  });
});
