/**
 * An API someone else specified, declared whole (a Todo-Backend-like list): a list that is a plain
 * JSON array (DRF's `pagination_class = None`), still filtered, ordered, scoped and bounded; a
 * DELETE on the list path deleting what the filters select, in one statement, within the scope
 * and the destroy permissions; each record's own absolute URL as a field (DRF's
 * HyperlinkedIdentityField); and the app's own routes on a collection's path for the methods the
 * collection does not serve.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildApp,
  collection,
  computed,
  defineApp,
  fields,
  hasPermission,
  isAuthenticated,
  isOwner,
  loadConfig,
  model,
  openDatabase,
  serializer,
  User,
  type AppDefinition,
  type FastifyInstance,
} from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const Todo = model('todos', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  completed: fields.boolean({ default: false }),
  order: fields.integer({ nullable: true }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const Step = model('steps', { id: fields.id(), text: fields.string({ maxLength: 100 }), todo_id: fields.foreignKey('todos', { onDelete: 'restrict' }) });
const Label = model('labels', { id: fields.id(), name: fields.string({ maxLength: 40 }), color: fields.string({ maxLength: 10 }) });

const person = serializer(User, { name: 'Person', fields: ['url', 'id', 'username'], computed: { url: computed.url() } });
const todoFields = {
  fields: ['url', 'id', 'title', 'completed', 'order', 'owner'],
  readOnly: ['owner'],
  search: ['title'],
  computed: { url: computed.url() },
  nested: { owner: { source: 'owner_id', serializer: person } },
};

const todoSerializer = serializer(Todo, todoFields);
const todos = collection('todos', {
  serializer: todoSerializer,
  actions: { echo: { detail: true, method: 'GET', handler: (context) => todoSerializer.render(context.record!, context) } },
  pagination: 'none',
  pageSize: 4,
  maxPageSize: 4,
  filterFields: ['completed', 'title'],
  orderingFields: ['order', 'title'],
  defaultOrdering: ['order'],
  scope: ({ user }) => ({ owner_id: user?.id ?? null }),
  permissions: [isAuthenticated],
  bulkDelete: 'all',
});

const app = withGeneratedMigrations(
  defineApp({
    routers: [{ prefix: '/api/v1' }, { prefix: '/v2', trailingSlash: 'absent', collections: ['todos', 'steps'] }],
    collections: [
      todos,
      collection('steps', {
        serializer: serializer(Step, { fields: ['url', 'id', 'text'], computed: { url: computed.url() } }),
        parent: { collection: todos, field: 'todo_id' },
        permissions: [isAuthenticated],
      }),
      collection('labels', {
        serializer: serializer(Label, { fields: ['id', 'name', 'color'] }),
        filterFields: ['color', 'name'],
        permissions: { list: [isAuthenticated], retrieve: [isAuthenticated], create: [isAuthenticated], destroy: [hasPermission('labels.delete')] },
        builtInActions: ['list', 'retrieve', 'create', 'destroy'],
        bulkDelete: 'filtered',
        pagination: 'none',
        envelope: { record: 'label', list: 'labels', count: 'labelsCount' },
      }),
      collection('people', { serializer: person, builtInActions: ['list', 'retrieve'], permissions: [isAuthenticated] }),
    ],
    // The app's own DELETE on a collection's list path (the people do not serve it).
    routes: (routes: FastifyInstance) => {
      routes.delete('/api/v1/people/', async (_request, reply) => reply.status(202).send({ queued: true }));
    },
  }),
);

const sent: string[] = [];
let api: TestApi;
let alice: TestUser;
let bob: TestUser;
let curator: TestUser;

beforeAll(async () => {
  api = await startApi({}, app, { appDatabase: recording(sent) });
  alice = await api.user('alice');
  bob = await api.user('bob');
  curator = await api.user('curator', { permissions: ['labels.delete'] });
});
afterAll(() => api.close());

const as = (user: TestUser) => (method: string, url: string, body?: unknown) => api.request(method, url, { token: user.token, body });
const origin = 'http://localhost';

/** Empties the todos (and their steps) between tests. */
async function fresh(): Promise<void> {
  await api.database.db.deleteFrom('steps').execute();
  await api.database.db.deleteFrom('todos').execute();
}

