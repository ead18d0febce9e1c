/**
 * Row-level security on every path to a row (test/support/private-notes.ts): alice's private notes,
 * linked from public boards, commented on, with attachments under them, are as if they did not exist
 * for bob and for anonymous callers, on every path around the notes collection: many-to-many ids,
 * nested records and filters, aggregates (over the notes and over the join table), named filters,
 * ordering, `?fields=`, cursor pages, custom actions, ETags, reverse relations to a table served only
 * under a note; writes naming a note bob may not see are answered as writes naming no note, and a
 * write cannot move a note out of its writer's scope. An async scope is awaited, and one that
 * answers no conditions fails closed.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, serializer } from '../../src/framework/index.js';
import { Note } from '../support/owned-notes.js';
import { privateNotesApp } from '../support/private-notes.js';
import { startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';
import { recording } from '../support/statements.js';

const sent: string[] = [];
const logged: string[] = [];
let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let staff: TestUser;
let bobs: number;
let alices: number;
let alicesOther: number;
let pub: number;
let other: number;
let attachment: number;
/** Bob's and an anonymous caller's answers before alice wrote anything, and after. */
let before: Record<string, unknown>;
let after: Record<string, unknown>;

const MISSING = 999_999;

const post = async (path: string, user: TestUser, body: unknown): Promise<Reply> => api.request('POST', `/api/v1/${path}`, { token: user.token, body });
const created = async (path: string, user: TestUser, body: unknown): Promise<number> => {
  const reply = await post(path, user, body);
  expect(reply.status, reply.body).toBe(201);
  return reply.json.id;
};
const get = (path: string, user?: TestUser): Promise<Reply> => api.request('GET', `/api/v1/${path}`, { token: user?.token });
const ids = (reply: Reply): number[] => reply.json.results.map((record: { id: number }) => record.id);

/** What a requester is shown at each path that may reach alice's notes: status, body and ETag. */
async function views(): Promise<Record<string, unknown>> {
  const paths = [
    'boards/',
    'boards/?ordering=-link_count',
    `boards/${pub}/`,
    `boards/${pub}/?fields=notes,link_count`,
    `boards/${pub}/summary/`,
    'boards/?pins=hers',
    'board-pages/',
    'people/',
    'people/?ordering=-note_count',
    `people/${alice.id}/`,
    `people/${alice.id}/?fields=uploads,upload_details,note_ids`,
    'notes/',
    'comments/',
    'comments/?pin=hers',
  ];
  const shown: Record<string, unknown> = {};
  for (const requester of [bob, undefined]) {
    for (const path of paths) {
      const reply = await get(path, requester);
      shown[`${requester?.username ?? 'anonymous'} ${path}`] = { status: reply.status, body: reply.json, etag: reply.headers.etag };
    }
  }
  return shown;
}

beforeAll(async () => {
  api = await startApi({ API_REQUIRE_AUTH: 'false', LOG_LEVEL: 'error' }, privateNotesApp(), {
    appDatabase: recording(sent),
    logStream: new Writable({
      write(line: Buffer, _encoding, done) {
        logged.push(line.toString('utf8'));
        done();
      },
    }),
  });
  alice = await api.user('alice');
  bob = await api.user('bob');
  staff = await api.user('carol', { permissions: ['notes.view_all'] });
  bobs = await created('notes/', bob, { text: 'bob one' });
  pub = await created('boards/', bob, { name: 'public', notes: [bobs] });
  other = await created('boards/', bob, { name: 'other', notes: [] });
  before = await views();
  // Alice's private notes, linked to both public boards (her write leaves bob's link to his note as it was), and a file under one.
  alices = await created('notes/', alice, { text: 'alice secret' });
  alicesOther = await created('notes/', alice, { text: 'alice two' });
  const linked = await api.request('PATCH', `/api/v1/boards/${pub}/`, { token: alice.token, body: { notes: [alices] } });
  expect(linked.json).toMatchObject({ notes: [alices], link_count: 1 });
  await api.request('PATCH', `/api/v1/boards/${other}/`, { token: alice.token, body: { notes: [alices, alicesOther] } });
  attachment = await created(`notes/${alices}/attachments/`, alice, { name: 'secret.pdf' });
  await created('pins/', alice, { code: 'hers' });
  await api.request('PATCH', `/api/v1/boards/${pub}/`, { token: alice.token, body: { pins: ['hers'] } });
  after = await views();
});
afterAll(() => api.close());

