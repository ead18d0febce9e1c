/**
 * Issue 23's declarations for an API of another style (Conduit's): fields shown under another name
 * (`rename`, DRF's `source=`) in records, bodies, errors, `?fields=`, the OpenAPI document and the
 * browsable forms; a nested record's own SQL-backed computed fields, read in the page's statement
 * (a fixed number of statements per page, in lists, details, cursor pages and a write's answer,
 * within the related collections' scopes); and filters named by the app across relations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowAny, collection, computed, defineApp, fields, joinTable, model, recordStore, relations, serializer, User } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { recording } from '../support/statements.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Label = model('labels', { id: fields.id(), name: fields.string({ maxLength: 50, unique: true }) });
const Post = model('posts', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  tag_list: fields.json({ shape: 'array', default: () => [] }),
  rating: fields.integer({ default: () => 0 }),
  hidden: fields.boolean({ default: () => false }),
  author_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
  created_at: fields.timestamp({ default: () => new Date() }),
});
const Follow = model('follows', { id: fields.id(), follower_id: fields.foreignKey('users', { default: ({ userId }) => userId }), followee_id: fields.foreignKey('users') });
const Star = model('stars', { id: fields.id(), post_id: fields.foreignKey('posts'), user_id: fields.foreignKey('users', { default: ({ userId }) => userId }) });
const postLabels = joinTable('posts', 'labels');

/** The author as a profile: whether the requesting user follows them, and how many (visible) posts they have. */
const profile = serializer(User, {
  name: 'Profile',
  fields: ['username', 'following', 'post_count'],
  rename: { post_count: 'postCount' },
  computed: {
    following: computed.exists('follows', 'followee_id', { requestingUser: 'follower_id' }),
    post_count: computed.count('posts', 'author_id'),
  },
});

const postSerializer = serializer(Post, {
  fields: ['id', 'title', 'tag_list', 'rating', 'created_at', 'author', 'labels', 'starred'],
  rename: { tag_list: 'tagList', created_at: 'createdAt', author: 'writer', labels: 'labelNames' },
  readOnly: ['created_at'],
  nested: { author: { source: 'author_id', serializer: profile } },
  relations: {
    labels: relations.manyToMany(postLabels, { slug: { target: Label, field: 'name' } }),
    // Not shown: a path for the filters below.
    owner: relations.slug('author_id', User, 'username'),
  },
  computed: { starred: computed.exists('stars', 'post_id', { requestingUser: 'user_id' }) },
  validate: ({ tag_list: tags }) => (Array.isArray(tags) && tags.some((tag) => typeof tag !== 'string') ? { tag_list: ['Tags are strings.'] } : undefined),
});

/** Hidden posts are outside every posts collection's scope: counted nowhere, even inside a nested author. */
const visible = () => ({ hidden: false });
const named = { tag: 'tag_list__has_element', writer: 'author__username', starred_by: 'stars__user_id__username', label: 'labels__name', rated: 'rating__gte', owner: 'owner__username' };

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('posts', { serializer: postSerializer, scope: visible, filterFields: ['title'], orderingFields: ['created_at'], filters: named }),
      collection('post_pages', { serializer: postSerializer, scope: visible, pagination: 'cursor', filters: named }),
      collection('labels', { serializer: serializer(Label, { fields: ['id', 'name'] }) }),
      collection('follows', { serializer: serializer(Follow, { fields: ['id', 'follower_id', 'followee_id'] }) }),
      collection('stars', { serializer: serializer(Star, { fields: ['id', 'post_id', 'user_id'] }) }),
    ],
  }),
);

const sent: string[] = [];
let api: TestApi;
let jake: TestUser;
let jane: TestUser;
let fan: TestUser;

const get = (url: string, user: TestUser) => api.request('GET', url, { token: user.token });
const post = (url: string, user: TestUser, body: unknown) => api.request('POST', url, { token: user.token, body });
const statementsOf = async (url: string, user: TestUser) => {
  sent.length = 0;
  const reply = await get(url, user);
  return { reply, statements: sent.length };
};

