import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, collection, defineApp, loadConfig, openDatabase, serializer, User } from '../../src/framework/index.js';
import { startApi, type TestApi } from '../support/api.js';
import { lintProblems } from '../support/openapi-lint.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { Note } from '../support/owned-notes.js';

let api: TestApi;
let document: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- an OpenAPI document

beforeAll(async () => {
  api = await startApi();
  const reply = await api.request('GET', '/api/v1/schema/');
  expect(reply.status).toBe(200);
  document = reply.json;
});
afterAll(() => api.close());

/** Every path Fastify routes, from its route tree (`:id` written `{id}`). */
function routedPaths(): string[] {
  const paths: string[] = [];
  const stack: string[] = [];
  for (const line of api.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+) \(/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    paths.push(stack.join('').replace(/:(\w+)/g, '{$1}'));
  }
  return paths;
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and passes the Redocly linter with no errors and no warnings', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(await lintProblems(document)).toEqual([]);
  });

  it('names an operation id on every operation, and needs no credential where none is needed', () => {
    const ids: Record<string, string> = {};
    for (const [path, operations] of Object.entries<Record<string, { operationId: string; security?: unknown[] }>>(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) ids[`${method} ${path}`] = operation.operationId;
    }
    expect(ids).toMatchObject({
      'post /api/v1/auth/token/': 'tokenObtain',
      'delete /api/v1/auth/token/': 'tokenRevoke',
      'get /api/v1/users/': 'usersList',
      'patch /api/v1/users/{id}/': 'usersPartialUpdate',
      'post /api/v1/articles/bulk/': 'articlesBulkCreate',
      'get /api/v1/articles/events/': 'articlesEvents',
      'get /api/posts/{id}': 'postsRetrieve',
      'get /healthz': 'healthCheck',
    });
    expect(new Set(Object.values(ids)).size).toBe(Object.keys(ids).length);
    const anonymous = [
      'post /api/v1/auth/token/', 'post /api/v1/auth/jwt/', 'post /api/v1/auth/jwt/refresh/', 'post /api/v1/auth/login/',
      'get /api/v1/', 'get /api/v1/schema/', 'get /healthz', 'get /readyz', 'get /api/posts', 'post /api/posts', 'delete /api/posts/{id}',
    ];
    for (const operation of anonymous) {
      const [method, path] = operation.split(' ');
      expect(document.paths[path!][method!].security, operation).toEqual([]);
    }
    expect(document.paths['/api/v1/users/'].get.security).toBeUndefined();
    // Each header credential as Bearer, or as DRF's Token.
    expect(document.security).toEqual([{ token: [] }, { tokenAsToken: [] }, { jwt: [] }, { jwtAsToken: [] }, { session: [] }]);
  });

  it('documents the credential as optional where the checks let anonymous callers through (API_REQUIRE_AUTH=false reads)', async () => {
    // A collection that leaves its checks to the API's default: reads open, writes signed in.
    const notes = withGeneratedMigrations(
      defineApp({ collections: [collection('notes', { serializer: serializer(Note, { fields: ['id', 'text'], readOnly: ['id'] }) })] }),
    );
    const open = await startApi({ API_REQUIRE_AUTH: 'false' }, notes);
    try {
      const paths = (await open.request('GET', '/api/v1/schema/')).json.paths;
      const optional = [{ token: [] }, { tokenAsToken: [] }, { jwt: [] }, { jwtAsToken: [] }, { session: [] }, {}];
      expect(paths['/api/v1/notes/'].get.security).toEqual(optional);
      expect(paths['/api/v1/notes/{id}/'].get.security).toEqual(optional);
      expect(paths['/api/v1/notes/'].post.security).toBeUndefined();
      expect(paths['/api/v1/notes/{id}/'].patch.security).toBeUndefined();
      expect((await open.request('GET', '/api/v1/notes/')).status).toBe(200);
      expect((await open.request('POST', '/api/v1/notes/', { body: { text: 'anonymous' } })).status).toBe(401);
    } finally {
      await open.close();
    }
    // Required by default.
    expect(document.paths['/api/v1/articles/'].get.security).toBeUndefined();
  });

  it('documents every route Fastify serves (slashed form), apart from the docs UI, page assets and the admin', () => {
    const documented = new Set(Object.keys(document.paths));
    for (const path of routedPaths()) {
      // The docs UI, page assets and the admin's HTML pages are not the API's operations.
      if (path.startsWith('/api/docs') || path.startsWith('/api/static/') || path.startsWith('/admin')) continue;
      const slashed = path.startsWith('/api/v1') && !path.endsWith('/') ? `${path}/` : path;
      // A parameter named differently by the routes through it (a record's {id}, a nested collection's
      // {parent}) prints as `{id}|{parent}`: the path is documented under one of the names.
      const spellings = [...slashed.matchAll(/\{\w+\}(\|\{\w+\})+/g)].reduce(
        (paths, [alternatives]) => paths.flatMap((candidate) => alternatives.split('|').map((name) => candidate.replace(alternatives, name))),
        [slashed],
      );
      expect(spellings.some((spelling) => documented.has(spelling)), path).toBe(true);
    }
  });

  it('documents exactly the methods each path answers (the rest are 405)', async () => {
    const admin = await api.user('root', { superuser: true });
    for (const [path, operations] of Object.entries<Record<string, unknown>>(document.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      const url = path.replace('{id}', '999999');
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        const reply = await api.request(method.toUpperCase(), url, { token: admin.token, body: method === 'get' || method === 'delete' ? undefined : {} });
        expect(reply.status === 405, `${method} ${path}`).toBe(!(method in operations));
      }
    }
  });

  it('describes list parameters, bodies, responses and security from the declarations', () => {
    const list = document.paths['/api/v1/users/'].get;
    const parameters = Object.fromEntries(list.parameters.map((parameter: { name: string }) => [parameter.name, parameter]));
    for (const name of ['page', 'page_size', 'search', 'ordering', 'username__icontains', 'date_joined__range', 'is_active', 'id__in']) {
      expect(parameters, name).toHaveProperty(name);
    }
    expect(parameters).not.toHaveProperty('password');
    expect(parameters.ordering.description).toContain('Allowed: id, username, email, date_joined');
    expect(Object.keys(list.responses).sort()).toEqual(['200', '304', '400', '401', '403', '404', '406', '414', '429', '500', '503']);
    expect(parameters).toHaveProperty('If-None-Match');
    expect(parameters.Prefer.schema.enum).toEqual(['count=exact', 'count=estimated', 'count=none']);
    expect(list.responses['401'].headers).toHaveProperty('WWW-Authenticate');
    expect(list.responses['429'].headers).toHaveProperty('Retry-After');
    expect(document.paths['/api/v1/articles/'].get.parameters.find((parameter: { name: string }) => parameter.name === 'ordering').description).toContain(
      'Allowed: id, created_at, title',
    );

    const schemas = document.components.schemas;
    const bodyOf = (operation: any) => operation.requestBody.content['application/json'].schema.$ref; // eslint-disable-line @typescript-eslint/no-explicit-any
    const create = document.paths['/api/v1/users/'].post;
    expect(bodyOf(create)).toBe('#/components/schemas/UserCreate');
    expect(schemas.UserCreate.required).toEqual(['username', 'password']);
    expect(bodyOf(document.paths['/api/v1/users/{id}/'].put)).toBe('#/components/schemas/UserUpdate');
    expect(schemas.UserUpdate.required).toEqual(['username']);
    expect(bodyOf(document.paths['/api/v1/users/{id}/'].patch)).toBe('#/components/schemas/UserPartialUpdate');
    expect(schemas.UserPartialUpdate.required).toEqual([]);
    // A GET result sent back: the hidden password as null counts as not sent.
    expect(schemas.UserUpdate.properties.password.type).toEqual(['string', 'null']);
    expect(schemas.User.properties.email.anyOf).toEqual([{ type: 'string', format: 'email' }, { type: 'string', maxLength: 0 }]);
    expect(create.responses).toHaveProperty('415');

    expect(create.responses['201'].content['application/json'].schema.$ref).toBe('#/components/schemas/User');
    expect(Object.keys(create.responses['201'].headers)).toEqual(expect.arrayContaining(['Location', 'ETag', 'RateLimit-Remaining']));
    expect(Object.keys(schemas.User.properties)).toEqual(['id', 'username', 'email', 'is_active', 'date_joined', 'password']);
    expect(schemas.User.required).toEqual(['id', 'username', 'email', 'is_active', 'date_joined', 'password']);
    expect(schemas.User.properties.password.type).toBe('null');
    // A list's or a retrieve's record: the whole one, or narrowed by ?fields= / ?omit= (nothing required, nested records too).
    const whole = [{ $ref: '#/components/schemas/User' }, { $ref: '#/components/schemas/UserSubset' }];
    expect(list.responses['200'].content['application/json'].schema.properties.results.items.anyOf).toEqual(whole);
    expect(document.paths['/api/v1/users/{id}/'].get.responses['200'].content['application/json'].schema.anyOf).toEqual(whole);
    expect(schemas.UserSubset).toMatchObject({ type: 'object', properties: schemas.User.properties });
    expect(schemas.UserSubset).not.toHaveProperty('required');
    expect(schemas.ArticleSubset.properties.author).toEqual({ $ref: '#/components/schemas/UserSummarySubset' });
    expect(parameters.fields.description).toContain('(UserSubset)');
    expect(schemas.Article.properties.author.$ref).toBe('#/components/schemas/UserSummary');
    expect(Object.keys(schemas.UserSummary.properties)).toEqual(['id', 'username']);
    // The collection's POST: one record in, one out, so a generated create answers one record (the array form is bulk/'s).
    const articleCreate = document.paths['/api/v1/articles/'].post;
    expect(articleCreate.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ArticleCreate' });
    expect(articleCreate.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Article' });
    expect(document.paths['/api/v1/articles/bulk/'].post.requestBody.content['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/ArticleCreate' },
      minItems: 1,
      maxItems: 100,
    });
    // A collection without bulk create answers one record.
    expect(create.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/UserCreate' });
    const bulkCreated = document.paths['/api/v1/articles/bulk/'].post.responses['201'].content['application/json'].schema;
    expect(bulkCreated).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Article' } });
    // The live stream: Server-Sent Events, with the list's filters and Last-Event-ID.
    const events = document.paths['/api/v1/articles/events/'].get;
    expect(Object.keys(events.responses['200'].content)).toEqual(['text/event-stream']);
    expect(events.parameters.map(({ name }: { name: string }) => name)).toEqual(expect.arrayContaining(['author_id', 'search', 'fields', 'Last-Event-ID']));
    expect(events.parameters.map(({ name }: { name: string }) => name)).not.toContain('page');
    // Each event, by name and payload (as OpenAPI 3.2's itemSchema says it, an extension in 3.1), for a generated client to type.
    const stream = events.responses['200'].content['text/event-stream'];
    expect(stream['x-itemSchema']).toEqual({ $ref: '#/components/schemas/ArticleEvent' });
    expect(stream.schema.contentSchema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/ArticleEvent' } });
    const record = { anyOf: [{ $ref: '#/components/schemas/Article' }, { $ref: '#/components/schemas/ArticleSubset' }] };
    expect(schemas.ArticleEvent.oneOf.map(({ properties, required }: { properties: { event: { enum: string[] }; data: unknown }; required: string[] }) => [properties.event.enum, properties.data, required])).toEqual([
      [['created'], record, ['event', 'data', 'id']],
      [['updated'], record, ['event', 'data', 'id']],
      [['deleted'], { type: 'object', required: ['id'], properties: { id: expect.objectContaining({ type: 'integer' }) } }, ['event', 'data', 'id']],
      [['reset'], expect.objectContaining({ type: 'object', properties: {}, additionalProperties: false }), ['event', 'data']],
      [['revoked'], expect.objectContaining({ $ref: '#/components/schemas/ErrorEnvelope' }), ['event', 'data']],
    ]);
    expect(document.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });

    const schemes = document.components.securitySchemes;
    expect(Object.keys(schemes).sort()).toEqual(['jwt', 'jwtAsToken', 'session', 'sessionId', 'sessionIdAsToken', 'token', 'tokenAsToken']);
    // Bearer as OpenAPI's bearer scheme (a generated client's `auth` option sends it); DRF's Token keyword as its own API key.
    expect(schemes.token).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.jwt).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(schemes.tokenAsToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
    expect(schemes.tokenAsToken.description).toContain('`Authorization: Token <credential>`');
    // Token revoke takes a token either way; logout the session's cookie, or its id in the header.
    expect(document.paths['/api/v1/auth/token/'].delete.security).toEqual([{ token: [] }, { tokenAsToken: [] }]);
    expect(document.paths['/api/v1/auth/logout/'].post.security).toEqual([{ session: [] }, { sessionId: [] }, { sessionIdAsToken: [] }]);
    expect(document.components.schemas.ErrorEnvelope.required).toEqual(['error', 'code']);
  });
});