describe("what bob reads: alice's private notes as if they did not exist", () => {
  it('shows him and an anonymous caller exactly what they were shown before alice wrote them, ETags included, on every path', () => {
    expect(Object.keys(after)).toHaveLength(28);
    for (const [path, shown] of Object.entries(after)) expect(shown, path).toEqual(before[path]);
  });

  it('shows them to alice, and to staff (every link, every file), on the same paths', async () => {
    expect((await get(`boards/${pub}/`, alice)).json).toMatchObject({ notes: [alices], note_details: [{ id: alices, text: 'alice secret' }], link_count: 1, has_links: true, pins: ['hers'] });
    expect(ids(await get('boards/?pins=hers', alice))).toEqual([pub]);
    expect((await get(`boards/${other}/`, alice)).json).toMatchObject({ notes: [alices, alicesOther], link_count: 2, has_links: true });
    expect((await get(`boards/${pub}/`, bob)).json).toMatchObject({ notes: [bobs], note_details: [{ id: bobs, text: 'bob one' }], link_count: 1 });
    expect((await get(`boards/${other}/`, bob)).json).toMatchObject({ notes: [], note_details: [], link_count: 0, has_links: false });
    expect((await get(`boards/${pub}/`, staff)).json).toMatchObject({ notes: [bobs, alices], link_count: 2 });
    expect((await get(`boards/${pub}/summary/`, alice)).json).toEqual({ notes: [alices] });
    const uploads = await get(`people/${alice.id}/?fields=uploads,upload_details,note_ids,note_count`, alice);
    expect(uploads.json).toEqual({ uploads: [attachment], upload_details: [{ id: attachment, name: 'secret.pdf' }], note_ids: [alices, alicesOther], note_count: 2 });
    expect((await get(`people/${alice.id}/?fields=uploads,note_count`, bob)).json).toEqual({ uploads: [], note_count: 0 });
    expect((await get('people/?ordering=-note_count', staff)).json.results[0]).toMatchObject({ id: alice.id, note_count: 2 });
  });

  it('matches no board, nor user, through a note he may not see: as through one that does not exist', async () => {
    for (const [path, missing, aliceFinds] of [
      [`boards/?notes=${alices}`, `boards/?notes=${MISSING}`, [pub, other]],
      [`boards/?notes__in=${alices},${alicesOther}`, `boards/?notes__in=${MISSING},${MISSING + 1}`, [pub, other]],
      ['boards/?note_text=alice%20secret', 'boards/?note_text=nothing', [pub, other]],
      [`people/?uploads=${attachment}`, `people/?uploads=${MISSING}`, [alice.id]],
      ['people/?wrote=alice%20two', 'people/?wrote=nothing', [alice.id]],
    ] as const) {
      expect(ids(await get(path, bob)), path).toEqual([]);
      expect((await get(path, bob)).json).toEqual((await get(missing, bob)).json);
      expect(ids(await get(path, alice)), path).toEqual(aliceFinds);
    }
    expect(ids(await get(`boards/?notes__in=${alices},${bobs}`, bob))).toEqual([pub]);
  });

  it("renders the note a public comment names as null, and matches no comment through it, but for those who may see it", async () => {
    const comment = await created('comments/', alice, { text: 'about my secret', note_id: alices, pin: 'hers' });
    const shown = await get(`comments/${comment}/`, bob);
    // The comment's own column is the comment's, and public: its note is not, nor its pin's code.
    expect(shown.json).toMatchObject({ id: comment, note_id: alices, note: null, pin: null });
    expect((await get(`comments/${comment}/`, alice)).json).toMatchObject({ note: { id: alices, text: 'alice secret' }, pin: 'hers' });
    for (const filter of ['about=alice%20secret', 'note__text=alice%20secret', 'pin=hers']) {
      expect(ids(await get(`comments/?${filter}`, bob)), filter).toEqual([]);
      expect(ids(await get(`comments/?${filter}`, alice)), filter).toEqual([comment]);
    }
    // Alice's count of comments on her note is hers to read.
    expect((await get(`notes/${alices}/`, alice)).json.comment_count).toBe(1);
  });

  it('answers the collection served only under a note as it answers one under no note', async () => {
    for (const path of [`notes/${alices}/attachments/`, `notes/${alices}/attachments/${attachment}/`]) {
      const hidden = await get(path, bob);
      const missing = await get(path.replace(String(alices), String(MISSING)), bob);
      expect([hidden.status, hidden.json]).toEqual([404, missing.json]);
    }
    expect(ids(await get(`notes/${alices}/attachments/`, alice))).toEqual([attachment]);
  });

  it('reads a list in as many statements whatever the number of boards and links it shows', async () => {
    const statements = async (path: string) => {
      sent.length = 0;
      expect((await get(path, bob)).status).toBe(200);
      return sent.length;
    };
    const few = await statements('boards/?page_size=2');
    const people = await statements('people/?page_size=2');
    await post('boards/', bob, Array.from({ length: 10 }, (_, index) => ({ name: `more ${index}`, notes: [bobs] })));
    await post('boards/', alice, Array.from({ length: 10 }, (_, index) => ({ name: `hers ${index}`, notes: [alices, alicesOther] })));
    expect(await statements('boards/?page_size=22')).toBe(few);
    expect(await statements('people/?page_size=10')).toBe(people);
  });
});

