/**
 * What a security review of the user, credential and filter declarations found, over HTTP on SQLite
 * and PostgreSQL: a credential is issued and shown only for a users record; no serializer makes a
 * user a superuser, (de)activates one or moves their credential version unless a superuser writes
 * it; filters across relations stay within the related collections' scopes; `credentials.check`
 * names one login field and counts one bucket per account; an inactive user is issued nothing;
 * `rename` hides the model's names in refusals.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allowAny,
  collection,
  computed,
  defineApp,
  fields,
  isAuthenticated,
  model,
  relations,
  serializer,
  User,
  validationFailed,
  type AppDefinition,
  type Permission,
} from '../../src/framework/index.js';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';
import { loginAction } from '../support/login-action.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Member = User.extend({ email: fields.email({ unique: true }) });
const isSuperuser: Permission = { description: 'a superuser', hasPermission: ({ user }) => user?.isSuperuser === true };

const login = loginAction();

const Note = model('notes', { id: fields.id(), text: fields.string({ maxLength: 100 }) });

describe('credentials are issued and shown for users records only', () => {
  it('refuses computed.credential() on a serializer of another table, at declaration', () => {
    expect(() => serializer(Note, { fields: ['id', 'text', 'token'], computed: { token: computed.credential() } })).toThrow(
      /computed "token" may be shown only by a serializer of users/,
    );
  });

  const Bookmark = model('marks', { id: fields.id(), owner_id: fields.foreignKey('users'), label: fields.string({ maxLength: 50 }) });
  const withToken = serializer(Member, { name: 'Owner', fields: ['id', 'username', 'token'], computed: { token: computed.credential() } });
  const app = withGeneratedMigrations(
    defineApp({
      userModel: Member,
      collections: [
        collection('notes', {
          serializer: serializer(Note, { fields: ['id', 'text'] }),
          permissions: [allowAny],
          hooks: {
            afterCreate: async ({ record, credentials }) => {
              await credentials.issue(record);
            },
          },
        }),
        collection('marks', {
          serializer: serializer(Bookmark, { fields: ['id', 'label', 'owner'], nested: { owner: { source: 'owner_id', serializer: withToken } } }),
          permissions: [isAuthenticated],
        }),
      ],
    }),
  );
  let api: TestApi;
  let alice: TestUser;
  const lines: string[] = [];
  beforeAll(async () => {
    const logStream = new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) });
    api = await startApi({ LOG_LEVEL: 'error' }, app, { logStream });
    alice = await api.user('alice');
  });
  afterAll(() => api.close());

  it("refuses credentials.issue for a record of another table: no token, nothing stored, the cause in the log", async () => {
    const tokens = async () => (await api.database.db.selectFrom('auth_tokens').select('key_hash').execute()).length;
    const before = await tokens();
    const reply = await api.request('POST', '/api/v1/notes/', { body: { text: `note for user ${alice.id}` } });
    expect(reply.status).toBe(500);
    expect(reply.body).not.toMatch(/rf_/);
    expect(await tokens()).toBe(before);
    expect(await api.database.db.selectFrom('notes').select('id').execute()).toStrictEqual([]);
    expect(lines.join('')).toContain('credentials.issue: pass the user');
  });

  it("shows no credential in a users record nested in another table's, not even the caller's own", async () => {
    await api.database.db.insertInto('marks').values({ owner_id: alice.id, label: 'mine' }).execute();
    const [mark] = (await api.request('GET', '/api/v1/marks/', { token: alice.token })).json.results;
    const own = await api.request('GET', `/api/v1/marks/${mark.id}/`, { token: alice.token });
    expect(own.status).toBe(200);
    expect(own.json.owner).toStrictEqual({ id: alice.id, username: 'alice', token: null });
    expect(own.body).not.toContain(alice.token);
  });
});

describe('account flags and credential versions through an app serializer', () => {
  const everything = serializer(Member, {
    name: 'Account',
    fields: ['id', 'username', 'email', 'is_superuser', 'is_active', 'password'],
    writeOnly: ['password'],
  });
  const app = withGeneratedMigrations(
    defineApp({
      userModel: Member,
      collections: [
        collection('me', { serializer: everything, singleton: ({ user }) => user?.id, permissions: [isAuthenticated] }),
        collection('accounts', { serializer: everything, permissions: { create: [allowAny], list: [isSuperuser], retrieve: [isSuperuser], update: [isSuperuser], partial_update: [isSuperuser], destroy: [isSuperuser] } }),
      ],
    }),
  );
  let api: TestApi;
  let alice: TestUser;
  let root: TestUser;
  beforeAll(async () => {
    api = await startApi({ THROTTLE_LOGIN: 'off' }, app);
    alice = await api.user('alice');
    root = await api.user('root', { superuser: true });
  });
  afterAll(() => api.close());

  const stored = async (id: number) => api.database.db.selectFrom('users').select(['is_superuser', 'is_active']).where('id', '=', id).executeTakeFirstOrThrow();

  it('refuses a user making themselves a superuser or (de)activating their account: 403, nothing stored', async () => {
    for (const body of [{ is_superuser: true }, { is_active: false }, { is_superuser: true, username: 'alice2' }]) {
      const reply = await api.request('PATCH', '/api/v1/me/', { token: alice.token, body });
      expect(reply.status).toBe(403);
      expect(reply.json.code).toBe('permission_denied');
    }
    const row = await stored(alice.id);
    expect([Boolean(row.is_superuser), Boolean(row.is_active)]).toStrictEqual([false, true]);
    expect((await api.request('GET', '/api/v1/me/', { token: alice.token })).json.username).toBe('alice');
  });

  it('lets a user send the flags as they stand (a full PUT), and a superuser change them', async () => {
    const put = await api.request('PUT', '/api/v1/me/', { token: alice.token, body: { username: 'alice', email: 'alice@example.com', is_superuser: false, is_active: true } });
    expect(put.status).toBe(200);
    const promoted = await api.request('PATCH', `/api/v1/accounts/${alice.id}/`, { token: root.token, body: { is_superuser: true } });
    expect(promoted.status).toBe(200);
    expect(Boolean((await stored(alice.id)).is_superuser)).toBe(true);
    expect((await api.request('PATCH', `/api/v1/accounts/${alice.id}/`, { token: root.token, body: { is_superuser: false } })).status).toBe(200);
  });

  it('refuses an anonymous registration as a superuser or an inactive user: 403, nothing stored', async () => {
    for (const [username, flags] of [['mallory', { is_superuser: true }], ['sleeper', { is_active: false }]] as const) {
      const reply = await api.request('POST', '/api/v1/accounts/', { body: { username, email: `${username}@example.org`, password: 'a-long-password-1', ...flags } });
      expect(reply.status).toBe(403);
      expect(await api.database.db.selectFrom('users').select('id').where('username', '=', username).execute()).toStrictEqual([]);
    }
    expect((await api.request('POST', '/api/v1/accounts/', { body: { username: 'plain', email: 'plain@example.org', password: 'a-long-password-1', is_superuser: false } })).status).toBe(201);
  });

  it('gives a computed field that names no columns none of the credential version columns', async () => {
    const peek = collection('peek', {
      serializer: serializer(Member, { name: 'Peek', fields: ['id', 'seen'], computed: { seen: computed.from((row) => Object.keys(row).filter((name) => name.startsWith('credentials'))) } }),
      singleton: ({ user }) => user?.id,
      permissions: [isAuthenticated],
    });
    const peeking = await startApi({}, withGeneratedMigrations(defineApp({ userModel: Member, collections: [peek] })));
    try {
      const own = await peeking.request('GET', '/api/v1/peek/', { token: (await peeking.user('eve')).token });
      expect(own.status).toBe(200);
      expect(own.json.seen).toStrictEqual([]);
    } finally {
      await peeking.close();
    }
  });

  it('says in the OpenAPI document that only a superuser changes the flags', async () => {
    const account = (await api.request('GET', '/api/v1/schema/')).json.components.schemas.Account;
    for (const flag of ['is_superuser', 'is_active']) expect(account.properties[flag].description).toMatch(/Only a superuser may change it/);
  });

  it('refuses, at declaration, a serializer, filter or ordering over the credential version columns', () => {
    for (const column of ['credentials_version', 'credentials_kept']) {
      expect(() => serializer(Member, { fields: ['id', column] })).toThrow(new RegExp(`${column} only the framework reads and writes`));
      expect(() => serializer(Member, { fields: ['id', 'username'], search: [column] })).toThrow(new RegExp(`${column} only the framework reads`));
      expect(() => serializer(Member, { fields: ['id', 'seen'], computed: { seen: computed.from((row) => row[column], { reads: [column] }) } })).toThrow(/only the framework reads/);
      const plain = serializer(Member, { fields: ['id', 'username'] });
      expect(() => collection('people', { serializer: plain, filterFields: [column] })).toThrow(/cannot filter or order by/);
      expect(() => collection('people', { serializer: plain, orderingFields: [column] })).toThrow(/cannot filter or order by/);
    }
  });

  it('refuses, at start-up, a named filter reaching a credential version column, on the users table or across a relation', async () => {
    const plain = serializer(Member, { fields: ['id', 'username'] });
    const notes = serializer(model('notes', { id: fields.id(), author_id: fields.foreignKey('users') }), { fields: ['id'] });
    const apps: AppDefinition[] = [
      defineApp({ userModel: Member, collections: [collection('people', { serializer: plain, filters: { version: 'credentials_version' } })] }),
      defineApp({ userModel: Member, collections: [collection('notes', { serializer: notes, filters: { kept: 'author_id__credentials_kept' } })] }),
    ];
    for (const definition of apps) await expect(startApi({}, definition)).rejects.toThrow(/ends in a field only the framework reads/);
  });
});

describe('filters across relations stay within the related collections\' scopes', () => {
  const Article = model('articles', { id: fields.id(), title: fields.string({ maxLength: 100 }) });
  const Bookmark = model('bookmarks', {
    id: fields.id(),
    article_id: fields.foreignKey('articles'),
    user_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
    note: fields.string({ maxLength: 100 }),
  });
  const app = withGeneratedMigrations(
    defineApp({
      collections: [
        collection('articles', {
          serializer: serializer(Article, { fields: ['id', 'title', 'bookmarks'], relations: { bookmarks: relations.reverse('bookmarks', 'article_id') } }),
          permissions: [isAuthenticated],
          filterFields: ['bookmarks'],
          filters: { bookmarked_by: 'bookmarks__user_id__username', note: 'bookmarks__note' },
        }),
        collection('bookmarks', {
          serializer: serializer(Bookmark, { fields: ['id', 'article_id', 'note'] }),
          permissions: [isAuthenticated],
          scope: ({ user }) => ({ user_id: user?.id ?? null }),
        }),
      ],
    }),
  );
  let api: TestApi;
  let alice: TestUser;
  let hank: TestUser;
  let hanksMark: number;
  beforeAll(async () => {
    api = await startApi({}, app);
    alice = await api.user('alice');
    hank = await api.user('hank');
    for (const title of ['Public A', 'Public B']) await api.request('POST', '/api/v1/articles/', { token: alice.token, body: { title } });
    const [first] = (await api.request('GET', '/api/v1/articles/?ordering=id', { token: alice.token })).json.results;
    hanksMark = (await api.request('POST', '/api/v1/bookmarks/', { token: hank.token, body: { article_id: first.id, note: 'private thought' } })).json.id;
  });
  afterAll(() => api.close());

  const titles = async (query: string, user: TestUser) => {
    const reply = await api.request('GET', `/api/v1/articles/${query}`, { token: user.token });
    expect(reply.status).toBe(200);
    return reply.json.results.map((article: { title: string }) => article.title);
  };

  it("matches no related row outside the caller's scope: another user's bookmarks and notes stay unseen", async () => {
    expect(await titles('?bookmarked_by=hank', alice)).toStrictEqual([]);
    expect(await titles('?note=private%20thought', alice)).toStrictEqual([]);
    expect(await titles(`?bookmarks=${hanksMark}`, alice)).toStrictEqual([]);
  });

  it('matches the rows the caller may see', async () => {
    expect(await titles('?bookmarked_by=hank', hank)).toStrictEqual(['Public A']);
    expect(await titles('?note=private%20thought', hank)).toStrictEqual(['Public A']);
    expect(await titles(`?bookmarks=${hanksMark}`, hank)).toStrictEqual(['Public A']);
  });
});

describe('credentials.check: one login field, one throttle bucket per account', () => {
  const served = (userModel: typeof User) =>
    withGeneratedMigrations(
      defineApp({
        userModel,
        collections: [collection('members', { serializer: serializer(userModel, { name: 'Member', fields: ['id', 'username'] }), permissions: [allowAny], actions: { login } })],
      }),
    );

  describe('on a user model with a unique e-mail', () => {
    let api: TestApi;
    beforeAll(async () => {
      api = await startApi({ THROTTLE_LOGIN: '2/min' }, served(Member));
      await api.user('alice');
      await api.user('bob');
      await api.user('guarded');
    });
    afterAll(() => api.close());

    /** A request from a given client address, so only the per-account count can refuse it. */
    const from = async (address: string, url: string, body: unknown) =>
      (await api.app.inject({ method: 'POST', url, remoteAddress: address, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) })).statusCode;

    it('refuses both a username and an e-mail as a wrong password would, whichever would match', async () => {
      expect(await from('10.1.0.1', '/api/v1/members/login/', { username: 'bob', email: 'alice@example.com', password: PASSWORD })).toBe(401);
      expect(await from('10.1.0.2', '/api/v1/members/login/', { username: 'alice', email: 'alice@example.com', password: PASSWORD })).toBe(401);
      expect(await from('10.1.0.3', '/api/v1/members/login/', { email: 'bob@example.com', password: PASSWORD })).toBe(200);
    });

    it('counts a username, its other case, an e-mail and the built-in token login against one bucket per account', async () => {
      expect(await from('10.2.0.1', '/api/v1/members/login/', { username: 'guarded', password: 'wrong' })).toBe(401);
      expect(await from('10.2.0.2', '/api/v1/auth/token/', { username: 'GUARDED', password: 'wrong' })).toBe(400);
      expect(await from('10.2.0.3', '/api/v1/members/login/', { email: 'guarded@example.com', password: PASSWORD })).toBe(429);
      expect(await from('10.2.0.4', '/api/v1/auth/token/', { username: 'guarded', password: PASSWORD })).toBe(429);
    });
  });

  describe('on the default user model (e-mails not unique)', () => {
    let api: TestApi;
    const lines: string[] = [];
    beforeAll(async () => {
      const logStream = new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) });
      api = await startApi({ THROTTLE_LOGIN: '3/min', LOG_LEVEL: 'error' }, served(User), { logStream });
      await api.user('carol');
    });
    afterAll(() => api.close());

    it('answers a check by e-mail, or by both keys, as a wrong password (never a 500), throttled first; the cause is logged once', async () => {
      const sent = [
        { username: 'carol', email: 'carol@example.com', password: PASSWORD },
        { email: 'carol@example.com', password: PASSWORD },
        { email: 'carol@example.com', password: PASSWORD },
      ];
      for (const body of sent) expect((await api.request('POST', '/api/v1/members/login/', { body })).status).toBe(401);
      expect((await api.request('POST', '/api/v1/members/login/', { body: { username: 'carol', password: PASSWORD } })).status).toBe(429);
      expect(lines.join('').match(/credentials\.check by email needs a unique email/g)).toHaveLength(1);
    });
  });
});

