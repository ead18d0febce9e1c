/** The samples of docs/guides/serializers-and-fields.md (field kinds to relations), as one app. */
import { FieldError, User, collection, computed, defineApp, fields, joinTable, model, relations, serializer, type Field } from 'restfold';

/** A lookup elsewhere, as a validator may make one. */
const isBanned = async (text: string): Promise<boolean> => text.includes('casino');

// #region validators
const Product = model('products', {
  id: fields.id(),
  sku: fields.string({ maxLength: 12, minLength: 3, pattern: /^[A-Z]{3}-\d+$/ }),
  price: fields.decimal({ digits: 10, places: 2, minValue: 0 }),
  stock: fields.integer({ minValue: 0, default: 0 }),
  launch: fields.date({ minValue: '2020-01-01', nullable: true }),
  note: fields.text({
    nullable: true,
    validators: [
      (note) => (note.includes('http') ? 'No links.' : undefined),
      async (note) => ((await isBanned(note)) ? ['Not here.', 'Read the rules.'] : undefined),
    ],
  }),
});
// #endregion validators

const Event = model('events', { id: fields.id(), title: fields.string({ maxLength: 100 }), starts: fields.timestamp(), ends: fields.timestamp() });

const events = collection('events', {
  // #region object-validation
  serializer: serializer(Event, {
    fields: ['id', 'title', 'starts', 'ends'],
    validate: (values, { existing, user }) => {
      // Dates as sent; on a PATCH, a field not sent is the stored record's.
      if (new Date(values.starts as Date) > new Date(values.ends as Date)) return { ends: ['Must not be before the start.'] };
      if (!existing && user === null) return { non_field_errors: ['Sign in first.'] };
    },
  }),
  // #endregion object-validation
});

const Author = model('authors', { id: fields.id(), name: fields.string({ maxLength: 100 }) });
const Book = model('books', { id: fields.id(), title: fields.string({ maxLength: 200 }), author_id: fields.foreignKey('authors') });
const Follow = model('follows', { id: fields.id(), author_id: fields.foreignKey('authors'), user_id: fields.foreignKey('users') });

// #region computed
const authors = serializer(Author, {
  fields: ['id', 'name', 'book_count', 'book_ids', 'followed', 'greeting'],
  computed: {
    book_count: computed.count('books', 'author_id'),
    book_ids: computed.ids('books', 'author_id'),
    followed: computed.exists('follows', 'author_id', { requestingUser: 'user_id' }),
    greeting: computed.from((row, { user }) => `${row.name} greets ${user?.username}`, { schema: { type: 'string' } }),
  },
});
// #endregion computed

// #region relations
export const Tag = model('tags', { id: fields.id(), name: fields.string({ maxLength: 50, unique: true }) });
const Article = model('articles', {
  id: fields.id(),
  title: fields.string({ maxLength: 200 }),
  author_id: fields.foreignKey('users'),
  created_at: fields.timestamp({ default: () => new Date() }),
});
const userSummarySerializer = serializer(User, { name: 'UserSummary', fields: ['id', 'username'] });

const articleSerializer = serializer(Article, {
  fields: ['id', 'title', 'author', 'author_id', 'tags'],
  nested: { author: { source: 'author_id', serializer: userSummarySerializer } },
  relations: { tags: relations.manyToMany(joinTable('articles', 'tags')) },
});
const articles = collection('articles', { serializer: articleSerializer, filterFields: ['author_id', 'author__username', 'tags'] });
// #endregion relations

const Favorite = model('favorites', { id: fields.id(), article_id: fields.foreignKey('articles'), user_id: fields.foreignKey('users') });

const feed = collection('feed', {
  serializer: serializer(Article, {
    name: 'FeedArticle',
    fields: ['id', 'title', 'tag_list', 'created_at', 'author'],
    nested: { author: { source: 'author_id', serializer: userSummarySerializer } },
    relations: { tag_list: relations.manyToMany(joinTable('articles', 'tags'), { slug: { target: Tag, field: 'name' } }) },
    // #region rename
    rename: { tag_list: 'tagList', created_at: 'createdAt' },
    // → {"id": 1, "title": "…", "tagList": ["dragons"], "createdAt": "…", "author": {…}}
    // #endregion rename
  }),
  // #region named-filters
  filters: { tag: 'tag_list__name', author: 'author__username', favorited: 'favorites__user_id__username' },
  // #endregion named-filters
  builtInActions: ['list', 'retrieve'],
});

// #region own-field
const isbn: Field = { ...fields.string({ maxLength: 13 }), parse: (value) => { if (!/^\d{13}$/.test(String(value))) throw new FieldError('13 digits.'); return value; } };
// #endregion own-field
const Edition = model('editions', { id: fields.id(), isbn });

export default defineApp({
  collections: [
    collection('products', { serializer: serializer(Product, { fields: ['id', 'sku', 'price', 'stock', 'launch', 'note'], readOnly: ['id'] }) }),
    events,
    collection('authors', { serializer: authors }),
    collection('books', { serializer: serializer(Book, { fields: ['id', 'title', 'author_id'], readOnly: ['id'] }) }),
    collection('tags', { serializer: serializer(Tag, { fields: ['id', 'name'], readOnly: ['id'] }) }),
    articles,
    feed,
    collection('editions', { serializer: serializer(Edition, { fields: ['id', 'isbn'], readOnly: ['id'] }) }),
  ],
  models: [Follow, Favorite],
});