async function todosOf(user: TestUser, titles: readonly string[], completed: (title: string) => boolean = () => false): Promise<number[]> {
  const ids: number[] = [];
  for (const [order, title] of titles.entries()) ids.push((await as(user)('POST', '/api/v1/todos/', { title, order, completed: completed(title) })).json.id);
  return ids;
}

describe('an unpaginated list (pagination: none)', () => {
  it('is a plain JSON array, filtered, ordered and scoped as the paginated list would be', async () => {
    await fresh();
    await todosOf(alice, ['walk', 'shop', 'cook'], (title) => title === 'shop');
    await todosOf(bob, ['fish']);
    const all = await as(alice)('GET', '/api/v1/todos/');
    expect(all.status).toBe(200);
    expect(all.json.map((todo: { title: string }) => todo.title)).toEqual(['walk', 'shop', 'cook']);
    expect((await as(alice)('GET', '/api/v1/todos/?completed=false&ordering=-title')).json.map((todo: { title: string }) => todo.title)).toEqual(['walk', 'cook']);
    expect((await as(alice)('GET', '/api/v1/todos/?search=sho')).json.map((todo: { title: string }) => todo.title)).toEqual(['shop']);
    expect((await as(bob)('GET', '/api/v1/todos/')).json.map((todo: { title: string }) => todo.title)).toEqual(['fish']);
    expect((await as(alice)('GET', '/api/v1/todos/?completed=maybe')).status).toBe(400);
    const tag = all.headers.etag as string;
    expect((await api.request('GET', '/api/v1/todos/', { token: alice.token, headers: { 'if-none-match': tag } })).status).toBe(304);
  });

  it('refuses more records than its maxPageSize rather than cut the list short', async () => {
    await fresh();
    await todosOf(alice, ['a', 'b', 'c', 'd', 'e'], (title) => title === 'e');
    const over = await as(alice)('GET', '/api/v1/todos/');
    expect(over.status).toBe(400);
    expect(over.json).toMatchObject({ code: 'validation_failed', details: { non_field_errors: ['More than 4 records match; this list answers at most 4. Narrow it with its filters.'] } });
    expect((await as(alice)('GET', '/api/v1/todos/?completed=false')).json).toHaveLength(4);
  });

  it('is the envelope’s list, with the count of the whole list', async () => {
    await as(alice)('POST', '/api/v1/labels/', { label: { name: 'urgent', color: 'red' } });
    const listed = await as(alice)('GET', '/api/v1/labels/?color=red');
    expect(listed.json).toEqual({ labels: [expect.objectContaining({ name: 'urgent' })], labelsCount: 1 });
  });
});