describe('credentials.issue for an inactive user', () => {
  const accounts = collection('accounts', {
    serializer: serializer(Member, { name: 'Account', fields: ['id', 'username'] }),
    permissions: [isSuperuser],
    actions: { issue: { detail: true, method: 'POST', permissions: [isSuperuser], handler: async ({ record, credentials }) => ({ token: await credentials.issue(record!) }) } },
  });
  const app = withGeneratedMigrations(defineApp({ userModel: Member, collections: [accounts] }));

  for (const auth of ['token', 'jwt']) {
    describe(`AUTH=${auth}`, () => {
      let api: TestApi;
      /** The superuser's credential of the kind the app authenticates with. */
      let root: string;
      beforeAll(async () => {
        api = await startApi({ AUTH: auth }, app);
        root = (await api.user('root', { superuser: true })).token;
        if (auth === 'jwt') root = (await api.request('POST', '/api/v1/auth/jwt/', { body: { username: 'root', password: PASSWORD } })).json.access;
      });
      afterAll(() => api.close());

      it('refuses it with a 400 naming why, and issues for an active one', async () => {
        const sleeper = await api.user('sleeper', { active: false });
        const tokensOf = async (id: number) => (await api.database.db.selectFrom('auth_tokens').select('key_hash').where('user_id', '=', id).execute()).length;
        const before = await tokensOf(sleeper.id);
        const refused = await api.request('POST', `/api/v1/accounts/${sleeper.id}/issue/`, { token: root, body: {} });
        expect(refused.status).toBe(400);
        expect(refused.json.details.non_field_errors[0]).toMatch(/inactive/);
        expect(await tokensOf(sleeper.id)).toBe(before);
        const awake = await api.user('awake');
        const issued = await api.request('POST', `/api/v1/accounts/${awake.id}/issue/`, { token: root, body: {} });
        expect(issued.status).toBe(200);
        expect((await api.request('GET', `/api/v1/accounts/${awake.id}/`, { token: issued.json.token })).status).toBe(403);
      });
    });
  }
});

