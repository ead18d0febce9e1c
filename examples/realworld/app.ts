/**
 * The RealWorld "Conduit" backend (gothinkster/realworld, api/openapi.yml) on Restfold's public API,
 * as far as declarations reach today: profiles and following, articles by slug with favourites,
 * the feed, comments nested under their article, and the tags list, under `/api` without trailing
 * slashes, in Conduit's envelopes, its `Authorization: Token …` and its 422 `{"errors": {"body": […]}}`.
 * What Conduit needs beyond this (users, login, the current user, renamed fields, list filters…)
 * cannot be declared yet; ./README.md lists each missing declaration.
 * Serve it with `npx restfold serve --app examples/realworld/app.ts`.
 */
import {
  allowAny,
  collection,
  computed,
  defineApp,
  fields,
  isAuthenticated,
  isOwner,
  model,
  recordStore,
  Serializer,
  serializer,
  storeCondition,
  User,
  validationFailed,
  type AuthUser,
  type Database,
  type ErrorDetails,
  type RecordStore,
  type RenderContext,
  type Row,
} from 'restfold';
import migrations from './migrations/index.js';

// ---- models -------------------------------------------------------------------------------------

const Follow = model('follows', {
  id: fields.id(),
  follower_id: fields.foreignKey('users'),
  followee_id: fields.foreignKey('users'),
}, { uniqueTogether: [['follower_id', 'followee_id']] });

const Article = model('articles', {
  id: fields.id(),
  slug: fields.string({ maxLength: 255, unique: true }),
  title: fields.string({ maxLength: 255 }),
  description: fields.text(),
  body: fields.text(),
  tag_list: fields.json({ shape: 'array', default: () => [] }),
  author_id: fields.foreignKey('users'),
  created_at: fields.timestamp({ default: () => new Date() }),
  updated_at: fields.timestamp({ default: () => new Date() }),
});

const Favorite = model('favorites', {
  id: fields.id(),
  article_id: fields.foreignKey('articles'),
  user_id: fields.foreignKey('users'),
}, { uniqueTogether: [['article_id', 'user_id']] });

const Comment = model('comments', {
  id: fields.id(),
  body: fields.text(),
  article_id: fields.foreignKey('articles'),
  author_id: fields.foreignKey('users'),
  created_at: fields.timestamp({ default: () => new Date() }),
  updated_at: fields.timestamp({ default: () => new Date() }),
});

const Tag = model('tags', { id: fields.id(), name: fields.string({ maxLength: 100, unique: true }) });

// ---- shared pieces ------------------------------------------------------------------------------

/** Conduit stores no bio or image yet (PUT /user cannot be declared: README): they are null, as the spec's new user's. */
const unset = computed.from(() => null, { schema: { type: ['string', 'null'] }, reads: ['username'] });

/** `Profile`: the user as others see them, `following` for whoever asks (false for anonymous callers). */
const profileSerializer = serializer(User, {
  name: 'Profile',
  fields: ['username', 'bio', 'image', 'following'],
  readOnly: ['username'],
  computed: { bio: unset, image: unset, following: computed.exists('follows', 'followee_id', { requestingUser: 'follower_id' }) },
});

/** The author inside an article or comment (ConduitSerializer adds `following`). */
const authorSerializer = serializer(User, { name: 'Author', fields: ['username', 'bio', 'image'], computed: { bio: unset, image: unset } });

/** `{"article": {...}}` in and out, `{"articles": [...], "articlesCount": n}` for lists, and likewise for the others. */
const envelopes: Readonly<Record<string, { record: string; list: string; count?: string }>> = {
  articles: { record: 'article', list: 'articles', count: 'articlesCount' },
  feed: { record: 'article', list: 'articles', count: 'articlesCount' },
  comments: { record: 'comment', list: 'comments' },
  profiles: { record: 'profile', list: 'profiles' },
  tags: { record: 'tag', list: 'tags' },
};

