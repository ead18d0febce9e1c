/**
 * The scope plan (row-level security across tables): which tables an app's declarations make
 * scopedTables, which scoped tables and whose scopes a request to each collection reaches, and
 * what one request evaluates of them. The API tests (test/api/private-notes*.test.ts) show what a
 * client sees of it; these pin the plan itself, table by table.
 */
import { describe, expect, it } from 'vitest';
import { collection, defineApp, fields, joinTable, model, relations, serializer, User, type AppDefinition, type Scope } from '../../src/framework/index.js';
import { filterableTables } from '../../src/framework/app/declared-schema.js';
import { withAppDefaults } from '../../src/framework/routing/routers.js';
import { withNamedFilters } from '../../src/framework/declare/named-filters.js';
import { RESERVED_PARAMETERS } from '../../src/framework/stages/list-params.js';
import { LIMIT_OFFSET_PARAMETERS } from '../../src/framework/actions/limit-offset.js';
import { requestViews, scopePlan, type RequestViews, type ScopePlan } from '../../src/framework/stages/scope/plan.js';
import { isPending } from '../../src/core/maybe-promise.js';
import type { AuthUser } from '../../src/framework/base/auth-user.js';

/** The plan an app is served with (app/app.ts): its collections with the app's defaults and named filters, over its tables. */
function planOf(definition: AppDefinition): ScopePlan {
  const tables = filterableTables(definition);
  const served = withAppDefaults(definition.collections, definition).map((served) => withNamedFilters(served, tables, [...RESERVED_PARAMETERS, ...LIMIT_OFFSET_PARAMETERS]));
  return scopePlan(served, tables);
}

const Note = model('notes', { id: fields.id(), text: fields.string({ maxLength: 100 }), owner_id: fields.foreignKey('users') });
const Comment = model('comments', { id: fields.id(), text: fields.string({ maxLength: 100 }), note_id: fields.foreignKey('notes') });
const Attachment = model('attachments', { id: fields.id(), name: fields.string({ maxLength: 100 }), note_id: fields.foreignKey('notes') });
const Board = model('boards', { id: fields.id(), name: fields.string({ maxLength: 100 }) });
const Tag = model('tags', { id: fields.id(), name: fields.string({ maxLength: 50 }) });
/** Tables no collection serves: pins name a note, pin logs a pin, drafts a board, visits a user. */
const Pin = model('pins', { id: fields.id(), note_id: fields.foreignKey('notes', { nullable: true }) });
const PinLog = model('pin_logs', { id: fields.id(), pin_id: fields.foreignKey('pins') });
const Draft = model('drafts', { id: fields.id(), board_id: fields.foreignKey('boards') });
const Visit = model('visits', { id: fields.id(), user_id: fields.foreignKey('users') });
const boardNotes = joinTable('boards', 'notes');

/** The scope of notes (their owner's), counting how often it is asked. */
function ownerScope(): { scope: Scope; asked: () => number } {
  let asked = 0;
  return {
    scope: ({ user }) => {
      asked += 1;
      return { owner_id: user?.id ?? null };
    },
    asked: () => asked,
  };
}

function notesApp(scope: Scope, extra: ReturnType<typeof collection>[] = []): AppDefinition {
  const notes = collection('notes', { serializer: serializer(Note, { fields: ['id', 'text', 'owner_id'] }), scope });
  return defineApp({
    collections: [
      notes,
      collection('attachments', { serializer: serializer(Attachment, { fields: ['id', 'name', 'note_id'], readOnly: ['note_id'] }), parent: { collection: notes, field: 'note_id' } }),
      collection('comments', { serializer: serializer(Comment, { fields: ['id', 'text', 'note_id'] }) }),
      collection('boards', { serializer: serializer(Board, { fields: ['id', 'name', 'notes'], relations: { notes: relations.manyToMany(boardNotes) } }) }),
      collection('tags', { serializer: serializer(Tag, { fields: ['id', 'name'] }) }),
      ...extra,
    ],
    // Pin logs before pins: restricting them takes a second pass.
    models: [PinLog, Pin, Draft, Visit],
  });
}

const sorted = (names: Iterable<string>): string[] => [...names].sort();
/** What a request to `name` reaches: the scoped tables besides its own, and the collections whose scopes it needs. */
const reachOf = (plan: ScopePlan, name: string) => ({ tables: sorted(plan.reach.get(name)!.tables), scopes: sorted(plan.reach.get(name)!.collections.map((needed) => needed.name)) });

const alice = { id: 5, username: 'alice' } as AuthUser;
const context = { user: alice, parameters: new Map<string, string>() };

/** One request's views, resolved (a scope that answers later is awaited). */
async function viewsFor(plan: ScopePlan, name: string): Promise<RequestViews> {
  return requestViews(plan, plan.collections.get(name)!, context);
}