describe('rename keeps the model\'s names out of refusals', () => {
  const Widget = model('widgets', { id: fields.id(), code_name: fields.string({ maxLength: 50, unique: true }) });
  const app = withGeneratedMigrations(
    defineApp({
      collections: [
        collection('widgets', {
          serializer: serializer(Widget, { fields: ['id', 'code_name'], rename: { code_name: 'code' } }),
          permissions: [allowAny],
          bulkCreate: { max: 10 },
          hooks: {
            beforeCreate: ({ values }) => {
              if (values.code_name === 'forbidden') throw validationFailed({ code_name: ['Not this one.'] });
            },
          },
        }),
      ],
    }),
  );
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({}, app);
    await api.request('POST', '/api/v1/widgets/', { body: { code: 'taken' } });
  });
  afterAll(() => api.close());

  it('reports a unique clash under the shown name, with a message naming it, alone and in a bulk create', async () => {
    const one = await api.request('POST', '/api/v1/widgets/', { body: { code: 'taken' } });
    expect(one.status).toBe(400);
    expect(one.json.details).toStrictEqual({ code: ['A record with this code already exists.'] });
    const bulk = await api.request('POST', '/api/v1/widgets/', { body: [{ code: 'fresh' }, { code: 'taken' }] });
    expect(bulk.status).toBe(400);
    expect(bulk.json.details).toStrictEqual({ '1.code': ['A record with this code already exists.'] });
  });

  it("reports a hook's refusal under the shown name, alone and in a bulk create", async () => {
    const one = await api.request('POST', '/api/v1/widgets/', { body: { code: 'forbidden' } });
    expect(one.status).toBe(400);
    expect(one.json.details).toStrictEqual({ code: ['Not this one.'] });
    const bulk = await api.request('POST', '/api/v1/widgets/', { body: [{ code: 'fine' }, { code: 'forbidden' }] });
    expect(bulk.json.details).toStrictEqual({ '1.code': ['Not this one.'] });
    expect(JSON.stringify([one.json, bulk.json])).not.toContain('code_name');
  });
});