const camelCase = (name: string): string => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const renamed = (object: Row, rename: (name: string) => string): Row => Object.fromEntries(Object.entries(object).map(([name, value]) => [rename(name), value]));

/**
 * Conduit's camelCase keys (`tagList`, `createdAt`, `favoritesCount`) for the model's snake_case
 * fields, out and in: Restfold's field names are SQL identifiers, and it has no declaration for a
 * field shown under another name (DRF's `source=`: README). The author's `following` is read beside
 * the author, as `author_following` (a nested record is read by a join, which cannot carry a
 * SQL-backed field), and put back inside it here.
 */
class ConduitSerializer extends Serializer {
  override render(row: Row, context?: RenderContext): Row {
    const { authorFollowing, ...record } = renamed(super.render(row, context), camelCase);
    return authorFollowing === undefined ? record : { ...record, author: { ...(record.author as Row), following: authorFollowing } };
  }

  override validate(...[body, ...rest]: Parameters<Serializer['validate']>): ReturnType<Serializer['validate']> {
    const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
    return super.validate(isObject ? renamed(body as Row, snakeCase) : body, ...rest);
  }
}

/** Whether the requesting user follows the record's author. */
const authorFollowing = computed.exists('follows', 'followee_id', { requestingUser: 'follower_id', on: 'author_id' });

/** A validation failure's details as Conduit's messages: "title This field is required.". */
const messagesOf = (details: ErrorDetails | undefined): string[] =>
  Object.entries(details ?? {}).flatMap(([field, messages]) =>
    messages.map((message) => (field === 'non_field_errors' ? message : `${field} ${message}`)),
  );

/** "How to train your dragon" → "how-to-train-your-dragon". */
const slugify = (title: string): string =>
  title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'article';

/** Tags come back sorted and once each, whatever order they were sent in. */
const sortedTags = (tags: unknown): string[] => (Array.isArray(tags) ? [...new Set(tags.map(String))].sort() : []);

const tagRecord = serializer(Tag, { name: 'TagRecord', fields: ['id', 'name'] });

/** Each tag of the article in the tags table, in the article's own transaction (GET /tags lists them). */
async function recordTags(database: Database, tags: unknown): Promise<void> {
  const store = recordStore(database, tagRecord, { name: 'tag' });
  for (const name of sortedTags(tags)) if ((await store.list({ name }, ['id'])).length === 0) await store.create({ name });
}

/**
 * Makes the row `where` exist (`present`) or not, idempotently as Conduit's favourite and follow are:
 * twice is once. Answers how many rows that added (1, 0, or minus those removed).
 */
async function makePresent(store: RecordStore, where: Row, present: boolean): Promise<number> {
  const existing = await store.list(where, ['id']);
  if (present && existing.length === 0) await store.create(where);
  if (!present) for (const row of existing) await store.delete(row.id as number);
  return (present ? 1 : 0) - existing.length;
}

// ---- articles -----------------------------------------------------------------------------------

const articleDeclaration = {
  fields: ['slug', 'title', 'description', 'body', 'tag_list', 'created_at', 'updated_at', 'favorited', 'favorites_count', 'author', 'author_following'],
  readOnly: ['slug', 'created_at', 'updated_at'],
  nested: { author: { source: 'author_id', serializer: authorSerializer } },
  computed: {
    favorited: computed.exists('favorites', 'article_id', { requestingUser: 'user_id' }),
    favorites_count: computed.count('favorites', 'article_id'),
    author_following: authorFollowing,
  },
  validate: ({ tag_list: tags }: Row) => {
    if (Array.isArray(tags) && !tags.every((tag) => typeof tag === 'string' && tag !== '')) return { tag_list: ['Must be a list of tags (non-empty strings).'] };
  },
};
const articleSerializer = new ConduitSerializer(Article, articleDeclaration);
/** Lists of articles leave out `body` (the spec's "Multiple Articles"). */
const articleListSerializer = new ConduitSerializer(Article, { ...articleDeclaration, name: 'ArticleListItem', fields: articleDeclaration.fields.filter((field) => field !== 'body') });

