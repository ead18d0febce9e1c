/**
 * Groups over HTTP (docs/authentication.md, Groups): /auth/groups/ with each group's permissions/ and
 * members/, /auth/users/ with each user's groups/; a member holds the group's permissions from the
 * next request on, on every server of one database; concurrent grants and memberships end consistent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, modelPermissions, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { testDialect } from '../support/database.js';
import { withGeneratedMigrations } from '../support/migrations.js';

let api: TestApi;
let root: TestUser;
let bob: TestUser;

beforeEach(async () => {
  api = await startApi();
  root = await api.user('root', { superuser: true });
  bob = await api.user('bob');
});
afterEach(() => api.close());

const as = (user: TestUser) => ({
  get: (url: string) => api.request('GET', url, { token: user.token }),
  post: (url: string, body: unknown) => api.request('POST', url, { token: user.token, body }),
  patch: (url: string, body: unknown) => api.request('PATCH', url, { token: user.token, body }),
  delete: (url: string) => api.request('DELETE', url, { token: user.token }),
});

async function group(name: string, permissions: readonly string[] = [], members: readonly TestUser[] = []): Promise<number> {
  const made = await as(root).post('/api/v1/auth/groups/', { name });
  expect(made.status, made.body).toBe(201);
  for (const permission of permissions) expect((await as(root).post(`/api/v1/auth/groups/${made.json.id}/permissions/`, { name: permission })).status).toBe(201);
  for (const member of members) expect((await as(root).post(`/api/v1/auth/groups/${made.json.id}/members/`, { user_id: member.id })).status).toBe(201);
  return made.json.id as number;
}

describe('groups over the API', () => {
  it("a member holds the group's permissions from the next request on, and not once a grant, the membership or the group is gone", async () => {
    const tag = await as(bob).post('/api/v1/tags/', { name: 'news' });
    const rename = (name: string) => as(bob).patch(`/api/v1/tags/${tag.json.id}/`, { name });
    expect((await rename('a')).status).toBe(403);

    const editors = await group('editors', ['tags.change', 'tags.delete'], [bob]);
    expect((await rename('b')).status).toBe(200);
    expect((await as(root).get(`/api/v1/auth/groups/${editors}/`)).json).toEqual({ id: editors, name: 'editors', permissions: ['tags.change', 'tags.delete'], members: [bob.id] });
    expect((await as(root).get(`/api/v1/auth/users/${bob.id}/`)).json).toMatchObject({ id: bob.id, username: 'bob', is_staff: false, groups: [editors], user_permissions: [] });

    // Revoked by name (DELETE on the list path with a filter), as `permissions remove --group` does.
    expect((await as(root).delete(`/api/v1/auth/groups/${editors}/permissions/?name=tags.change`)).status).toBe(204);
    expect((await rename('c')).status).toBe(403);
    expect((await as(root).post(`/api/v1/auth/groups/${editors}/permissions/`, { name: 'tags.change' })).status).toBe(201);
    expect((await rename('d')).status).toBe(200);

    // Leaving through the user's own groups/ list.
    expect((await as(root).delete(`/api/v1/auth/users/${bob.id}/groups/?group_id=${editors}`)).status).toBe(204);
    expect((await rename('e')).status).toBe(403);
    expect((await as(root).post(`/api/v1/auth/users/${bob.id}/groups/`, { group_id: editors })).status).toBe(201);
    expect((await rename('f')).status).toBe(200);

    expect((await as(root).delete(`/api/v1/auth/groups/${editors}/`)).status).toBe(204);
    expect((await rename('g')).status).toBe(403);
    expect((await as(root).get(`/api/v1/auth/users/${bob.id}/`)).json.groups).toEqual([]);
  });

  it("manages a user's own permissions one grant at a time under /auth/users/{id}/permissions/", async () => {
    const tag = await as(bob).post('/api/v1/tags/', { name: 'own' });
    const rename = (name: string) => as(bob).patch(`/api/v1/tags/${tag.json.id}/`, { name });
    const grants = `/api/v1/auth/users/${bob.id}/permissions/`;
    const granted = await as(root).post(grants, { name: 'tags.change' });
    expect(granted.status, granted.body).toBe(201);
    expect(granted.json).toEqual({ id: expect.any(Number), name: 'tags.change' });
    expect((await rename('a')).status).toBe(200);
    expect((await as(root).get(`/api/v1/auth/users/${bob.id}/`)).json.user_permissions).toEqual(['tags.change']);
    // Twice is a 400 naming the field; a bad name too; another user's grant is not under this user.
    expect((await as(root).post(grants, { name: 'tags.change' })).status).toBe(400);
    expect((await as(root).post(grants, { name: 'no spaces' })).json.details).toHaveProperty('name');
    expect((await as(root).get(`/api/v1/auth/users/${root.id}/permissions/${granted.json.id}/`)).status).toBe(404);
    expect((await as(bob).get(grants)).status).toBe(403);
    expect((await as(root).get(grants)).json.results).toEqual([granted.json]);
    expect((await as(root).delete(`${grants}${granted.json.id}/`)).status).toBe(204);
    expect((await rename('b')).status).toBe(403);
  });

  it('only superusers and holders of auth.manage_groups (their own or a group\'s) reach them', async () => {
    const urls = ['/api/v1/auth/groups/', '/api/v1/auth/users/', `/api/v1/auth/users/${bob.id}/groups/`];
    for (const url of urls) {
      expect((await api.request('GET', url)).status).toBe(401);
      expect((await as(bob).get(url)).status).toBe(403);
    }
    expect((await as(bob).post('/api/v1/auth/groups/', { name: 'mine' })).status).toBe(403);
    const carol = await api.user('carol', { permissions: ['auth.manage_groups'] });
    expect((await as(carol).post('/api/v1/auth/groups/', { name: 'theirs' })).status).toBe(201);
    await group('managers', ['auth.manage_groups'], [bob]);
    for (const url of urls) expect((await as(bob).get(url)).status).toBe(200);
  });

  it("changes an account by PATCH with users.change, whose flags only a superuser changes, themselves included", async () => {
    const account = (user: TestUser) => `/api/v1/auth/users/${user.id}/`;
    const login = (password: string) => api.request('POST', '/api/v1/auth/login/', { body: { username: 'bob', password } });
    // auth.manage_groups reads accounts but does not change them.
    const carol = await api.user('carol', { permissions: ['auth.manage_groups'] });
    expect((await as(carol).get(account(bob))).status).toBe(200);
    expect((await as(carol).patch(account(bob), { password: 'a-new-passphrase' })).status).toBe(403);
    const dave = await api.user('dave', { permissions: ['users.change'] });
    // The hash is never answered (a hidden field reads null, as on the app's users collection).
    expect((await as(dave).get(account(bob))).json.password).toBeNull();
    expect((await as(dave).patch(account(bob), { password: 'a-new-passphrase' })).status).toBe(200);
    expect((await login('a-new-passphrase')).status).toBe(200);
    // Django's change_user would let dave make himself superuser; here the flags are a superuser's alone.
    for (const flag of ['is_superuser', 'is_staff', 'is_active']) {
      const reply = await as(dave).patch(account(dave), { [flag]: flag !== 'is_active' });
      expect(reply.status, flag).toBe(403);
      expect(reply.json.message ?? reply.json.error ?? reply.body).toContain(`Only a superuser may change ${flag}`);
    }
    expect((await as(dave).patch(account(root), { password: 'taken-over-now' })).status).toBe(403);
    expect((await as(dave).get(account(dave))).json).toMatchObject({ is_superuser: false, is_staff: false, is_active: true });
    expect((await as(root).patch(account(dave), { is_staff: true })).json).toMatchObject({ is_staff: true });
    expect((await as(root).patch(account(bob), { username: 'robert' })).json.username).toBe('bob');
  });

  it('refuses bad input with 400 or 404 naming the field, never a 500', async () => {
    const editors = await group('editors', ['tags.change'], [bob]);
    const cases: [string, string, unknown, number, string?][] = [
      ['POST', '/api/v1/auth/groups/', { name: 'editors' }, 400, 'name'],
      ['POST', '/api/v1/auth/groups/', { name: 'x'.repeat(151) }, 400, 'name'],
      ['POST', '/api/v1/auth/groups/', { name: ['a'] }, 400, 'name'],
      ['POST', `/api/v1/auth/groups/${editors}/permissions/`, { name: 'tags.change' }, 400, 'name'],
      ['POST', `/api/v1/auth/groups/${editors}/permissions/`, { name: 'has space' }, 400, 'name'],
      ['POST', `/api/v1/auth/groups/${editors}/permissions/`, { name: 'x'.repeat(201) }, 400, 'name'],
      ['POST', `/api/v1/auth/groups/${editors}/permissions/`, { name: "'; drop table users; --" }, 400, 'name'],
      ['POST', `/api/v1/auth/groups/${editors}/members/`, { user_id: 999999 }, 400, 'user_id'],
      ['POST', `/api/v1/auth/groups/${editors}/members/`, { user_id: bob.id }, 400, 'user_id'],
      ['POST', `/api/v1/auth/groups/${editors}/members/`, { user_id: 'bob' }, 400, 'user_id'],
      ['POST', `/api/v1/auth/users/${bob.id}/groups/`, { group_id: 999999 }, 400, 'group_id'],
      ['POST', '/api/v1/auth/groups/999999/permissions/', { name: 'a' }, 404],
      ['GET', '/api/v1/auth/groups/999999/members/', undefined, 404],
      ['GET', '/api/v1/auth/users/999999/groups/', undefined, 404],
      ['DELETE', `/api/v1/auth/groups/${editors}/permissions/`, undefined, 400],
    ];
    for (const [method, url, body, status, field] of cases) {
      const reply = await api.request(method, url, { token: root.token, body });
      expect({ url, body, status: reply.status }).toEqual({ url, body, status });
      if (field) expect(Object.keys(reply.json.details ?? {}), reply.body).toContain(field);
    }
    expect((await as(root).get(`/api/v1/auth/groups/${editors}/`)).json).toMatchObject({ permissions: ['tags.change'], members: [bob.id] });
  });

  it('is in the OpenAPI document, tagged auth, with operation ids of its own', async () => {
    const document = (await as(root).get('/api/v1/schema/')).json;
    const operations = Object.entries(document.paths as Record<string, Record<string, { operationId: string; tags: string[] }>>).filter(([path]) => path.startsWith('/api/v1/auth/') && !/token|jwt|login|logout/.test(path));
    expect(operations.map(([path]) => path)).toEqual([
      '/api/v1/auth/groups/',
      '/api/v1/auth/groups/{id}/',
      '/api/v1/auth/groups/{parent}/permissions/',
      '/api/v1/auth/groups/{parent}/permissions/{id}/',
      '/api/v1/auth/groups/{parent}/members/',
      '/api/v1/auth/groups/{parent}/members/{id}/',
      '/api/v1/auth/users/',
      '/api/v1/auth/users/{id}/',
      '/api/v1/auth/users/{parent}/groups/',
      '/api/v1/auth/users/{parent}/groups/{id}/',
      '/api/v1/auth/users/{parent}/permissions/',
      '/api/v1/auth/users/{parent}/permissions/{id}/',
    ]);
    const ids = operations.flatMap(([, methods]) => Object.values(methods).map(({ operationId, tags }) => ({ operationId, tags })));
    expect(ids).toContainEqual({ operationId: 'authUsersGroupsCreate', tags: ['auth'] });
    expect(ids).toContainEqual({ operationId: 'authUsersPermissionsCreate', tags: ['auth'] });
    const all = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap((methods) => Object.values(methods).map(({ operationId }) => operationId));
    expect(new Set(all).size).toBe(all.length);
  });

  it('ends consistent under concurrent grants, removals and memberships to one group', async () => {
    const editors = await group('editors', ['keep.0', 'drop.0', 'drop.1', 'drop.2', 'drop.3']);
    const users = await Promise.all(Array.from({ length: 8 }, (_, index) => api.user(`member${index}`)));
    const replies = await Promise.all([
      ...Array.from({ length: 8 }, (_, index) => as(root).post(`/api/v1/auth/groups/${editors}/permissions/`, { name: `keep.${index % 4}` })),
      ...Array.from({ length: 8 }, (_, index) => as(root).delete(`/api/v1/auth/groups/${editors}/permissions/?name=drop.${index % 4}`)),
      ...users.flatMap((user) => [user, user].map(() => as(root).post(`/api/v1/auth/groups/${editors}/members/`, { user_id: user.id }))),
      ...users.slice(0, 4).map((user) => as(root).post(`/api/v1/auth/users/${user.id}/groups/`, { group_id: editors })),
    ]);
    for (const reply of replies) expect([201, 204, 400], reply.body).toContain(reply.status);
    const created = replies.filter(({ status }) => status === 201).length;
    // Each of keep.1-3 granted once, each member joined once; every other attempt a 400 (already there).
    expect(created).toBe(3 + users.length);
    const final = (await as(root).get(`/api/v1/auth/groups/${editors}/`)).json;
    expect(final.permissions).toEqual(['keep.0', 'keep.1', 'keep.2', 'keep.3']);
    expect(final.members).toEqual(users.map(({ id }) => id).sort((a, b) => a - b));
  });
});

describe('modelPermissions', () => {
  const Note = model('group_notes', { id: fields.id(), title: fields.string({ maxLength: 50 }) });
  const app = (view: boolean) =>
    withGeneratedMigrations(defineApp({ collections: [collection('notes', { serializer: serializer(Note, { fields: ['id', 'title'], readOnly: ['id'] }), permissions: modelPermissions('notes', { view }) })] }));

  it("asks <collection>.add, .change, .delete (and .view, when asked) of a user or their groups", async () => {
    for (const view of [false, true]) {
      const served = await startApi({}, app(view));
      try {
        const admin = await served.user('admin', { superuser: true });
        const dana = await served.user('dana');
        const call = (method: string, url: string, body?: unknown) => served.request(method, url, { token: dana.token, body });
        expect((await call('GET', '/api/v1/notes/')).status).toBe(view ? 403 : 200);
        expect((await call('POST', '/api/v1/notes/', { title: 'a' })).status).toBe(403);
        const made = await served.request('POST', '/api/v1/auth/groups/', { token: admin.token, body: { name: 'writers' } });
        for (const name of ['notes.view', 'notes.add', 'notes.change']) {
          await served.request('POST', `/api/v1/auth/groups/${made.json.id}/permissions/`, { token: admin.token, body: { name } });
        }
        await served.request('POST', `/api/v1/auth/groups/${made.json.id}/members/`, { token: admin.token, body: { user_id: dana.id } });
        expect((await call('GET', '/api/v1/notes/')).status).toBe(200);
        const note = await call('POST', '/api/v1/notes/', { title: 'a' });
        expect(note.status).toBe(201);
        expect((await call('PATCH', `/api/v1/notes/${note.json.id}/`, { title: 'b' })).status).toBe(200);
        expect((await call('DELETE', `/api/v1/notes/${note.json.id}/`)).status).toBe(403);
      } finally {
        await served.close();
      }
    }
  });
});

describe('two servers on one database', () => {
  let folder: string | undefined;
  afterEach(() => folder && rmSync(folder, { recursive: true, force: true }));

  it("a group's permission removed through one is refused at once by the other", async () => {
    // SQLite: one file both open; PostgreSQL: one schema.
    folder = testDialect === 'sqlite' ? mkdtempSync(join(tmpdir(), 'restfold-groups-')) : undefined;
    const first = await startApi({}, undefined, folder ? { databaseUrl: `sqlite:${join(folder, 'db.sqlite3')}` } : {});
    const second = await startApi({}, undefined, { databaseUrl: first.databaseUrl });
    try {
      const admin = await first.user('admin', { superuser: true });
      const erin = await first.user('erin');
      const tag = await second.request('POST', '/api/v1/tags/', { token: erin.token, body: { name: 'shared' } });
      const made = await first.request('POST', '/api/v1/auth/groups/', { token: admin.token, body: { name: 'editors' } });
      const grant = await first.request('POST', `/api/v1/auth/groups/${made.json.id}/permissions/`, { token: admin.token, body: { name: 'tags.change' } });
      await first.request('POST', `/api/v1/auth/groups/${made.json.id}/members/`, { token: admin.token, body: { user_id: erin.id } });
      const rename = (name: string) => second.request('PATCH', `/api/v1/tags/${tag.json.id}/`, { token: erin.token, body: { name } });
      expect((await rename('a')).status).toBe(200);
      expect((await first.request('DELETE', `/api/v1/auth/groups/${made.json.id}/permissions/${grant.json.id}/`, { token: admin.token })).status).toBe(204);
      expect((await rename('b')).status).toBe(403);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
