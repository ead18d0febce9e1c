/**
 * A forward foreign key shown and written as a unique field of the record it names
 * (`relations.slug`, DRF's SlugRelatedField), through HTTP: notebooks owned by a user named by username.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, relations, serializer, User } from '../../src/framework/index.js';
import service from '../../src/service/app.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Notebook = model('notebooks', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId, requestingUserOnly: { unless: 'notebooks.change' } }),
  reviewer_id: fields.foreignKey('users', { nullable: true, onDelete: 'set null' }),
});
const notebooks = collection('notebooks', {
  serializer: serializer(Notebook, {
    fields: ['id', 'title', 'owner', 'reviewer'],
    relations: { owner: relations.slug('owner_id', User, 'username'), reviewer: relations.slug('reviewer_id', User, 'username') },
  }),
  filterFields: ['owner', 'title'],
});
const app = withGeneratedMigrations(defineApp({ ...service, collections: [...service.collections, notebooks] }));

let api: TestApi;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  api = await startApi({}, app);
  alice = await api.user('alice');
  bob = await api.user('bob');
});
afterAll(() => api.close());

const create = (body: Record<string, unknown>, user = alice) => api.request('POST', '/api/v1/notebooks/', { token: user.token, body: { title: 'Notes', ...body } });

describe('a foreign key as a slug', () => {
  it('renders the named record’s field, defaults as its key does, and is written by that field', async () => {
    const defaulted = await create({});
    expect(defaulted.status).toBe(201);
    expect(defaulted.json).toEqual({ id: defaulted.json.id, title: 'Notes', owner: 'alice', reviewer: null });
    const named = await create({ owner: 'alice', reviewer: 'bob' });
    expect(named.json).toMatchObject({ owner: 'alice', reviewer: 'bob' });
    const url = `/api/v1/notebooks/${named.json.id}/`;
    expect((await api.request('GET', url, { token: bob.token })).json).toEqual(named.json);
    const patched = await api.request('PATCH', url, { token: alice.token, body: { reviewer: null } });
    expect(patched.json).toMatchObject({ owner: 'alice', reviewer: null });
    expect((await api.request('PATCH', url, { token: alice.token, body: { reviewer: 'alice' } })).json.reviewer).toBe('alice');
  });

  it('refuses a value naming no record, a wrong type, a null key and another user where the key forbids it, by field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ reviewer: 'nobody' }, 'No users with username "nobody".'],
      [{ owner: 'bob' }, 'You may only name yourself here, unless you hold the permission "notebooks.change".'],
      [{ owner: null }, 'This field may not be null.'],
      [{ owner: 5 }, 'Not a valid string.'],
    ];
    for (const [body, message] of cases) {
      const reply = await create(body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.json.details).toEqual({ [Object.keys(body)[0]!]: [message] });
    }
    const editor = await api.user('editor', { permissions: ['notebooks.change'] });
    expect((await create({ owner: 'bob' }, editor)).json.owner).toBe('bob');
  });

  it('filters by the field of the named record, with its lookups', async () => {
    const frank = await api.user('frank');
    await create({ title: 'Frank’s' }, frank);
    const titles = async (query: string) =>
      (await api.request('GET', `/api/v1/notebooks/${query}`, { token: alice.token })).json.results.map((record: { title: string }) => record.title);
    expect(await titles('?owner=frank')).toEqual(['Frank’s']);
    expect(await titles('?owner__startswith=fr&owner__in=frank,carol')).toEqual(['Frank’s']);
    expect(await titles('?owner=FRANK')).toEqual([]);
    expect(await titles('?owner__iexact=FRANK')).toEqual(['Frank’s']);
    expect(await titles('?owner=nobody')).toEqual([]);
  });

  it('is typed in the OpenAPI document as the field it shows, required where its key is', async () => {
    const schemas = (await api.request('GET', '/api/v1/schema/')).json.components.schemas;
    expect(schemas.Notebook.properties.owner).toMatchObject({ type: 'string', maxLength: 150 });
    expect(schemas.Notebook.properties.reviewer.anyOf[1]).toEqual({ type: 'null' });
    expect(schemas.NotebookCreate.properties.owner).toMatchObject({ type: 'string' });
    expect(schemas.NotebookCreate.required).toEqual(['title']);
  });
});