describe('DELETE on the list path (bulkDelete)', () => {
  it('deletes what the filters select, within the scope, in one statement, and answers 204', async () => {
    await fresh();
    await todosOf(alice, ['walk', 'shop', 'cook'], (title) => title !== 'walk');
    await todosOf(bob, ['fish', 'sail'], () => true);
    sent.length = 0;
    const deleted = await as(alice)('DELETE', '/api/v1/todos/?completed=true');
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');
    expect(sent.filter((statement) => /^\s*delete\b/i.test(statement))).toHaveLength(1);
    expect((await as(alice)('GET', '/api/v1/todos/')).json.map((todo: { title: string }) => todo.title)).toEqual(['walk']);
    expect((await as(bob)('GET', '/api/v1/todos/')).json.map((todo: { title: string }) => todo.title)).toEqual(['fish', 'sail']);
    expect((await as(bob)('DELETE', '/api/v1/todos/?search=AI')).status).toBe(204);
    expect((await as(bob)('GET', '/api/v1/todos/')).json.map((todo: { title: string }) => todo.title)).toEqual(['fish']);
  });

  it('deletes every record the request may reach when the collection allows it unfiltered, and no one else’s', async () => {
    await fresh();
    await todosOf(alice, ['walk', 'shop']);
    await todosOf(bob, ['fish']);
    expect((await as(alice)('DELETE', '/v2/todos')).status).toBe(204);
    expect((await as(alice)('GET', '/api/v1/todos/')).json).toEqual([]);
    expect((await as(bob)('GET', '/api/v1/todos/')).json).toHaveLength(1);
    expect((await api.request('DELETE', '/api/v1/todos/')).status).toBe(401);
    expect((await as(bob)('GET', '/api/v1/todos/')).json).toHaveLength(1);
  });

  it('refuses a page or an unknown filter, deleting nothing', async () => {
    await fresh();
    await todosOf(alice, ['walk']);
    const paged = await as(alice)('DELETE', '/api/v1/todos/?page=2');
    expect(paged.status).toBe(400);
    expect(paged.json.details).toEqual({ page: ['A delete takes no page: it deletes every record its filters select.'] });
    const unknown = await as(alice)('DELETE', '/api/v1/todos/?owner_id=1');
    expect(unknown.status).toBe(400);
    expect(Object.keys(unknown.json.details)).toEqual(['owner_id']);
    expect((await as(alice)('GET', '/api/v1/todos/')).json).toHaveLength(1);
  });

  it('is refused whole by a foreign key that restricts it', async () => {
    await fresh();
    const [walk] = await todosOf(alice, ['walk', 'shop']);
    expect((await as(alice)('POST', `/api/v1/todos/${walk}/steps/`, { text: 'shoes' })).status).toBe(201);
    const refused = await as(alice)('DELETE', '/api/v1/todos/');
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'protected', details: { steps: [expect.any(String)] } });
    expect((await as(alice)('GET', '/api/v1/todos/')).json).toHaveLength(2);
  });

  it('requires a filter unless declared otherwise, and the destroy permissions', async () => {
    for (const [name, color] of [['urgent', 'red'], ['later', 'blue'], ['blocked', 'red']]) await as(alice)('POST', '/api/v1/labels/', { label: { name, color } });
    const unfiltered = await as(curator)('DELETE', '/api/v1/labels/');
    expect(unfiltered.status).toBe(400);
    expect(unfiltered.json.details).toEqual({ non_field_errors: ['Name at least one filter: this collection does not delete all its records at once.'] });
    expect((await as(alice)('DELETE', '/api/v1/labels/?color=red')).status).toBe(403);
    expect((await as(curator)('DELETE', '/api/v1/labels/?color=red')).status).toBe(204);
    expect((await as(alice)('GET', '/api/v1/labels/')).json.labels.map((label: { name: string }) => label.name)).toEqual(['later']);
  });
});

describe('a record’s own URL (computed.url())', () => {
  it('is the absolute URL of its detail path under the request’s router, as Location is', async () => {
    await fresh();
    const created = await as(alice)('POST', '/api/v1/todos/', { title: 'walk', order: 1 });
    const { id } = created.json;
    expect(created.json.url).toBe(`${origin}/api/v1/todos/${id}/`);
    expect(created.json.url).toBe(created.headers.location);
    expect((await as(alice)('GET', created.json.url.slice(origin.length))).json.url).toBe(created.json.url);
    expect((await as(alice)('GET', '/api/v1/todos/')).json[0].url).toBe(created.json.url);
    expect((await as(alice)('PATCH', `/api/v1/todos/${id}/`, { completed: true })).json.url).toBe(created.json.url);
    expect((await as(alice)('GET', `/api/v1/todos/${id}/echo/`)).json.url).toBe(created.json.url);
    const underV2 = await api.request('GET', `/v2/todos/${id}`, { token: alice.token, headers: { host: 'api.example.com' } });
    expect(underV2.json.url).toBe(`http://api.example.com/v2/todos/${id}`);
  });

  it('links a nested record to its own collection, and a nested collection’s records under their parent', async () => {
    await fresh();
    const [walk] = await todosOf(alice, ['walk']);
    const todo = await as(alice)('GET', `/api/v1/todos/${walk}/`);
    expect(todo.json.owner).toEqual({ url: `${origin}/api/v1/people/${alice.id}/`, id: alice.id, username: 'alice' });
    const step = await as(alice)('POST', `/v2/todos/${walk}/steps`, { text: 'shoes' });
    expect(step.json.url).toBe(`${origin}/v2/todos/${walk}/steps/${step.json.id}`);
    expect(step.json.url).toBe(step.headers.location);
    // The second router mounts no people: the owner's URL is the first router's affair only.
    expect((await as(alice)('GET', `/v2/todos/${walk}`)).json.owner.url).toBeNull();
  });
});

