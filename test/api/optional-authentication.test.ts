/**
 * Optional authentication (Conduit's "auth is optional"): a collection open to anonymous callers
 * (allowAny) still authenticates a credential when one comes, so values that depend on who asks
 * (`favorited`, `mine`) render for the signed-in user by token, JWT or session, and as for nobody
 * without one. A bad credential is still 401 there (SPEC.md: never silently anonymous), and the
 * OpenAPI document marks the credential optional on those operations only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowAny, collection, computed, defineApp, fields, isAuthenticated, model, serializer } from '../../src/framework/index.js';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Article = model('articles', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  author_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const Favorite = model('favorites', {
  id: fields.id(),
  article_id: fields.foreignKey('articles'),
  user_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});

const app = withGeneratedMigrations(defineApp({
  collections: [
    collection('articles', {
      serializer: serializer(Article, {
        fields: ['id', 'title', 'favorited', 'mine', 'viewer'],
        computed: {
          // SQL-backed, in the page's own statement: whether the requesting user favourited it.
          favorited: computed.exists('favorites', 'article_id', { requestingUser: 'user_id' }),
          mine: computed.from((row, { user }) => user !== null && Number(row.author_id) === user.id, { schema: { type: 'boolean' }, reads: ['author_id'] }),
          viewer: computed.from((_row, { user }) => user?.username ?? null, { schema: { type: ['string', 'null'] } }),
        },
      }),
      // Reads open to anyone (API_REQUIRE_AUTH is on by default); writes need a user.
      permissions: { list: [allowAny], retrieve: [allowAny], create: [isAuthenticated] },
      orderingFields: ['title'],
    }),
    collection('favorites', { serializer: serializer(Favorite, { fields: ['id', 'article_id', 'user_id'], readOnly: ['user_id'] }) }),
  ],
}));

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let hers: number;
let his: number;

beforeAll(async () => {
  api = await startApi({ SECRET_KEY: 'optional-auth-secret-key-0123456789abcdef' }, app);
  alice = await api.user('alice');
  bob = await api.user('bob');
  hers = (await api.request('POST', '/api/v1/articles/', { token: alice.token, body: { title: 'A, by alice' } })).json.id;
  his = (await api.request('POST', '/api/v1/articles/', { token: bob.token, body: { title: 'B, by bob' } })).json.id;
  await api.request('POST', '/api/v1/favorites/', { token: alice.token, body: { article_id: his } });
});
afterAll(() => api.close());

const anonymous = () => [
  { id: hers, title: 'A, by alice', favorited: false, mine: false, viewer: null },
  { id: his, title: 'B, by bob', favorited: false, mine: false, viewer: null },
];
const asAlice = () => [
  { id: hers, title: 'A, by alice', favorited: false, mine: true, viewer: 'alice' },
  { id: his, title: 'B, by bob', favorited: true, mine: false, viewer: 'alice' },
];

/** alice's other credentials: a JWT access token, and a session cookie (a GET needs no CSRF token). */
async function otherCredentials(): Promise<Record<string, string>[]> {
  const jwt = await api.request('POST', '/api/v1/auth/jwt/', { body: { username: 'alice', password: PASSWORD } });
  const login = await api.request('POST', '/api/v1/auth/login/', { body: { username: 'alice', password: PASSWORD } });
  const cookie = String(login.headers['set-cookie']).split(';')[0]!;
  return [{ authorization: `Bearer ${jwt.json.access}` }, { cookie }];
}

describe('an endpoint open to anonymous callers', () => {
  it('renders a list and a record for nobody without a credential', async () => {
    const list = await api.request('GET', '/api/v1/articles/?ordering=title');
    expect(list.status).toBe(200);
    expect(list.json.results).toEqual(anonymous());
    expect((await api.request('GET', `/api/v1/articles/${his}/`)).json).toEqual(anonymous()[1]);
  });

  it('knows the signed-in user on the same list and record, by token, JWT or session', async () => {
    const list = await api.request('GET', '/api/v1/articles/?ordering=title', { token: alice.token });
    expect(list.json.results).toEqual(asAlice());
    expect((await api.request('GET', `/api/v1/articles/${his}/`, { token: alice.token })).json).toEqual(asAlice()[1]);
    for (const headers of await otherCredentials()) {
      expect((await api.request('GET', '/api/v1/articles/?ordering=title', { headers })).json.results).toEqual(asAlice());
      expect((await api.request('GET', `/api/v1/articles/${hers}/`, { headers })).json).toEqual(asAlice()[0]);
    }
    const bobs = await api.request('GET', `/api/v1/articles/${his}/`, { token: bob.token });
    expect(bobs.json).toEqual({ id: his, title: 'B, by bob', favorited: false, mine: true, viewer: 'bob' });
  });

  it('answers 401 to a bad credential rather than treating the caller as anonymous', async () => {
    for (const authorization of [`Bearer rf_${'Z'.repeat(43)}`, 'Bearer not.a.jwt', 'Token ']) {
      for (const url of ['/api/v1/articles/', `/api/v1/articles/${his}/`]) {
        const reply = await api.request('GET', url, { headers: { authorization } });
        expect(reply.status).toBe(401);
        expect(reply.json.code).toBe('authentication_failed');
        expect(reply.headers['www-authenticate']).toBe('Bearer');
      }
    }
  });

  it('varies by the credential: one caller’s ETag never answers 304 to another', async () => {
    const open = await api.request('GET', `/api/v1/articles/${his}/`);
    expect(String(open.headers.vary)).toContain('Authorization');
    const signedIn = await api.request('GET', `/api/v1/articles/${his}/`, { token: alice.token, headers: { 'if-none-match': String(open.headers.etag) } });
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.etag).not.toBe(open.headers.etag);
  });

  it('is documented with an optional credential on the open operations only', async () => {
    const { paths } = (await api.request('GET', '/api/v1/schema/')).json;
    const optional = [{ token: [] }, { tokenAsToken: [] }, { jwt: [] }, { jwtAsToken: [] }, { session: [] }, {}];
    expect(paths['/api/v1/articles/'].get.security).toEqual(optional);
    expect(paths['/api/v1/articles/{id}/'].get.security).toEqual(optional);
    expect(paths['/api/v1/articles/'].post.security).toBeUndefined();
    expect(paths['/api/v1/articles/{id}/'].patch.security).toBeUndefined();
  });
});