describe('the scoped tables', () => {
  const plan = planOf(notesApp(ownerScope().scope));

  it("are a scoped collection's table, a table served only under a scoped parent, and the tables no collection serves whose keys name one", () => {
    expect(sorted(plan.scopedTables)).toEqual(['attachments', 'boards_notes', 'notes', 'pin_logs', 'pins']);
  });

  it('leave whole a table a collection shows whole, and an unserved table whose keys name only whole ones', () => {
    for (const table of ['comments', 'boards', 'tags', 'users', 'drafts', 'visits']) expect(plan.scopedTables.has(table), table).toBe(false);
  });

  it('are whole when another collection shows the table whole (permissive views are ORed), and nothing hangs from them then', () => {
    const whole = planOf(notesApp(ownerScope().scope, [collection('all-notes', { serializer: serializer(Note, { name: 'AllNotes', fields: ['id', 'text'] }) })]));
    expect(sorted(whole.scopedTables)).toEqual(['attachments']);
    // A nested request still looks its parent up within the parent collection's scope.
    expect(reachOf(whole, 'attachments')).toEqual({ tables: [], scopes: ['attachments', 'notes'] });
  });

  it("hold a singleton's table, and what names it", () => {
    const me = collection('me', { serializer: serializer(User, { name: 'Me', fields: ['id', 'username'] }), singleton: ({ user }) => user?.id });
    const withMe = planOf(notesApp(ownerScope().scope, [me]));
    expect(sorted(withMe.scopedTables)).toEqual(['attachments', 'boards_notes', 'notes', 'pin_logs', 'pins', 'users', 'visits']);
  });

  it('are none in an app with no scope, no singleton and no nested collection under one', () => {
    const open = planOf(defineApp({ collections: [collection('tags', { serializer: serializer(Tag, { fields: ['id', 'name'] }) })], models: [Visit] }));
    expect(open.scopedTables.size).toBe(0);
  });

  it('follow a cycle of unserved tables without looping', () => {
    const Left = model('lefts', { id: fields.id(), note_id: fields.foreignKey('notes'), right_id: fields.foreignKey('rights', { nullable: true }) });
    const Right = model('rights', { id: fields.id(), left_id: fields.foreignKey('lefts', { nullable: true }) });
    const cyclic = planOf(defineApp({ collections: notesApp(ownerScope().scope).collections, models: [Left, Right] }));
    expect(cyclic.scopedTables.has('lefts') && cyclic.scopedTables.has('rights')).toBe(true);
  });
});

describe("what a collection's requests reach besides its own rows (which its own scope keeps)", () => {
  const plan = planOf(notesApp(ownerScope().scope));

  it.each([
    ['notes', { tables: [], scopes: ['notes'] }],
    ['attachments', { tables: ['notes'], scopes: ['attachments', 'notes'] }],
    ['comments', { tables: ['notes'], scopes: ['comments', 'notes'] }],
    ['boards', { tables: ['boards_notes', 'notes'], scopes: ['boards', 'notes'] }],
    ['tags', { tables: [], scopes: ['tags'] }],
  ])('%s: %j', (name, expected) => {
    expect(reachOf(plan, name)).toEqual(expected);
  });
});

describe("one request's views", () => {
  it("evaluate each scope the request needs once, and none it does not: a tags request never asks the notes' scope", async () => {
    const notes = ownerScope();
    const plan = planOf(notesApp(notes.scope));
    const boards = await viewsFor(plan, 'boards');
    expect(notes.asked()).toBe(1);
    boards.tableScopes!.scopesOf('notes');
    boards.tableScopes!.scopesOf('boards_notes');
    expect(notes.asked()).toBe(1);
    await viewsFor(plan, 'tags');
    expect(notes.asked()).toBe(1);
  });

  it('resolve at once where no scope answers later, and after it where one does', async () => {
    const plan = planOf(notesApp(({ user }) => Promise.resolve({ owner_id: user!.id })));
    expect(isPending(requestViews(plan, plan.collections.get('boards')!, context))).toBe(true);
    expect(isPending(requestViews(plan, plan.collections.get('tags')!, context))).toBe(false);
    const views = await viewsFor(plan, 'notes');
    expect(views.scopeOf(plan.collections.get('notes')!)?.conditions).toEqual([{ field: 'owner_id', lookup: 'exact', value: 5 }]);
  });

  it("keep a scoped table within its scope's conditions for the requester, and leave whole tables whole", async () => {
    const plan = planOf(notesApp(ownerScope().scope));
    const { tableScopes } = await viewsFor(plan, 'comments');
    expect(tableScopes!.scopesOf('notes')!.map((view) => view.conditions)).toEqual([[{ field: 'owner_id', lookup: 'exact', value: 5 }]]);
    expect(tableScopes!.scopesOf('comments')).toBeUndefined();
    expect(tableScopes!.scopesOf('boards')).toBeUndefined();
  });

  it('refuse a statement over a scoped table the request did not resolve (fail closed), never reading it whole', async () => {
    const plan = planOf(notesApp(ownerScope().scope));
    const { tableScopes } = await viewsFor(plan, 'comments');
    expect(() => tableScopes!.scopesOf('pins')).toThrow('comments: a statement reached the scoped table pins, which this request did not resolve.');
    const tags = await viewsFor(plan, 'tags');
    expect(() => tags.tableScopes!.scopesOf('notes')).toThrow('tags: a statement reached the scoped table notes');
  });

  it('hand the store no tableScopes in an app with no scoped table, and ask no scope there', async () => {
    const plan = planOf(defineApp({ collections: [collection('tags', { serializer: serializer(Tag, { fields: ['id', 'name'] }) })] }));
    const views = await viewsFor(plan, 'tags');
    expect(views.tableScopes).toBeUndefined();
    expect(views.scopeOf(plan.collections.get('tags')!)).toBeUndefined();
  });
});
