/**
 * The steps of a write, in the order a user sees them (the write unit, framework/write/unit.ts):
 * the before-hook, the statement with its many-to-many links, the scope re-read, the after-hook in
 * the write's transaction (a throw rolls back the record and its links), then, once committed, the
 * after-commit hook, which another request already sees the write from.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, joinTable, model, relations, serializer, type Hooks } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Task = model('step_tasks', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  archived: fields.boolean({ default: false }),
  owner_id: fields.foreignKey('users'),
});
const Label = model('step_labels', { id: fields.id(), name: fields.string({ maxLength: 50 }) });
const labelled = joinTable('step_tasks', 'step_labels');

const steps: string[] = [];
let api: TestApi;
let alice: TestUser;

const taskPath = (id: unknown) => `/api/v1/tasks/${String(id)}/`;

const hooks: Hooks = {
  beforeCreate: ({ user }) => {
    steps.push('before create');
    return { owner_id: user!.id };
  },
  beforeUpdate: () => {
    steps.push('before update');
  },
  beforeDelete: () => {
    steps.push('before delete');
  },
  afterCreate: ({ record }) => {
    steps.push(`after create, labels ${JSON.stringify(record.labels)}`);
    if (record.title === 'Doomed') throw new Error('the after-create hook failed');
  },
  afterUpdate: ({ record }) => {
    steps.push(`after update, labels ${JSON.stringify(record.labels)}`);
    if (record.title === 'Doomed') throw new Error('the after-update hook failed');
  },
  afterDelete: () => {
    steps.push('after delete');
  },
  // Another request, once the write committed: it finds the record as written (or gone).
  afterCommit: async ({ action, record }) => {
    const seen = await api.request('GET', taskPath(record.id), { token: alice.token });
    steps.push(`committed ${action}, read ${seen.status}${seen.status === 200 ? ` labels ${JSON.stringify(seen.json.labels)}` : ''}`);
  },
};

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('tasks', {
        serializer: serializer(Task, {
          fields: ['id', 'title', 'archived', 'owner_id', 'labels'],
          readOnly: ['owner_id'],
          relations: { labels: relations.manyToMany(labelled) },
        }),
        // A user reaches their own tasks not archived: archiving one takes it out of reach.
        scope: ({ user }) => ({ owner_id: user?.id ?? 0, archived: false }),
        hooks,
      }),
      collection('labels', { serializer: serializer(Label, { fields: ['id', 'name'] }) }),
    ],
  }),
);

let red: number;
let blue: number;

beforeAll(async () => {
  api = await startApi({}, app);
  alice = await api.user('alice');
  red = (await api.request('POST', '/api/v1/labels/', { token: alice.token, body: { name: 'red' } })).json.id;
  blue = (await api.request('POST', '/api/v1/labels/', { token: alice.token, body: { name: 'blue' } })).json.id;
});
afterAll(() => api.close());
beforeEach(() => {
  steps.length = 0;
});

const send = (method: string, path: string, body?: unknown) => api.request(method, path, { token: alice.token, body });
/** The join table's rows, read under the API: what a rolled-back write must not leave. */
const links = async (): Promise<unknown[]> =>
  (await api.database.db.selectFrom(labelled.table).select(labelled.to).orderBy(labelled.to).execute()).map((row: Record<string, unknown>) => Number(row[labelled.to]));

describe('a write runs its steps in order', () => {
  it('creates: the before-hook, the record and its links, the after-hook, then the commit another request sees', async () => {
    const reply = await send('POST', '/api/v1/tasks/', { title: 'Plan', labels: [red] });
    expect(reply.status).toBe(201);
    expect(steps).toEqual(['before create', `after create, labels [${red}]`, `committed create, read 200 labels [${red}]`]);
  });

  it('updates: the before-hook, the record and its new links, the after-hook, then the commit', async () => {
    const { id } = (await send('POST', '/api/v1/tasks/', { title: 'Draft', labels: [red] })).json;
    steps.length = 0;
    expect((await send('PATCH', taskPath(id), { title: 'Final', labels: [blue] })).status).toBe(200);
    expect(steps).toEqual(['before update', `after update, labels [${blue}]`, `committed update, read 200 labels [${blue}]`]);
  });

  it('deletes: the locked record shown to the before-hook, the delete, the after-hook, then the commit', async () => {
    const { id } = (await send('POST', '/api/v1/tasks/', { title: 'Done' })).json;
    steps.length = 0;
    expect((await send('DELETE', taskPath(id))).status).toBe(204);
    expect(steps).toEqual(['before delete', 'after delete', 'committed delete, read 404']);
  });
});

describe('a write that fails after its statement leaves nothing behind', () => {
  it('rolls a create back, with its many-to-many links, when its after-hook throws; no commit hook runs', async () => {
    const before = await links();
    const reply = await send('POST', '/api/v1/tasks/', { title: 'Doomed', labels: [red, blue] });
    expect(reply.status).toBe(500);
    expect(steps).toEqual(['before create', `after create, labels [${red},${blue}]`]);
    const listed = await send('GET', '/api/v1/tasks/?page_size=100');
    expect(listed.json.results.map((task: { title: string }) => task.title)).not.toContain('Doomed');
    expect(await links()).toEqual(before);
  });

  it('rolls an update back, with its new links, when its after-hook throws', async () => {
    const { id } = (await send('POST', '/api/v1/tasks/', { title: 'Steady', labels: [red] })).json;
    steps.length = 0;
    expect((await send('PATCH', taskPath(id), { title: 'Doomed', labels: [blue] })).status).toBe(500);
    expect(steps).toEqual(['before update', `after update, labels [${blue}]`]);
    expect((await send('GET', taskPath(id))).json).toMatchObject({ title: 'Steady', labels: [red] });
  });

  it('reads a created record again within the scope before its after-hook: one outside it is refused and not stored', async () => {
    const reply = await send('POST', '/api/v1/tasks/', { title: 'Hidden', archived: true, labels: [red] });
    expect(reply).toMatchObject({ status: 403, json: { error: 'You may not create a record outside the ones you may see.' } });
    expect(steps).toEqual(['before create']);
    const stored = await api.database.db.selectFrom('step_tasks').select('id').where('title', '=', 'Hidden').execute();
    expect(stored).toEqual([]);
  });

  it('reads an updated record again within the scope before its after-hook: a change taking it out is refused and undone', async () => {
    const { id } = (await send('POST', '/api/v1/tasks/', { title: 'Visible', labels: [red] })).json;
    steps.length = 0;
    const reply = await send('PATCH', taskPath(id), { archived: true, labels: [blue] });
    expect(reply).toMatchObject({ status: 403, json: { error: 'You may not change a record so that it lies outside the ones you may see.' } });
    expect(steps).toEqual(['before update']);
    expect((await send('GET', taskPath(id))).json).toMatchObject({ title: 'Visible', archived: false, labels: [red] });
  });
});
