/**
 * A permission may answer at once, with a promise, or with any thenable (a check of the user's own):
 * the checks run in order, the first refusal decides (403, or 401 when anonymous), and `anyOf`
 * passes on the first check that passes, for the request and then for the record. The pipeline
 * runs answers that come at once without waiting, so these pin that every kind of answer is still
 * waited for and obeyed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anyOf, collection, defineApp, isOwner, serializer, type Permission } from '../../src/framework/index.js';
import { Note } from '../support/owned-notes.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

/** A thenable that is no Promise, answering `value` later. */
const later = (value: boolean): PromiseLike<boolean> => ({
  then: (resolve, reject) => new Promise<boolean>((done) => setTimeout(() => done(value), 1)).then(resolve, reject),
});

/** Lets a user named in `names` through; answers with `kind`. */
const usersNamed = (kind: 'now' | 'promise' | 'thenable', ...names: string[]): Permission => ({
  description: `users named ${names.join(', ')}`,
  hasPermission: ({ user }) => {
    const passed = user !== null && names.includes(user.username);
    if (kind === 'now') return passed;
    return (kind === 'promise' ? Promise.resolve(passed) : later(passed)) as Promise<boolean>;
  },
});

/** Refuses every record whose text is `locked`, answering later. */
const unlocked: Permission = {
  description: 'records not locked',
  hasPermission: () => true,
  hasObjectPermission: (_context, record) => later(record.text !== 'locked') as Promise<boolean>,
};

const notes = serializer(Note, { fields: ['id', 'text', 'owner_id'] });
const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('mixed', {
        serializer: notes,
        permissions: {
          // Each kind of answer, in turn: all three must pass.
          list: [usersNamed('now', 'alice', 'bob'), usersNamed('thenable', 'alice', 'bob'), usersNamed('promise', 'alice')],
          create: [usersNamed('promise', 'alice', 'bob')],
          // Any one of: a later "no" for bob, then the owner (at once), for the request and then the record.
          retrieve: [anyOf(usersNamed('thenable', 'carol'), isOwner('owner_id')), unlocked],
          partial_update: [anyOf(usersNamed('promise', 'carol'), usersNamed('now', 'alice')), unlocked],
        },
      }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  api = await startApi({}, app);
  alice = await api.user('alice');
  bob = await api.user('bob');
  carol = await api.user('carol');
});
afterAll(() => api.close());

describe('permissions answering at once, with a promise or with a thenable', () => {
  it('passes only when every check passes, whatever kind of answer each gives', async () => {
    expect((await api.request('GET', '/api/v1/mixed/', { token: alice.token })).status).toBe(200);
    // bob passes the first two and is refused by the third, a promise.
    expect((await api.request('GET', '/api/v1/mixed/', { token: bob.token })).json).toMatchObject({ code: 'permission_denied' });
    // carol is refused by the first, at once; anonymous gets 401.
    expect((await api.request('GET', '/api/v1/mixed/', { token: carol.token })).status).toBe(403);
    expect((await api.request('GET', '/api/v1/mixed/')).status).toBe(401);
  });

  it('lets anyOf pass on any one check, for the request and then for the record', async () => {
    const bobs = (await api.request('POST', '/api/v1/mixed/', { token: bob.token, body: { text: 'open' } })).json.id;
    const locked = (await api.request('POST', '/api/v1/mixed/', { token: bob.token, body: { text: 'locked' } })).json.id;
    // bob owns it: the thenable's "no" for bob is waited for, then the owner check passes.
    expect((await api.request('GET', `/api/v1/mixed/${bobs}/`, { token: bob.token })).status).toBe(200);
    // alice passes neither: 403, not 404.
    expect((await api.request('GET', `/api/v1/mixed/${bobs}/`, { token: alice.token })).status).toBe(403);
    // carol passes the first for the request and so for the record (no object check of its own).
    expect((await api.request('GET', `/api/v1/mixed/${bobs}/`, { token: carol.token })).status).toBe(200);
    // The later "no" on the record refuses even its owner.
    expect((await api.request('GET', `/api/v1/mixed/${locked}/`, { token: bob.token })).status).toBe(403);
  });

  it('checks the record before a PATCH writes it, and leaves a refused record as it was', async () => {
    const open = (await api.request('POST', '/api/v1/mixed/', { token: bob.token, body: { text: 'open' } })).json.id;
    const locked = (await api.request('POST', '/api/v1/mixed/', { token: bob.token, body: { text: 'locked' } })).json.id;
    const changed = await api.request('PATCH', `/api/v1/mixed/${open}/`, { token: alice.token, body: { text: 'changed' } });
    expect(changed.json).toMatchObject({ id: open, text: 'changed' });
    expect((await api.request('PATCH', `/api/v1/mixed/${open}/`, { token: bob.token, body: { text: 'again' } })).status).toBe(403);
    expect((await api.request('PATCH', `/api/v1/mixed/${locked}/`, { token: alice.token, body: { text: 'unlocked' } })).status).toBe(403);
    expect((await api.request('GET', `/api/v1/mixed/${locked}/`, { token: carol.token })).status).toBe(403);
    const stored = await api.request('GET', `/api/v1/mixed/${open}/`, { token: carol.token });
    expect(stored.json.text).toBe('changed');
  });
});
