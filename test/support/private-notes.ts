/**
 * An app whose notes are private to their owner (staff, holding `notes.view_all`, see every one: an
 * async scope), reached from public collections through every relation kind the framework offers:
 * a many-to-many from boards (ids, nested records, an aggregate over its join table, filters, a named
 * filter, ordering, a cursor page, a custom action), a foreign key from comments (nested, filtered,
 * written), a collection served only under a note (attachments), the users' reverse relations
 * and aggregates over notes and attachments, and pins (private too) named by their code: a
 * many-to-many of codes from boards, a slug from comments. The rule under test: for any other requester, a
 * private note and what hangs from it are as if they did not exist.
 */
import { collection, computed, defineApp, fields, joinTable, model, relations, serializer, User, type AppDefinition, type Scope } from '../../src/framework/index.js';
import { Note } from './owned-notes.js';
import { withGeneratedMigrations } from './migrations.js';

export const Board = model('boards', { id: fields.id(), name: fields.string({ maxLength: 100 }) });
export const Pin = model('pins', {
  id: fields.id(),
  code: fields.string({ maxLength: 50, unique: true }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
export const Comment = model('comments', {
  id: fields.id(),
  text: fields.string({ maxLength: 100 }),
  note_id: fields.foreignKey('notes'),
  pin_id: fields.foreignKey('pins', { nullable: true }),
  author_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
export const Attachment = model('attachments', {
  id: fields.id(),
  name: fields.string({ maxLength: 100 }),
  note_id: fields.foreignKey('notes'),
  uploader_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const boardNotes = joinTable('boards', 'notes');
const boardPins = joinTable('boards', 'pins');
const pins = collection('pins', { serializer: serializer(Pin, { fields: ['id', 'code'] }), scope: ({ user }) => ({ owner_id: user?.id ?? null }) });

const noteSummary = serializer(Note, { name: 'NoteSummary', fields: ['id', 'text'] });
const attachmentSummary = serializer(Attachment, { name: 'AttachmentSummary', fields: ['id', 'name'] });

/** The recipe: staff see every note, everyone else their own (a permission is asked of the user: the scope is async). */
export const staffOrOwner: Scope = async ({ user }) => ((await user?.hasPermission('notes.view_all')) ? {} : { owner_id: user?.id ?? null });

const noteSerializer = serializer(Note, {
  fields: ['id', 'text', 'owner_id', 'comment_count'],
  computed: { comment_count: computed.count('comments', 'note_id') },
});
const attachmentSerializer = serializer(Attachment, { fields: ['id', 'name', 'note_id', 'uploader_id'], readOnly: ['note_id', 'uploader_id'] });

const boardSerializer = serializer(Board, {
  fields: ['id', 'name', 'notes', 'note_details', 'link_count', 'has_links', 'pins'],
  relations: {
    notes: relations.manyToMany(boardNotes),
    note_details: relations.manyToMany(boardNotes, { serializer: noteSummary }),
    pins: relations.manyToMany(boardPins, { slug: { target: Pin, field: 'code' } }),
  },
  // Aggregates over the join table itself: a link to a note the requester may not see is as absent as the note.
  computed: { link_count: computed.count('boards_notes', 'board_id'), has_links: computed.exists('boards_notes', 'board_id') },
});

const boards = collection('boards', {
  serializer: boardSerializer,
  filterFields: ['notes', 'pins'],
  filters: { note_text: 'notes__text' },
  orderingFields: ['link_count'],
  bulkCreate: { max: 10 },
  actions: { summary: { detail: true, method: 'GET', handler: ({ record }) => ({ notes: record!.notes }) } },
});

const boardPages = collection('board-pages', { serializer: boardSerializer, builtInActions: ['list'], pagination: 'cursor', pageSize: 10 });

const comments = collection('comments', {
  serializer: serializer(Comment, {
    fields: ['id', 'text', 'note_id', 'note', 'pin', 'author_id'],
    readOnly: ['author_id'],
    nested: { note: { source: 'note_id', serializer: noteSummary } },
    relations: { pin: relations.slug('pin_id', Pin, 'code') },
  }),
  filterFields: ['note__text', 'pin'],
  filters: { about: 'note_id__text' },
  bulkCreate: { max: 10 },
});

const people = collection('people', {
  serializer: serializer(User, {
    name: 'Person',
    fields: ['id', 'username', 'note_count', 'note_ids', 'has_notes', 'uploads', 'upload_details'],
    computed: { note_count: computed.count('notes', 'owner_id'), note_ids: computed.ids('notes', 'owner_id'), has_notes: computed.exists('notes', 'owner_id') },
    relations: { uploads: relations.reverse('attachments', 'uploader_id'), upload_details: relations.reverse('attachments', 'uploader_id', { serializer: attachmentSummary }) },
  }),
  builtInActions: ['list', 'retrieve'],
  filterFields: ['uploads'],
  filters: { wrote: 'notes__text' },
  orderingFields: ['note_count'],
});

/** Scopes that answer no conditions (a forgotten return, a misspelt field): every request reaching their table fails closed. */
const Scrap = model('scraps', { id: fields.id(), text: fields.string({ maxLength: 100 }) });
const scraps = serializer(Scrap, { fields: ['id', 'text'] });
const forgotten = collection('forgotten', { serializer: scraps, scope: (() => undefined) as never });
const misspelt = collection('misspelt', { serializer: scraps, scope: async () => ({ txet: 'a' }) });

/** The app, its notes scoped by `scope`. */
export function privateNotesApp(scope: Scope = staffOrOwner): AppDefinition {
  const notes = collection('notes', { serializer: noteSerializer, scope, bulkCreate: { max: 10 }, filterFields: ['text'] });
  const attachments = collection('attachments', { serializer: attachmentSerializer, parent: { collection: notes, field: 'note_id' } });
  return withGeneratedMigrations(defineApp({ collections: [notes, attachments, pins, boards, boardPages, comments, people, forgotten, misspelt] }));
}
