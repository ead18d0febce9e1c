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
  joinTable,
  lockFor,
  MalformedPathId,
  model,
  recordStore,
  relations,
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
 * log in with it), ignoring case too: Jake@x.org and jake@x.org are one mailbox, so one account. Its
 * PUT /user changes the password with the token alone: no current password.
 */
const ConduitUser = User.extend({
  bio: fields.text({ nullable: true }),
  image: fields.url({ nullable: true }),
  email: fields.email({ unique: true }),
}, {
  currentPassword: false,
  indexes: [{ name: 'users_email_ignoring_case_key', columns: ['email'], unique: true, ignoreCase: true }],
});

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
/** Which tags each article has: the framework's join table `articles_tags` (article_id, tag_id). */
const articleTags = joinTable('articles', 'tags');

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

/** How many tags one article may have (Conduit's clients show a handful): a longer tagList is a 422 naming it. */
const MAX_TAGS = 10;

const tagRecord = serializer(Tag, { name: 'TagRecord', fields: ['id', 'name'] });

/**
 * A tag for each name the article's body sends that no tag has yet, so that the article's `tag_list`
 * (which names tags, and refuses a name no tag has) can link it to them. Made in the article's
 * transaction, so a refused article leaves no tag behind; a tag a concurrent request is making is
 * waited for and found (getOrCreate, on the unique name), never made twice. In one order (sorted):
 * two articles making the same new tags wait for each other rather than each hold one the other needs.
 */
async function makeTags(database: Database, names: unknown): Promise<void> {
  if (!Array.isArray(names)) return;
  const store = recordStore(database, tagRecord, { name: 'tag' });
  for (const name of [...new Set(names.map(String))].sort()) await store.getOrCreate({ name });
}

/**
 * Makes the row `where` exist (`present`) or not, idempotently as Conduit's favourite and follow are:
 * twice is once, whatever runs at once (a unique constraint covers `where`, so getOrCreate makes it
 * once; deleting what is gone deletes nothing). Answers how many rows this call added (1, 0, or
 * minus those it removed).
 */
async function makePresent(store: RecordStore, where: Row, present: boolean): Promise<number> {
  if (present) return (await store.getOrCreate(where)).created ? 1 : 0;
  return -(await store.deleteMatching(where));
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
  // The article's tags by name, written as a list of names that replaces them (a name sent twice is one tag).
  relations: { tag_list: relations.manyToMany(articleTags, { slug: { target: Tag, field: 'name' }, maxItems: MAX_TAGS }) },
  // Read in the tags' id order; shown sorted by name, whatever order they were sent or made in.
  format: { tag_list: (tags: unknown) => (tags as Row[]).map((tag) => String(tag.name)).sort() },
};
const articleSerializer = serializer(Article, articleDeclaration);
/** Lists of articles leave out `body` (the spec's "Multiple Articles"). */
const articleListSerializer = serializer(Article, { ...articleDeclaration, name: 'ArticleListItem', fields: articleDeclaration.fields.filter((field) => field !== 'body') });

const slugRecord = serializer(Article, { name: 'ArticleSlug', fields: ['id', 'slug'] });
/** How many articles may share a title's slug before a new one with it is refused. */
const SAME_TITLE_LIMIT = 100;

/** Slugs no article may have: `GET /articles/feed` is the feed, so an article titled "Feed" is `feed-2`. */
const RESERVED_SLUGS: ReadonlySet<string> = new Set(['feed']);

/**
 * What every slug that `slug` may become shares (`top-10-2` → `top`): freeSlug numbers a taken slug
 * (`top-2`), and a title may end in numbers itself ("Top 10" → `top-10`, a slug "Top" may choose).
 */
const stemOf = (slug: string): string => slug.replace(/(-\d+)+$/, '');

/**
 * The title's slug, or `slug-2`, `slug-3`… when an article (other than `own`) has it or a path of the
 * API's would shadow it. In the write's transaction (the articles' `hooks.inTransaction`), under a
 * lock on the slug's stem held until it commits: of concurrent writes that may choose one slug, each
 * reads the slugs once the one before it has stored its own, so all get slugs of their own.
 */