describe("what bob writes: never alice's notes, nor a note out of his own reach", () => {
  it('refuses an update that would move his note into another user’s scope (403), storing nothing of it', async () => {
    for (const [method, body] of [
      ['PATCH', { owner_id: alice.id }],
      ['PATCH', { text: 'planted', owner_id: alice.id }],
      ['PUT', { text: 'planted', owner_id: alice.id }],
    ] as const) {
      const moved = await api.request(method, `/api/v1/notes/${bobs}/`, { token: bob.token, body });
      expect([moved.status, moved.json.code]).toEqual([403, 'permission_denied']);
    }
    expect((await get(`notes/${bobs}/`, bob)).json).toMatchObject({ id: bobs, text: 'bob one', owner_id: bob.id });
    expect(ids(await get('notes/', alice))).toEqual([alices, alicesOther]);
    // Within his scope, the same fields write as ever; staff, whose scope is every note, may give a note away.
    expect((await api.request('PATCH', `/api/v1/notes/${bobs}/`, { token: bob.token, body: { owner_id: bob.id, text: 'bob one' } })).status).toBe(200);
    const given = await created('notes/', staff, { text: 'a gift' });
    const away = await api.request('PATCH', `/api/v1/notes/${given}/`, { token: staff.token, body: { owner_id: bob.id } });
    expect(away.json).toMatchObject({ id: given, owner_id: bob.id });
    expect((await api.request('DELETE', `/api/v1/notes/${given}/`, { token: bob.token })).status).toBe(204);
  });

  it('refuses a create outside his scope as before (403), one note or a bulk of them', async () => {
    expect((await post('notes/', bob, { text: 'planted', owner_id: alice.id })).status).toBe(403);
    expect((await post('notes/', bob, [{ text: 'mine' }, { text: 'planted', owner_id: alice.id }])).status).toBe(403);
    expect(ids(await get('notes/', alice))).toEqual([alices, alicesOther]);
    expect(ids(await get('notes/', bob))).toEqual([bobs]);
  });

  it('answers a many-to-many naming her note as one naming no note: same status, same words, nothing stored', async () => {
    const boardsBefore = (await get('boards/', bob)).json.count;
    const hidden = await post('boards/', bob, { name: 'mine', notes: [alices] });
    const missing = await post('boards/', bob, { name: 'mine', notes: [MISSING] });
    expect(hidden.status).toBe(400);
    expect(JSON.stringify(hidden.json).replaceAll(String(alices), 'N')).toBe(JSON.stringify(missing.json).replaceAll(String(MISSING), 'N'));
    expect(hidden.json.details).toEqual({ notes: [`Invalid id ${alices}: no such notes.`] });
    const changed = await api.request('PATCH', `/api/v1/boards/${pub}/`, { token: bob.token, body: { notes: [bobs, alices] } });
    expect([changed.status, changed.json.details]).toEqual([400, { notes: [`Invalid id ${alices}: no such notes.`] }]);
    expect((await get('boards/', bob)).json.count).toBe(boardsBefore);
    expect((await get(`boards/${pub}/`, alice)).json.notes).toEqual([alices]);
    // His own write of the board's links answers with what he may see, and leaves hers as they were.
    const rewritten = await api.request('PATCH', `/api/v1/boards/${pub}/`, { token: bob.token, body: { name: 'public', notes: [bobs] } });
    expect(rewritten.json).toMatchObject({ notes: [bobs], note_details: [{ id: bobs }], link_count: 1, pins: [] });
    expect((await get(`boards/${pub}/`, alice)).json).toMatchObject({ notes: [alices], pins: ['hers'] });
  });

  it('tells of no note beyond those he sent and may see, however many ids he sends', async () => {
    const sentIds = Array.from({ length: 1000 }, (_, index) => index + 1);
    const probe = await post('boards/', bob, { name: 'probe', notes: sentIds });
    expect(probe.status).toBe(400);
    const [message] = probe.json.details.notes as [string];
    const listed = message.replace(/^Invalid ids /, '').replace(/: no such notes\.$/, '').split(', ').map(Number);
    // Exactly the ids sent that name no note he may see: his own are the only ones left out.
    expect(listed).toEqual(sentIds.filter((id) => id !== bobs));
  });

  it('answers a foreign key naming her note as one naming no note, in a create, an update and a bulk create', async () => {
    const hidden = await post('comments/', bob, { text: 'mine now', note_id: alices });
    const missing = await post('comments/', bob, { text: 'mine now', note_id: MISSING });
    expect(hidden.status).toBe(400);
    expect(JSON.stringify(hidden.json).replaceAll(String(alices), 'N')).toBe(JSON.stringify(missing.json).replaceAll(String(MISSING), 'N'));
    expect(hidden.json.details).toEqual({ note_id: [`Invalid id "${alices}": object does not exist.`] });
    const own = await created('comments/', bob, { text: 'on mine', note_id: bobs });
    const moved = await api.request('PATCH', `/api/v1/comments/${own}/`, { token: bob.token, body: { note_id: alices } });
    expect([moved.status, moved.json.details]).toEqual([400, { note_id: [`Invalid id "${alices}": object does not exist.`] }]);
    const bulk = await post('comments/', bob, [{ text: 'fine', note_id: bobs }, { text: 'not fine', note_id: alices }]);
    expect([bulk.status, bulk.json.details]).toEqual([400, { '1.note_id': [`Invalid id "${alices}": object does not exist.`] }]);
    const bobsComments = (await get('comments/', bob)).json.results.filter((comment: { author_id: number }) => comment.author_id === bob.id);
    expect(bobsComments.map((comment: { id: number }) => comment.id)).toEqual([own]);
    // Her note's count of comments is as she left it.
    expect((await get(`notes/${alices}/`, alice)).json.comment_count).toBe(1);
  });

  it('answers a slug or a many-to-many of slugs naming her pin as one naming no pin', async () => {
    for (const [path, body, field] of [
      ['comments/', (pin: string) => ({ text: 'pinned', note_id: bobs, pin }), 'pin'],
      ['boards/', (pin: string) => ({ name: 'pinned', pins: [pin] }), 'pins'],
    ] as const) {
      const hidden = await post(path, bob, body('hers'));
      const missing = await post(path, bob, body('nobodys'));
      expect(hidden.status).toBe(400);
      expect(JSON.stringify(hidden.json).replaceAll('hers', 'X')).toBe(JSON.stringify(missing.json).replaceAll('nobodys', 'X'));
      expect(hidden.json.details[field][0]).toContain('"hers"');
    }
  });

  it('cannot write under her note: a parent out of reach is 404, as a parent that does not exist', async () => {
    const hidden = await post(`notes/${alices}/attachments/`, bob, { name: 'planted.pdf' });
    const missing = await post(`notes/${MISSING}/attachments/`, bob, { name: 'planted.pdf' });
    expect([hidden.status, hidden.json]).toEqual([404, missing.json]);
    expect(ids(await get(`notes/${alices}/attachments/`, alice))).toEqual([attachment]);
  });
});

