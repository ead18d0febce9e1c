/**
 * The five ways a review found around a scope, each as it was reported, over notes private to their
 * owner (a plain scope, `{ owner_id: user.id }`) reached from public boards, comments and users
 * (test/support/private-notes.ts): alice (A) owns the private notes, bob (B) probes them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateNotesApp, staffOrOwner } from '../support/private-notes.js';
import { startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let alices: number;
let bobs: number;
let board: number;

const send = (method: string, path: string, user: TestUser | undefined, body?: unknown): Promise<Reply> =>
  api.request(method, `/api/v1/${path}`, { token: user?.token, body });

beforeAll(async () => {
  api = await startApi({ API_REQUIRE_AUTH: 'false' }, privateNotesApp(({ user }) => ({ owner_id: user?.id ?? null })));
  alice = await api.user('alice');
  bob = await api.user('bob');
  alices = (await send('POST', 'notes/', alice, { text: 'private' })).json.id;
  bobs = (await send('POST', 'notes/', bob, { text: 'his' })).json.id;
  board = (await send('POST', 'boards/', alice, { name: 'public', notes: [alices] })).json.id;
});
afterAll(() => api.close());

describe('the findings, each closed', () => {
  it('1. an update cannot move a row out of its writer’s scope: PATCH owner_id to another user is 403, and the note stays', async () => {
    const own = (await send('POST', 'notes/', alice, { text: 'to plant' })).json.id;
    const planted = await send('PATCH', `notes/${own}/`, alice, { owner_id: bob.id });
    expect([planted.status, planted.json.code]).toEqual([403, 'permission_denied']);
    expect((await send('GET', `notes/${own}/`, bob)).status).toBe(404);
    expect((await send('GET', `notes/${own}/`, alice)).json).toMatchObject({ id: own, owner_id: alice.id });
  });

  it("2. a many-to-many keeps to the target's scope: ids, filters, writes, and a 400 that enumerates nothing", async () => {
    const read = await send('GET', `boards/${board}/`, bob);
    expect(read.json).toMatchObject({ notes: [], note_details: [], link_count: 0 });
    expect((await send('GET', `boards/?notes=${alices}`, bob)).json.count).toBe(0);
    expect((await send('GET', `boards/?notes__in=${alices},${bobs}`, bob)).json.count).toBe(0);
    const linked = await send('POST', 'boards/', bob, { name: 'mine', notes: [alices] });
    expect([linked.status, linked.json.details]).toEqual([400, { notes: [`Invalid id ${alices}: no such notes.`] }]);
    const probe = await send('POST', 'boards/', bob, { name: 'probe', notes: Array.from({ length: 1000 }, (_, index) => index + 1) });
    expect(probe.json.details.notes[0]).not.toMatch(new RegExp(`\\b${bobs}\\b`));
    expect(probe.json.details.notes[0]).toMatch(new RegExp(`\\b${alices}\\b`));
    expect((await send('GET', `boards/${board}/`, alice)).json.notes).toEqual([alices]);
  });

  it("3. a foreign key keeps to the related collection's scope: naming her note is answered as naming none, and her counts stay hers", async () => {
    const hidden = await send('POST', 'comments/', bob, { text: 'mine', note_id: alices });
    const missing = await send('POST', 'comments/', bob, { text: 'mine', note_id: 999_999 });
    expect([hidden.status, missing.status]).toEqual([400, 400]);
    expect(hidden.json.details.note_id).toEqual([`Invalid id "${alices}": object does not exist.`]);
    expect(missing.json.details.note_id).toEqual(['Invalid id "999999": object does not exist.']);
    expect((await send('GET', `notes/${alices}/`, alice)).json.comment_count).toBe(0);
  });

  it('4. a table served only under a note is read only through the note: her uploads are hidden from bob and from anonymous callers', async () => {
    const upload = (await send('POST', `notes/${alices}/attachments/`, alice, { name: 'secret.pdf' })).json.id;
    expect((await send('GET', `notes/${alices}/attachments/`, bob)).status).toBe(404);
    for (const requester of [bob, undefined]) {
      expect((await send('GET', `people/${alice.id}/?fields=uploads,upload_details`, requester)).json).toEqual({ uploads: [], upload_details: [] });
    }
    expect((await send('GET', `people/${alice.id}/?fields=uploads,upload_details`, alice)).json).toEqual({ uploads: [upload], upload_details: [{ id: upload, name: 'secret.pdf' }] });
  });
});

describe('5. an async scope', () => {
  let served: TestApi;
  beforeAll(async () => {
    served = await startApi({}, privateNotesApp(staffOrOwner));
  });
  afterAll(() => served.close());

  it('is awaited, never read as no conditions: staff see every note, everyone else their own', async () => {
    const [owner, other, staff] = [await served.user('owner'), await served.user('other'), await served.user('staff', { permissions: ['notes.view_all'] })];
    const note = (await served.request('POST', '/api/v1/notes/', { token: owner.token, body: { text: 'private' } })).json.id;
    expect((await served.request('GET', '/api/v1/notes/', { token: other.token })).json.count).toBe(0);
    expect((await served.request('GET', `/api/v1/notes/${note}/`, { token: other.token })).status).toBe(404);
    expect((await served.request('GET', '/api/v1/notes/', { token: staff.token })).json.results).toMatchObject([{ id: note }]);
  });
});
