/**
 * examples/todos, in-process (the CLI serving it is test/cli/examples-ts.test.ts.after-h24): each
 * user sees and edits only their own todos; another's is 404 and absent from lists and counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import todosApp from '../../examples/todos/app.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  api = await startApi({}, todosApp);
  alice = await api.user('alice');
  bob = await api.user('bob');
});
afterAll(() => api.close());

const todo = (user: TestUser, body: unknown) => api.request('POST', '/api/v1/todos/', { token: user.token, body });

describe('the todos example', () => {
  it('keeps each user’s todos their own', async () => {
    const milk = await todo(alice, { task: 'buy milk', due: '2026-12-01T10:00:00Z' });
    expect(milk).toMatchObject({ status: 201, json: { task: 'buy milk', done: false, due: '2026-12-01T10:00:00.000Z' } });
    expect(milk.json).not.toHaveProperty('owner_id');
    await todo(alice, { task: 'water plants' });
    const bobs = await todo(bob, { task: 'fix bike', owner_id: alice.id });
    expect(bobs.status).toBe(400);
    const fixBike = await todo(bob, { task: 'fix bike' });

    const alicesList = await api.request('GET', '/api/v1/todos/?ordering=task', { token: alice.token });
    expect(alicesList.json).toMatchObject({ count: 2, results: [{ task: 'buy milk' }, { task: 'water plants' }] });
    const bobsList = await api.request('GET', '/api/v1/todos/', { token: bob.token });
    expect(bobsList.json).toMatchObject({ count: 1, results: [{ task: 'fix bike' }] });

    const id = milk.json.id;
    expect((await api.request('GET', `/api/v1/todos/${id}/`, { token: bob.token })).status).toBe(404);
    expect((await api.request('PATCH', `/api/v1/todos/${id}/`, { token: bob.token, body: { done: true } })).status).toBe(404);
    expect((await api.request('DELETE', `/api/v1/todos/${id}/`, { token: bob.token })).status).toBe(404);

    const done = await api.request('PATCH', `/api/v1/todos/${id}/`, { token: alice.token, body: { done: true } });
    expect(done.json).toMatchObject({ id, done: true });
    const open = await api.request('GET', '/api/v1/todos/?done=false', { token: alice.token });
    expect(open.json.results.map((row: { task: string }) => row.task)).toEqual(['water plants']);
    expect((await api.request('DELETE', `/api/v1/todos/${fixBike.json.id}/`, { token: bob.token })).status).toBe(204);
  });

  it('asks anonymous callers to authenticate', async () => {
    expect((await api.request('GET', '/api/v1/todos/')).status).toBe(401);
    expect((await api.request('POST', '/api/v1/todos/', { body: { task: 'x' } })).status).toBe(401);
  });
});
