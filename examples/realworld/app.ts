/**
 * The RealWorld "Conduit" backend (gothinkster/realworld, api/openapi.yml) on Restfold's public API,
 * declared whole: users, login and the current user, profiles and following, articles by slug with
 * favourites, the feed, comments nested under their article, and the tags list, under `/api`
 * without trailing slashes, in Conduit's envelopes, its `Authorization: Token …` and its 422
 * `{"errors": {"body": […]}}`. ./README.md maps each operation to the declarations it uses.
 * Serve it with `npx restfold serve --app examples/realworld/app.ts`.
 */
import {
  allowAny,
  ApiError,
  collection,
  computed,
  defineApp,
  fields,
  isAuthenticated,
  isOwner,
  MalformedPathId,
  model,
  recordStore,
  Serializer,
  serializer,
  storeCondition,
  User,
  validationFailed,
  type AuthUser,
  type CustomActionContext,
  type Database,
  type ErrorDetails,
  type RecordStore,
  type Row,
} from 'restfold';
import migrations from './migrations/index.js';

// ---- models -------------------------------------------------------------------------------------

/**
 * Conduit's user: the framework's, with a bio and an image, and an e-mail required and unique (users
 * log in with it). Its PUT /user changes the password with the token alone: no current password.
 */
const ConduitUser = User.extend({
  bio: fields.text({ nullable: true }),
  image: fields.url({ nullable: true }),
  email: fields.email({ unique: true }),
}, { currentPassword: false });

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

/** `Profile`: the user as others see them, `following` for whoever asks (false for anonymous callers), alone or as an author. */
const profileSerializer = serializer(ConduitUser, {
  name: 'Profile',
  fields: ['username', 'bio', 'image', 'following'],
  readOnly: ['username', 'bio', 'image'],
  computed: { following: computed.exists('follows', 'followee_id', { requestingUser: 'follower_id' }) },
});

/** `{"article": {...}}` in and out, `{"articles": [...], "articlesCount": n}` for lists, and likewise for the others. */
const envelopes: Readonly<Record<string, { record: string; list: string; count?: string }>> = {
  users: { record: 'user', list: 'users' },
  user: { record: 'user', list: 'users' },
  articles: { record: 'article', list: 'articles', count: 'articlesCount' },
  feed: { record: 'article', list: 'articles', count: 'articlesCount' },
  comments: { record: 'comment', list: 'comments' },
  profiles: { record: 'profile', list: 'profiles' },
  tags: { record: 'tag', list: 'tags' },
};

/** Conduit's camelCase names for the models' snake_case fields (SQL identifiers), in and out. */
const timestamps = { created_at: 'createdAt', updated_at: 'updatedAt' };

/** The author as a profile, `following` included (read beside each article or comment, in its statement). */
const author = { author: { source: 'author_id', serializer: profileSerializer } };

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
  fields: ['slug', 'title', 'description', 'body', 'tag_list', 'created_at', 'updated_at', 'favorited', 'favorites_count', 'author'],
  rename: { ...timestamps, tag_list: 'tagList', favorites_count: 'favoritesCount' },
  readOnly: ['slug', 'created_at', 'updated_at'],
  nested: author,
  computed: {
    favorited: computed.exists('favorites', 'article_id', { requestingUser: 'user_id' }),
    favorites_count: computed.count('favorites', 'article_id'),
  },
  validate: ({ tag_list: tags }: Row) => {
    if (Array.isArray(tags) && !tags.every((tag) => typeof tag === 'string' && tag !== '')) return { tag_list: ['Must be a list of tags (non-empty strings).'] };
  },
};
const articleSerializer = serializer(Article, articleDeclaration);
/** Lists of articles leave out `body` (the spec's "Multiple Articles"). */
const articleListSerializer = serializer(Article, { ...articleDeclaration, name: 'ArticleListItem', fields: articleDeclaration.fields.filter((field) => field !== 'body') });

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
  // ?tag=dragons&author=jake&favorited=jane; an unknown tag or user is an empty page.
  filters: { tag: 'tag_list__has_element', author: 'author__username', favorited: 'favorites__user_id__username' },
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
  serializer: serializer(Comment, { fields: ['id', 'created_at', 'updated_at', 'body', 'author'], rename: timestamps, readOnly: ['id', 'created_at', 'updated_at'], nested: author }),
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