describe('the app’s own routes on a collection’s path', () => {
  it('answer the methods the collection does not serve, and the collection’s answers name them', async () => {
    expect(await as(alice)('DELETE', '/api/v1/people/')).toMatchObject({ status: 202, json: { queued: true } });
    expect((await as(alice)('GET', '/api/v1/people/')).status).toBe(200);
    const refused = await as(alice)('PATCH', '/api/v1/people/');
    expect(refused.status).toBe(405);
    expect(String(refused.headers.allow).split(', ')).toEqual(expect.arrayContaining(['GET', 'HEAD', 'DELETE', 'OPTIONS']));
    expect(String((await as(alice)('OPTIONS', '/api/v1/people/')).headers.allow).split(', ')).toContain('DELETE');
  });

  it('may not take a method the collection serves: start-up says which', async () => {
    const clashing = defineApp({
      ...app,
      routes: (routes: FastifyInstance) => {
        routes.delete('/api/v1/todos/', async () => 'mine');
      },
    });
    await expect(started(clashing)).rejects.toThrow(/The app's routes answer DELETE \/api\/v1\/todos\/, which a collection serves there/);
  });
});

describe('the OpenAPI document', () => {
  it('shows an unpaginated list as an array, the list’s DELETE with its filters, and url as a URI', async () => {
    const document = (await api.request('GET', '/api/v1/schema/')).json;
    const list = document.paths['/api/v1/todos/'].get;
    expect(list.responses['200'].content['application/json'].schema).toMatchObject({
      type: 'array',
      maxItems: 4,
      // Each item as a list's results are: the whole record, or the subset ?fields= narrows it to.
      items: { anyOf: [{ $ref: '#/components/schemas/Todo' }, { $ref: '#/components/schemas/TodoSubset' }] },
    });
    const parameters = list.parameters.map((parameter: { name: string }) => parameter.name);
    expect(parameters).toEqual(expect.arrayContaining(['completed', 'ordering', 'search']));
    expect(parameters).not.toContain('page');
    const bulk = document.paths['/api/v1/todos/'].delete;
    expect(bulk.operationId).toBe('todosBulkDestroy');
    expect(Object.keys(bulk.responses)).toContain('204');
    const deleting = bulk.parameters.map((parameter: { name: string }) => parameter.name);
    expect(deleting).toEqual(expect.arrayContaining(['completed', 'title', 'search']));
    expect(deleting).not.toContain('ordering');
    expect(document.components.schemas.Todo.properties.url).toMatchObject({ type: 'string', format: 'uri', readOnly: true });
    const labels = document.paths['/api/v1/labels/'].get.responses['200'].content['application/json'].schema;
    expect(labels).toMatchObject({ type: 'object', properties: { labels: { type: 'array' }, labelsCount: { type: 'integer' } } });
  });
});

/** Builds `definition` on a throwaway database (for declarations start-up refuses). */
async function started(definition: AppDefinition): Promise<void> {
  const database = openDatabase('sqlite::memory:');
  try {
    const built = await buildApp(definition, { database, config: loadConfig({ LOG_LEVEL: 'silent', SECRET_KEY: 'x'.repeat(40) }) });
    await built.close();
  } finally {
    await database.close();
  }
}

describe('declarations start-up refuses', () => {
  it('a bulk delete beside delete hooks, without the destroy action, or with object permissions', async () => {
    const declared = (options: Partial<Parameters<typeof collection>[1]>) => () =>
      collection('notes', { serializer: serializer(Label, { fields: ['id', 'name'] }), bulkDelete: 'filtered', ...options });
    expect(declared({ hooks: { afterDelete: () => undefined } })).toThrow(/afterDelete hooks could not see what it deletes/);
    expect(declared({ hooks: { afterCommit: () => undefined } })).toThrow(/afterCommit/);
    expect(declared({ builtInActions: ['list', 'retrieve'] })).toThrow(/bulkDelete needs the destroy action/);
    const owned = defineApp({ collections: [collection('todos', { serializer: serializer(Todo, { fields: ['id', 'title'] }), bulkDelete: 'filtered', permissions: { destroy: [isOwner('owner_id')] } })] });
    await expect(started(owned)).rejects.toThrow(/cannot check each record \(hasObjectPermission\)/);
  });
});