async function freeSlug(database: Database, title: unknown, own?: unknown): Promise<string> {
  const store = recordStore(database, slugRecord, { name: 'article' });
  const base = slugify(String(title));
  await lockFor(database, `articles.slug ${stemOf(base)}`);
  for (let n = 1; n <= SAME_TITLE_LIMIT; n += 1) {
    const slug = n === 1 ? base : `${base}-${n}`;
    if (RESERVED_SLUGS.has(slug)) continue;
    if ((await store.list({ slug }, ['id'])).every(({ id }) => String(id) === String(own))) return slug;
  }
  throw validationFailed({ title: [`More than ${SAME_TITLE_LIMIT} articles have this title.`] });
}

const favoriteRecord = serializer(Favorite, { fields: ['id', 'article_id', 'user_id'] });

/** The article as the caller now sees it, once their favourite is (or is no longer) there. */
async function setFavorite(database: Database, user: AuthUser, record: Row, favorited: boolean): Promise<Row> {
  const store = recordStore(database, favoriteRecord, { name: 'favorite' });
  const change = await makePresent(store, { article_id: record.id, user_id: user.id }, favorited);
  // The count as read before, with this change; at least the caller's own favourite when it is there (another request may have made it meanwhile).
  const count = Math.max(Number(record.favorites_count) + change, favorited ? 1 : 0);
  return articleSerializer.render({ ...record, favorited, favorites_count: count }, { user });
}

const articles = collection('articles', {
  serializer: articleSerializer,
  serializers: { list: articleListSerializer },
  recordKey: 'slug',
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
    // The hooks' reads and writes (new tags, the slug's lock) commit or roll back with the article.
    inTransaction: true,
    // The slug is the title's, and follows it (the spec's endpoints page); the author is the caller; new tag names become tags.
    beforeCreate: async ({ user, values, database }) => {
      await makeTags(database, values.tag_list);
      return { author_id: user!.id, slug: await freeSlug(database, values.title) };
    },
    beforeUpdate: async ({ values, existing, database }) => {
      await makeTags(database, values.tag_list);
      return { updated_at: new Date(), ...(values.title !== undefined && { slug: await freeSlug(database, values.title, existing.id) }) };
    },
  },
  // ?tag=dragons&author=jake&favorited=jane; an unknown tag or user is an empty page.
  filters: { tag: 'tag_list__name', author: 'author__username', favorited: 'favorites__user_id__username' },
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
  recordKey: 'slug',
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
  // GET /api/articles/:slug/comments/events: new and deleted comments as they happen (Server-Sent Events).
  live: true,
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
  // Taken out of the collection's envelope (its `user` key) and checked against the declared body.
  const sent = body as { email: string; password: string };
  const user = await credentials.check({ email: sent.email, password: sent.password });
  if (!user) throw new ApiError(401, 'authentication_failed', 'Wrong email or password.');
  const record = await recordStore(database, userSerializer, { name: 'user' }).get(user.id);
  return { ...record, token: await credentials.issue(user) };
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
  actions: {
    login: {
      detail: false,
      method: 'POST',
      permissions: [allowAny],
      summary: 'Log in with an e-mail and password',
      body: { email: fields.string({ maxLength: 254 }), password: fields.string({ maxLength: 4096 }) },
      unknownFields: 'ignore',
      handler: login,
    },
  },
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
  return profileSerializer.render({ ...record, following });
}

const profiles = collection('profiles', {
  serializer: profileSerializer,
  recordKey: 'username',
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
  // Tags some article has: one whose last article was deleted, or untagged, is not listed. A `where`,
  // not a scope: a tag no article has yet stays one an article may be given.
  where: [
    storeCondition((eb, table) => eb.exists(eb.selectFrom('articles_tags').select('articles_tags.tag_id').whereRef('articles_tags.tag_id', '=', `${table}.id`))),
  ],
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