const slugRecord = serializer(Article, { name: 'ArticleSlug', fields: ['id', 'slug'] });
/** How many articles may share a title's slug before a new one with it is refused. */
const SAME_TITLE_LIMIT = 100;

/**
 * The title's slug, or `slug-2`, `slug-3`… when an article (other than `own`) has it: read through
 * the write's transaction, which the article's after-hooks open, so a slug seen free stays free.
 */
async function freeSlug(database: Database, title: unknown, own?: unknown): Promise<string> {
  const store = recordStore(database, slugRecord, { name: 'article' });
  const base = slugify(String(title));
  for (let n = 1; n <= SAME_TITLE_LIMIT; n += 1) {
    const slug = n === 1 ? base : `${base}-${n}`;
    if ((await store.list({ slug }, ['id'])).every(({ id }) => String(id) === String(own))) return slug;
  }
  throw validationFailed({ title: [`More than ${SAME_TITLE_LIMIT} articles have this title.`] });
}

const favoriteRecord = serializer(Favorite, { fields: ['id', 'article_id', 'user_id'] });

/** The article as the caller now sees it, once their favourite is (or is no longer) there. */
async function setFavorite(database: Database, user: AuthUser, record: Row, favorited: boolean): Promise<Row> {
  const store = recordStore(database, favoriteRecord, { name: 'favorite' });
  const change = await makePresent(store, { article_id: record.id, user_id: user.id }, favorited);
  return { article: articleSerializer.render({ ...record, favorited, favorites_count: Number(record.favorites_count) + change }, { user }) };
}

const articles = collection('articles', {
  serializer: articleSerializer,
  serializers: { list: articleListSerializer },
  lookupField: 'slug',
  // Conduit has no PATCH: its PUT sends the fields it changes.
  builtInActions: ['list', 'retrieve', 'create', 'update', 'destroy'],
  put: 'partial',
  permissions: {
    list: [allowAny],
    retrieve: [allowAny],
    create: [isAuthenticated],
    update: [isOwner('author_id')],
    destroy: [isOwner('author_id')],
  },
  hooks: {
    // The slug is the title's, and follows it (the spec's endpoints page); the author is the caller.
    beforeCreate: async ({ user, values, database }) => ({ author_id: user!.id, slug: await freeSlug(database, values.title), tag_list: sortedTags(values.tag_list) }),
    beforeUpdate: async ({ values, existing, database }) => ({
      updated_at: new Date(),
      ...(values.title !== undefined && { slug: await freeSlug(database, values.title, existing.id) }),
      ...(values.tag_list !== undefined && { tag_list: sortedTags(values.tag_list) }),
    }),
    // The values sent (an update without tags records none).
    afterCreate: ({ database, values }) => recordTags(database, values.tag_list),
    afterUpdate: ({ database, values }) => recordTags(database, values.tag_list),
  },
  // Newest first, as every Conduit list: ids grow with time, and tie nothing.
  defaultOrdering: ['-id'],
  pagination: 'limit_offset',
  pageSize: 20,
  maxPageSize: 100,
  actions: {
    favorite: { detail: true, method: 'POST', body: false, permissions: [isAuthenticated], handler: ({ database, user, record }) => setFavorite(database, user!, record!, true) },
    unfavorite: { detail: true, method: 'DELETE', path: 'favorite', permissions: [isAuthenticated], handler: ({ database, user, record }) => setFavorite(database, user!, record!, false) },
  },
});

