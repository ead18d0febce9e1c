/**
 * A delete whose object permissions can be said as conditions (isOwner, and anyOf where one of its
 * permissions has them) carries them in its one DELETE, through HTTP: no transaction, no locked
 * read. Only when it deletes nothing is the record read (locked) to answer 403 rather than 404. A
 * permission of the app's own with no conditions, or an anyOf whose union is no list of
 * conditions, reads the record first as before. Concurrent deletes on PostgreSQL's parallel
 * connections: one 204, the rest 404.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { anyOf, collection, defineApp, fields, hasPermission, isOwner, model, serializer, type Permission } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const Note = model('notes', {
  id: fields.id(),
  text: fields.string({ maxLength: 100 }),
  shared: fields.boolean({ default: false }),
  author_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
  editor_id: fields.foreignKey('users', { nullable: true }),
});

const shape = serializer(Note, { fields: ['id', 'text', 'shared', 'author_id', 'editor_id'] });

// An app's own object check, with no conditions said: the record is read and checked first.
const unshared: Permission = {
  description: 'a note that is not shared',
  hasPermission: ({ user }) => user !== null,
  hasObjectPermission: (_context, record) => !record.shared,
};

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('notes', { serializer: shape, permissions: { destroy: [anyOf(hasPermission('notes.delete'), isOwner('author_id'))] } }),
      collection('drafts', { serializer: shape, permissions: { destroy: [isOwner('author_id'), unshared] } }),
      // Two owners: their union is no list of conditions.
      collection('pairs', { serializer: shape, permissions: { destroy: [anyOf(isOwner('author_id'), isOwner('editor_id'))] } }),
      // Scoped to the notes a user wrote or edits: a note outside it is 404, whoever asks.
      collection('mine', { serializer: shape, scope: ({ user }) => ({ editor_id: user?.id ?? null }), permissions: { destroy: [isOwner('author_id')] } }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let editor: TestUser;
let admin: TestUser;
const sent: string[] = [];

beforeAll(async () => {
  api = await startApi({}, app, { appDatabase: recording(sent) });
  alice = await api.user('alice');
  bob = await api.user('bob');
  editor = await api.user('editor', { permissions: ['notes.delete'] });
  admin = await api.user('admin', { superuser: true });
});
afterAll(() => api.close());
beforeEach(() => {
  sent.length = 0;
});

const create = async (path: string, by: TestUser, body: Record<string, unknown> = {}): Promise<number> => {
  const reply = await api.request('POST', `/api/v1/${path}/`, { token: by.token, body: { text: 'a note', ...body } });
  expect(reply.status).toBe(201);
  return reply.json.id;
};

/** What the delete sent to the database, after the token's user was read. */
async function deleting(path: string, id: number, by: TestUser): Promise<{ status: number; statements: string[] }> {
  sent.length = 0;
  const reply = await api.request('DELETE', `/api/v1/${path}/${id}/`, { token: by.token });
  return { status: reply.status, statements: sent.filter((text) => !/auth_tokens|auth_user|permission/i.test(text)) };
}

const exists = async (path: string, id: number): Promise<boolean> => (await api.request('GET', `/api/v1/${path}/${id}/`, { token: admin.token })).status === 200;
const locked = (statements: readonly string[]): boolean => statements.some((text) => /^select/i.test(text.trim()));
const deletes = (statements: readonly string[]): string[] => statements.filter((text) => /^delete/i.test(text.trim()));

describe('a delete carrying its object permission as conditions', () => {
  it('deletes the owner’s record in one DELETE that names the owner, with no read first', async () => {
    const id = await create('notes', alice);
    const { status, statements } = await deleting('notes', id, alice);
    expect(status).toBe(204);
    expect(locked(statements)).toBe(false);
    expect(deletes(statements)).toHaveLength(1);
    expect(deletes(statements)[0]).toMatch(/author_id/);
    expect(await exists('notes', id)).toBe(false);
  });

  it('refuses another user 403 (the record then read to tell), and keeps the record', async () => {
    const id = await create('notes', alice);
    const { status, statements } = await deleting('notes', id, bob);
    expect(status).toBe(403);
    expect(locked(statements)).toBe(true);
    expect(await exists('notes', id)).toBe(true);
  });

  it('answers 404 for a record that is not there', async () => {
    expect((await deleting('notes', 999_999, alice)).status).toBe(404);
  });

  it('deletes anyone’s record for a user holding the permission, or a superuser, by key alone', async () => {
    for (const by of [editor, admin]) {
      const id = await create('notes', alice);
      const { status, statements } = await deleting('notes', id, by);
      expect(status).toBe(204);
      expect(locked(statements)).toBe(false);
      expect(deletes(statements)).toHaveLength(1);
      expect(deletes(statements)[0]).not.toMatch(/author_id/);
      expect(await exists('notes', id)).toBe(false);
    }
  });

  it('reads and checks the record first where a permission says no conditions', async () => {
    const shared = await create('drafts', alice, { shared: true });
    const refused = await deleting('drafts', shared, alice);
    expect(refused.status).toBe(403);
    expect(locked(refused.statements)).toBe(true);
    expect(await exists('drafts', shared)).toBe(true);
    const own = await create('drafts', alice);
    const done = await deleting('drafts', own, alice);
    expect(done.status).toBe(204);
    expect(locked(done.statements)).toBe(true);
  });

  it('reads the record first where the conditions would be a union, and lets either owner delete', async () => {
    const id = await create('pairs', alice, { editor_id: bob.id });
    expect((await deleting('pairs', id, editor)).status).toBe(403);
    const { status, statements } = await deleting('pairs', id, bob);
    expect(status).toBe(204);
    expect(locked(statements)).toBe(true);
  });

  it('keeps to the scope: a record outside it is 404 even to its owner, and stays', async () => {
    const hidden = await create('notes', alice, { editor_id: bob.id });
    expect((await deleting('mine', hidden, alice)).status).toBe(404);
    expect(await exists('notes', hidden)).toBe(true);
    const seen = await create('mine', alice, { editor_id: alice.id });
    const { status, statements } = await deleting('mine', seen, alice);
    expect(status).toBe(204);
    expect(locked(statements)).toBe(false);
    expect(deletes(statements)).toHaveLength(1);
  });

  it('lets one of many concurrent deletes of a record succeed, the rest 404, and others’ refused', async () => {
    const id = await create('notes', alice);
    const replies = await Promise.all([
      ...Array.from({ length: 12 }, () => api.request('DELETE', `/api/v1/notes/${id}/`, { token: alice.token })),
      ...Array.from({ length: 4 }, () => api.request('DELETE', `/api/v1/notes/${id}/`, { token: bob.token })),
    ]);
    const owners = replies.slice(0, 12).map(({ status }) => status);
    expect(owners.filter((status) => status === 204)).toHaveLength(1);
    expect(owners.filter((status) => status === 404)).toHaveLength(11);
    // Bob is refused while the note is there, and finds it gone after.
    for (const { status } of replies.slice(12)) expect([403, 404]).toContain(status);
    expect(await exists('notes', id)).toBe(false);
  });
});