beforeAll(async () => {
  api = await startApi({}, app, { appDatabase: recording(sent) });
  [jake, jane, fan] = [await api.user('jake'), await api.user('jane'), await api.user('fan')];
  for (const name of ['dragons', 'cooking']) await post('/api/v1/labels/', jake, { name });
  const first = await post('/api/v1/posts/', jake, { title: 'Dragons 101', tagList: ['dragons', 'training'], labelNames: ['dragons'], rating: 5 });
  await post('/api/v1/posts/', jake, { title: 'Soup', tagList: ['cooking'], labelNames: ['cooking'], rating: 2 });
  await post('/api/v1/posts/', jane, { title: 'More dragons', tagList: ['dragons'], rating: 3 });
  // Written apart from any request, so outside the scope: it counts in no post_count.
  await recordStore(api.database, serializer(Post, { fields: ['id', 'title', 'hidden', 'author_id'] }), { name: 'post' }).create({ title: 'Secret', hidden: true, author_id: jake.id });
  await post('/api/v1/follows/', fan, { followee_id: jake.id });
  await post('/api/v1/stars/', jane, { post_id: first.json.id });
});
afterAll(() => api.close());

describe('fields shown under another name (rename)', () => {
  it('are rendered, nested ones too, and sent under the shown name', async () => {
    const created = await post('/api/v1/posts/', jane, { title: 'Named', tagList: ['x'] });
    expect(created.status).toBe(201);
    expect(Object.keys(created.json)).toEqual(['id', 'title', 'tagList', 'rating', 'createdAt', 'writer', 'labelNames', 'starred']);
    expect(created.json).toMatchObject({ tagList: ['x'], writer: { username: 'jane', following: false, postCount: 2 } });
    const patched = await api.request('PATCH', `/api/v1/posts/${created.json.id}/`, { token: jane.token, body: { tagList: ['y'] } });
    expect(patched.json.tagList).toEqual(['y']);
    await api.request('DELETE', `/api/v1/posts/${created.json.id}/`, { token: jane.token });
  });

  it('make the model’s name unknown in a body, and name the shown field in errors', async () => {
    const byModelName = await post('/api/v1/posts/', jane, { title: 'Old name', tag_list: ['x'] });
    expect(byModelName.status).toBe(400);
    expect(byModelName.json.details).toEqual({ tag_list: ['Unknown field.'] });
    const invalid = await post('/api/v1/posts/', jane, { tagList: 'not a list' });
    expect(invalid.status).toBe(400);
    expect(invalid.json.details).toEqual({ title: ['This field is required.'], tagList: ['Expected a list of items.'] });
    // The serializer's own validation names the model's field; the client reads the shown name.
    const objectError = await post('/api/v1/posts/', jane, { title: 'Numbers', tagList: [1] });
    expect(objectError.json.details).toEqual({ tagList: ['Tags are strings.'] });
    // What the database refuses too: a slug naming no label.
    const refused = await post('/api/v1/posts/', jane, { title: 'Unlabelled', labelNames: ['nope'] });
    expect(refused.status).toBe(400);
    expect(refused.json.details).toEqual({ labelNames: ['No labels with name "nope".'] });
  });

  it('are what ?fields= and ?omit= name; filters and ordering keep the model’s names (DRF’s)', async () => {
    const chosen = await get('/api/v1/posts/?fields=title,createdAt,writer.postCount&ordering=-created_at&title=Soup', jake);
    expect(chosen.json.results).toEqual([{ title: 'Soup', createdAt: expect.any(String), writer: { postCount: 2 } }]);
    const unknown = await get('/api/v1/posts/?fields=created_at', jake);
    expect(unknown.status).toBe(400);
    expect(unknown.json.details.fields[0]).toMatch(/Unknown field "created_at"\. Allowed: id, title, tagList, rating, createdAt, writer, labelNames, starred/);
    expect((await get('/api/v1/posts/?ordering=createdAt', jake)).status).toBe(400);
  });

  it('are the OpenAPI document’s names, required lists included, and the browsable form’s', async () => {
    const schemas = (await api.request('GET', '/api/v1/schema/')).json.components.schemas;
    expect(Object.keys(schemas.Post.properties)).toEqual(['id', 'title', 'tagList', 'rating', 'createdAt', 'writer', 'labelNames', 'starred']);
    expect(schemas.Post.required).toEqual(['id', 'title', 'tagList', 'rating', 'createdAt', 'writer', 'labelNames', 'starred']);
    expect(Object.keys(schemas.Profile.properties)).toEqual(['username', 'following', 'postCount']);
    expect(schemas.PostCreate.properties).toHaveProperty('tagList');
    expect(schemas.PostCreate.properties).not.toHaveProperty('tag_list');
    expect(schemas.PostCreate.required).toEqual(['title']);
    const page = await api.request('GET', '/api/v1/posts/', { token: jake.token, headers: { accept: 'text/html' } });
    expect(page.body).toContain('name="tagList"');
    expect(page.body).not.toContain('name="tag_list"');
    expect(page.body).toContain('name="labelNames"');
  });

  it('clash at start-up: two fields shown as one name, or a shown name another field’s', () => {
    const declare = (rename: Record<string, string>) => () => serializer(Post, { fields: ['id', 'title', 'tag_list'], rename });
    expect(declare({ tag_list: 'title' })).toThrow(/posts: "tag_list" cannot be shown as "title", the name of another field/);
    expect(declare({ tag_list: 'rating' })).toThrow(/posts: "tag_list" cannot be shown as "rating", the name of another field/);
    expect(declare({ tag_list: 'tags', title: 'tags' })).toThrow(/posts: two fields are shown as "tags"/);
    expect(declare({ tagz: 'tags' })).toThrow(/posts: rename names unknown field "tagz"/);
    expect(declare({ tag_list: 'tag-list' })).toThrow(/cannot be shown as "tag-list": use letters, digits and underscores/);
  });
});

