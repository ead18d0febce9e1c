/** The samples of docs/guides/permissions-and-scopes.md, as one app. */
import {
  allowAny,
  collection,
  computed,
  defineApp,
  fields,
  hasPermission,
  isAuthenticated,
  model,
  serializer,
  storeCondition,
} from 'restfold';

// #region model-rules
const Book = model('books', { id: fields.id(), title: fields.string({ maxLength: 200 }), locked: fields.boolean({ default: false }) }, {
  permissions: [{
    description: 'an unlocked book',
    hasPermission: () => true,
    hasObjectPermission: ({ action }, record) => action === 'list' || action === 'retrieve' || !record.locked,
  }],
});
// #endregion model-rules

const Todo = model('todos', { id: fields.id(), title: fields.string({ maxLength: 200 }), owner_id: fields.foreignKey('users') });
const todoSerializer = serializer(Todo, { fields: ['id', 'title', 'owner_id'], readOnly: ['id'] });

// #region scope
const todos = collection('todos', {
  serializer: todoSerializer,
  scope: ({ user }) => ({ owner_id: user?.id ?? null }),
});
// #endregion scope

const Team = model('teams', { id: fields.id(), name: fields.string({ maxLength: 100 }) });
const Membership = model('memberships', { id: fields.id(), team_id: fields.foreignKey('teams'), user_id: fields.foreignKey('users') });
const Board = model('boards', { id: fields.id(), name: fields.string({ maxLength: 100 }), team_id: fields.foreignKey('teams'), archived: fields.boolean({ default: false }) });

const boards = collection('boards', {
  serializer: serializer(Board, { fields: ['id', 'name', 'team_id', 'archived'], readOnly: ['id'] }),
  // #region store-condition
  scope: ({ user }) => [
    { field: 'archived', lookup: 'exact', value: false },
    storeCondition((eb, table) => eb.exists(eb.selectFrom('memberships').select('id')
      .whereRef('memberships.team_id', '=', `${table}.team_id`).where('memberships.user_id', '=', user?.id ?? 0))),
  ],
  // #endregion store-condition
});

const Note = model('notes', { id: fields.id(), text: fields.text(), owner_id: fields.foreignKey('users') });
const notes = collection('notes', {
  serializer: serializer(Note, { fields: ['id', 'text'], readOnly: ['id'] }),
  // #region async-scope
  scope: async ({ user }) => ((await user?.hasPermission('notes.view_all')) ? {} : { owner_id: user?.id ?? null }),
  // #endregion async-scope
  hooks: { beforeCreate: ({ user }) => ({ owner_id: user!.id }) },
});

const Tag = model('tags', { id: fields.id(), name: fields.string({ maxLength: 50, unique: true }) });
const Tagging = model('articles_tags', { id: fields.id(), tag_id: fields.foreignKey('tags'), article: fields.string({ maxLength: 100 }) });
const tagSerializer = serializer(Tag, { fields: ['id', 'name'], readOnly: ['id'] });

// #region where
const popularTags = collection('tags', {
  serializer: tagSerializer,
  // Popular tags: those some article has. A tag no article has yet may still be given to one.
  where: [storeCondition((eb, table) => eb.exists(eb.selectFrom('articles_tags').select('tag_id').whereRef('articles_tags.tag_id', '=', `${table}.id`)))],
});
// #endregion where

const Event = model('events', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  price: fields.decimal({ digits: 8, places: 2, default: '0.00' }),
  budget: fields.decimal({ digits: 10, places: 2, nullable: true }),
  notes: fields.text({ nullable: true }),
});
const eventSummary = serializer(Event, { name: 'EventSummary', fields: ['id', 'title'] });

// #region per-request
const events = serializer(Event, { fields: ['id', 'title', 'price'], writableBy: { price: hasPermission('events.set_price') } });
const staffEvents = serializer(Event, { name: 'EventStaff', fields: ['id', 'title', 'price', 'budget', 'notes'] });

const eventsCollection = collection('events', {
  serializer: events,
  serializers: { list: eventSummary },
  // DRF's get_serializer_class() reading self.request: staff read and write more fields.
  chooseSerializer: { among: [staffEvents], choose: ({ user }) => (user?.isSuperuser ? staffEvents : undefined) },
});
// #endregion per-request

const Post = model('posts', { id: fields.id(), title: fields.string({ maxLength: 200 }), author_id: fields.foreignKey('users') });
const Favorite = model('favorites', { id: fields.id(), post_id: fields.foreignKey('posts'), user_id: fields.foreignKey('users') });

// #region optional-authentication
const posts = collection('posts', {
  serializer: serializer(Post, {
    fields: ['id', 'title', 'favorited', 'mine'],
    computed: {
      favorited: computed.exists('favorites', 'post_id', { requestingUser: 'user_id' }),
      mine: computed.from((row, { user }) => user?.id === Number(row.author_id), { schema: { type: 'boolean' }, reads: ['author_id'] }),
    },
  }),
  permissions: { list: [allowAny], retrieve: [allowAny], create: [isAuthenticated] },
});
// #endregion optional-authentication

export default defineApp({
  collections: [
    collection('books', { serializer: serializer(Book, { fields: ['id', 'title', 'locked'], readOnly: ['id'] }) }),
    todos,
    collection('teams', { serializer: serializer(Team, { fields: ['id', 'name'], readOnly: ['id'] }) }),
    boards,
    notes,
    popularTags,
    eventsCollection,
    posts,
  ],
  models: [Membership, Tagging, Favorite],
});