describe('named schemas', () => {
  it('refuses to start when two different serializers would share a name, and names it', async () => {
    const twins = defineApp({
      collections: [
        collection('people', { serializer: serializer(User, { fields: ['id', 'username'] }) }),
        collection('accounts', { serializer: serializer(User, { fields: ['id', 'email'] }) }),
      ],
    });
    // The document depends on the declarations alone: an empty in-memory database will do.
    const database = openDatabase('sqlite::memory:');
    const app = await buildApp(twins, { database, config: loadConfig({ LOG_LEVEL: 'silent', SECRET_KEY: 'named-schemas-test-secret-0123456789' }) });
    await expect(app.ready()).rejects.toThrow('Two different schemas are named "User"');
    await app.close();
    await database.close();
  });
});

describe('interactive documentation', () => {
  it('serves Swagger UI from the installed package, branded Restfold and pointed at the document', async () => {
    const page = await api.request('GET', '/api/docs/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('swagger-ui');
    expect(page.body).toContain('<title>Restfold API documentation</title>');
    expect(page.body).not.toContain('favicon-32x32.png');
    expect(page.body).not.toMatch(/https?:\/\/(?!localhost)[^"']*\.(js|css)/);
    const initializer = await api.request('GET', '/api/docs/static/swagger-initializer.js');
    expect(initializer.body).toContain("url: new URL('/api/v1/schema/', window.location.href).href");
    expect(initializer.body).not.toContain('./json');
    expect(initializer.body).toContain("layout: 'BaseLayout'");
    const bundle = await api.request('GET', '/api/docs/static/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
  });
});