// ---- users, login and the current user ----------------------------------------------------------

/** `User`: `{email, token, username, bio, image}`, the password written but never shown. */
const userSerializer = serializer(ConduitUser, {
  name: 'ConduitUser',
  fields: ['email', 'token', 'username', 'bio', 'image', 'password'],
  writeOnly: ['password'],
  // The credential the request issued (registration, login) or presented (GET and PUT /user).
  computed: { token: computed.credential() },
});

/** POST /users/login: `{"user": {email, password}}` → the User with a new token; a wrong email or password alike: 401. */
async function login({ body, credentials, database }: CustomActionContext): Promise<Row> {
  const sent = (typeof body === 'object' && body !== null ? (body as Row).user : undefined) as Row | undefined;
  if (typeof sent !== 'object' || sent === null) throw validationFailed({ user: ['This field is required.'] });
  const missing = ['email', 'password'].filter((name) => typeof sent[name] !== 'string' || sent[name] === '');
  if (missing.length > 0) throw validationFailed(Object.fromEntries(missing.map((name) => [name, ['This field is required.']])));
  const user = await credentials.check({ email: sent.email, password: sent.password });
  if (!user) throw new ApiError(401, 'authentication_failed', 'Wrong email or password.');
  const record = await recordStore(database, userSerializer, { name: 'user' }).get(user.id);
  return { user: { ...record, token: await credentials.issue(user) } };
}

/** POST /users registers (anyone may), answering the new user with a token; POST /users/login logs in. */
const users = collection('users', {
  serializer: userSerializer,
  builtInActions: ['create'],
  permissions: { create: [allowAny] },
  hooks: {
    afterCreate: async ({ record, credentials }) => {
      await credentials.issue(record);
    },
  },
  actions: { login: { detail: false, method: 'POST', permissions: [allowAny], summary: 'Log in with an e-mail and password', handler: login } },
});

/** GET and PUT /user: the caller's own record, with the token they sent; PUT changes what it sends, and must send something. */
const currentUser = collection('user', {
  serializer: userSerializer,
  singleton: ({ user }) => user?.id,
  builtInActions: ['retrieve', 'update'],
  put: 'partial',
  permissions: [isAuthenticated],
  hooks: {
    beforeUpdate: ({ values }) => {
      if (Object.keys(values).length === 0) throw validationFailed({ non_field_errors: ['Send at least one field to update.'] });
    },
  },
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
  collections: [users, currentUser, articles, feed, comments, profiles, tags],
  userModel: ConduitUser,
  // Written by the custom actions, read by the computed fields and the feed's scope: no collection of their own.
  models: [Follow, Favorite],
  routers: [
    { prefix: '/api', trailingSlash: 'absent', collections: ['users', 'user', 'articles', 'comments', 'profiles', 'tags'] },
    // No API root here: /api/articles is the articles list.
    { prefix: '/api/articles', trailingSlash: 'absent', collections: ['feed'], root: false },
  ],
  envelope: (name) => envelopes[name],
  credentialKeywords: ['Token'],
  // Conduit answers every invalid request 422 `{"errors": {"body": [...]}}` (GenericErrorModel); a
  // path naming no possible comment (`/comments/first`) is no comment: 404, as in DRF.
  exceptionHandler: (error) => {
    if (error instanceof MalformedPathId) return { status: 404, body: { errors: { body: ['Not found.'] } } };
    if (error.code === 'validation_failed' || error.code === 'parse_error') return { status: 422, body: { errors: { body: messagesOf(error.details) } } };
  },
  // Generated from the declarations above by `npx restfold makemigrations --app examples/realworld/app.ts`.
  migrations,
});