describe('an async scope', () => {
  it('is awaited: staff see every note, everyone else their own', async () => {
    expect(ids(await get('notes/', staff))).toEqual(expect.arrayContaining([bobs, alices, alicesOther]));
    expect(ids(await get('notes/', bob))).toEqual([bobs]);
    expect(ids(await get('notes/'))).toEqual([]);
  });

  it('fails closed when it answers no conditions: a 500 whose log names the collection, never every row', async () => {
    for (const [name, problem] of [
      ['forgotten', 'undefined'],
      ['misspelt', 'txet'],
    ]) {
      logged.length = 0;
      const reply = await get(`${name}/`, bob);
      expect([reply.status, reply.json.code]).toEqual([500, 'server_error']);
      expect(reply.body).not.toContain(name);
      const [line] = logged.map((text) => JSON.parse(text) as { err?: { message: string } }).filter(({ err }) => err);
      expect(line!.err!.message).toMatch(new RegExp(`^${name}: its scope answered \\W?${problem}`));
    }
  });

  it('is refused at start-up when it is no function of the request', () => {
    const declared = { serializer: serializer(Note, { fields: ['id', 'text'] }), scope: { owner_id: 1 } as never };
    expect(() => collection('fixed', declared)).toThrow(/fixed: scope must be a function of the request/);
    const [notes] = privateNotesApp().collections;
    expect(() => defineApp({ collections: [{ ...notes!, scope: { owner_id: 1 } as never }] })).toThrow(/notes: scope must be a function of the request/);
  });
});