/** GET /api/articles/feed: the articles of the authors the caller follows (its own router, under /api/articles). */
const feed = collection('feed', {
  serializer: articleListSerializer,
  lookupField: 'slug',
  builtInActions: ['list'],
  scope: ({ user }) => [
    storeCondition((eb, table) =>
      eb.exists(eb.selectFrom('follows').select('follows.id').whereRef('follows.followee_id', '=', `${table}.author_id`).where('follows.follower_id', '=', user?.id ?? 0)),
    ),
  ],
  permissions: { list: [isAuthenticated] },
  defaultOrdering: ['-id'],
  pagination: 'limit_offset',
  pageSize: 20,
  maxPageSize: 100,
});

// ---- comments -----------------------------------------------------------------------------------

const comments = collection('comments', {
  serializer: new ConduitSerializer(Comment, {
    fields: ['id', 'created_at', 'updated_at', 'body', 'author', 'author_following'],
    readOnly: ['id', 'created_at', 'updated_at'],
    nested: { author: { source: 'author_id', serializer: authorSerializer } },
    computed: { author_following: authorFollowing },
  }),
  parent: { collection: articles, field: 'article_id' },
  builtInActions: ['list', 'create', 'destroy'],
  // The spec answers a new comment 200, not 201.
  createStatus: 200,
  permissions: { list: [allowAny], create: [isAuthenticated], destroy: [isOwner('author_id')] },
  hooks: { beforeCreate: ({ user }) => ({ author_id: user!.id }) },
  defaultOrdering: ['id'],
  pagination: 'limit_offset',
  pageSize: 100,
  maxPageSize: 100,
});

// ---- profiles and tags --------------------------------------------------------------------------

const followRecord = serializer(Follow, { fields: ['id', 'follower_id', 'followee_id'] });

/** The profile as the caller now sees it, once they follow (or no longer follow) it. */
async function setFollowing(database: Database, user: AuthUser, record: Row, following: boolean): Promise<Row> {
  const store = recordStore(database, followRecord, { name: 'follow' });
  await makePresent(store, { follower_id: user.id, followee_id: record.id }, following);
  return { profile: profileSerializer.render({ ...record, following }) };
}

const profiles = collection('profiles', {
  serializer: profileSerializer,
  lookupField: 'username',
  builtInActions: ['retrieve'],
  permissions: { retrieve: [allowAny] },
  actions: {
    follow: { detail: true, method: 'POST', body: false, permissions: [isAuthenticated], handler: ({ database, user, record }) => setFollowing(database, user!, record!, true) },
    unfollow: { detail: true, method: 'DELETE', path: 'follow', permissions: [isAuthenticated], handler: ({ database, user, record }) => setFollowing(database, user!, record!, false) },
  },
});

/** GET /api/tags answers names, not objects: `{"tags": ["dragons", "training"]}`. */
class TagNames extends Serializer {
  override render(row: Row): Row {
    return row.name as unknown as Row;
  }
}

const tags = collection('tags', {
  serializer: new TagNames(Tag, { fields: ['name'] }),
  builtInActions: ['list'],
  permissions: { list: [allowAny] },
  defaultOrdering: ['name'],
  pagination: 'limit_offset',
  pageSize: 1000,
  maxPageSize: 1000,
});

export default defineApp({
  collections: [articles, feed, comments, profiles, tags],
  // Written by the custom actions, read by the computed fields and the feed's scope: no collection of their own.
  models: [Follow, Favorite],
  routers: [
    { prefix: '/api', trailingSlash: 'absent', collections: ['articles', 'comments', 'profiles', 'tags'] },
    // No API root here: /api/articles is the articles list.
    { prefix: '/api/articles', trailingSlash: 'absent', collections: ['feed'], root: false },
  ],
  envelope: (name) => envelopes[name],
  credentialKeywords: ['Token'],
  // Conduit answers every invalid request 422 `{"errors": {"body": [...]}}` (GenericErrorModel).
  exceptionHandler: (error) =>
    error.code === 'validation_failed' || error.code === 'parse_error' ? { status: 422, body: { errors: { body: messagesOf(error.details) } } } : undefined,
  // Generated from the declarations above by `npx restfold makemigrations --app examples/realworld/app.ts`.
  migrations,
});