describe('SQL-backed computed fields of a nested record', () => {
  it('are read for the requesting user in the page’s statements, as many for many records as for one', async () => {
    const one = await statementsOf('/api/v1/posts/?page_size=1&ordering=id', fan);
    const all = await statementsOf('/api/v1/posts/?page_size=100&ordering=id', fan);
    expect(one.reply.json.results[0].writer).toEqual({ username: 'jake', following: true, postCount: 2 });
    expect(all.reply.json.results.map((post: { writer: { username: string; following: boolean } }) => [post.writer.username, post.writer.following])).toEqual([
      ['jake', true],
      ['jake', true],
      ['jane', false],
    ]);
    expect(all.statements).toBe(one.statements);
    expect(all.statements).toBeLessThanOrEqual(4);
    // Another user's view: the same page, their own following.
    const forJane = await get('/api/v1/posts/?page_size=1&ordering=id', jane);
    expect(forJane.json.results[0].writer.following).toBe(false);
  });

  it('show in details, cursor pages and the record a write answers with', async () => {
    const [first] = (await get('/api/v1/posts/?ordering=id', fan)).json.results;
    expect((await get(`/api/v1/posts/${first.id}/`, fan)).json.writer).toEqual({ username: 'jake', following: true, postCount: 2 });
    const cursorPage = await get('/api/v1/post_pages/?writer=jake', fan);
    expect(cursorPage.json.results.map((post: { writer: unknown }) => post.writer)).toEqual([
      { username: 'jake', following: true, postCount: 2 },
      { username: 'jake', following: true, postCount: 2 },
    ]);
    const written = await api.request('PATCH', `/api/v1/posts/${first.id}/`, { token: jake.token, body: { rating: 5 } });
    expect(written.json.writer).toEqual({ username: 'jake', following: false, postCount: 2 });
  });

  it('count only what the related collections’ scopes let the request see (the hidden post is not counted)', async () => {
    const hidden = await get('/api/v1/posts/?title=Secret', jake);
    expect(hidden.json.count).toBe(0);
    expect((await get('/api/v1/posts/?writer=jake&fields=writer.postCount', jake)).json.results[0].writer.postCount).toBe(2);
  });
});

describe('filters named by the app', () => {
  const titles = async (query: string, user = jake) => {
    const reply = await get(`/api/v1/posts/?ordering=id&fields=title&${query}`, user);
    expect(reply.status).toBe(200);
    return reply.json.results.map((post: { title: string }) => post.title);
  };

  it('match across a foreign key, a reverse relation then a key, a many-to-many, and a JSON array’s element', async () => {
    expect(await titles('writer=jake')).toEqual(['Dragons 101', 'Soup']);
    expect(await titles('starred_by=jane')).toEqual(['Dragons 101']);
    expect(await titles('label=cooking')).toEqual(['Soup']);
    expect(await titles('tag=dragons')).toEqual(['Dragons 101', 'More dragons']);
    expect(await titles('tag=dragons&writer=jane')).toEqual(['More dragons']);
    expect(await titles('rated=3')).toEqual(['Dragons 101', 'More dragons']);
    expect(await titles('owner=jane')).toEqual(['More dragons']);
  });

  it('answer an empty page for a value nothing has, and bind what they are sent', async () => {
    expect(await titles('writer=nobody')).toEqual([]);
    expect(await titles('tag=drag')).toEqual([]);
    expect(await titles(`tag=${encodeURIComponent("dragons' or 1=1 --")}`)).toEqual([]);
    expect(await titles(`writer=${encodeURIComponent('%')}`)).toEqual([]);
  });

  it('refuse a bad value, a lookup after the name, or an overlong value, with the 400 envelope', async () => {
    const bad = await get('/api/v1/posts/?rated=many', jake);
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 'validation_failed', details: { rated: [expect.any(String)] } });
    expect((await get('/api/v1/posts/?writer__in=jake,jane', jake)).status).toBe(400);
    expect((await get(`/api/v1/posts/?tag=${'x'.repeat(201)}`, jake)).status).toBe(400);
  });

  it('are the OpenAPI document’s query parameters', async () => {
    const parameters = (await api.request('GET', '/api/v1/schema/')).json.paths['/api/v1/posts/'].get.parameters;
    const byName = Object.fromEntries(parameters.map((parameter: { name: string }) => [parameter.name, parameter]));
    expect(byName.tag).toMatchObject({ in: 'query', schema: { type: 'string' }, description: 'Records matching tag_list__has_element.' });
    expect(byName.writer).toMatchObject({ in: 'query', schema: { type: 'string' } });
    expect(byName.rated).toMatchObject({ in: 'query', schema: { type: 'integer' } });
    expect(byName.writer__in).toBeUndefined();
    const page = await api.request('GET', '/api/v1/posts/?starred_by=jane', { token: jake.token, headers: { accept: 'text/html' } });
    expect(page.body).toContain('data-field="starred_by"');
    expect(page.body).toContain('value="jane"');
  });

  it('are refused at start-up where the app’s models cannot serve the path', async () => {
    const start = async (filters: Record<string, string>) => {
      const definition = withGeneratedMigrations(defineApp({ collections: [collection('posts', { serializer: postSerializer, filters })], models: [Follow, Star, Label] }));
      const started = await startApi({}, definition);
      await started.close();
    };
    await expect(start({ writer: 'author_id__password' })).rejects.toThrow(/posts: filter "writer": "author_id__password" ends in a write-only field/);
    await expect(start({ writer: 'author_id__nothing' })).rejects.toThrow(/posts: filter "writer": cannot follow "author_id__nothing": "nothing" is no lookup/);
    await expect(start({ tag: 'tag_list__icontains' })).rejects.toThrow(/ends in a lookup that does not fit its field/);
    await expect(start({ page: 'title' })).rejects.toThrow(/posts: filter "page" needs a name of its own/);
    await expect(start({ fan: 'stars__post_id__author_id__username' })).rejects.toThrow(/goes through more than one reverse relation and one foreign key/);
  });

  it('reach the fields the app’s own user model adds', async () => {
    const Member = User.extend({ bio: fields.text({ nullable: true }) });
    const Entry = model('member_entries', { id: fields.id(), title: fields.string({ maxLength: 50 }), author_id: fields.foreignKey('users') });
    const entries = collection('entries', { serializer: serializer(Entry, { fields: ['id', 'title', 'author_id'] }), permissions: [allowAny], filters: { author_bio: 'author_id__bio' } });
    const members = await startApi({}, withGeneratedMigrations(defineApp({ userModel: Member, collections: [entries] })));
    try {
      const [writer, other] = [await members.user('writer'), await members.user('other')];
      await members.database.db.updateTable('users').set({ bio: 'Writes about dragons' }).where('id', '=', writer.id).execute();
      for (const [title, author] of [['by the writer', writer], ['by another', other]] as const) {
        await members.database.db.insertInto('member_entries').values({ title, author_id: author.id }).execute();
      }
      const found = await members.request('GET', `/api/v1/entries/?author_bio=${encodeURIComponent('Writes about dragons')}`);
      expect(found.json.results.map((entry: { title: string }) => entry.title)).toStrictEqual(['by the writer']);
    } finally {
      await members.close();
    }
  });
});

