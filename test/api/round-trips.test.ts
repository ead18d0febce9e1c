/**
 * The statements a request sends to the database, counted: on PostgreSQL a detail read
 * authenticated by a token finds the token's user and the record in one statement (one round
 * trip), and a list reads its count and its page in one; SQLite, in-process, reads them apart.
 * Either way the answers and refusals, and their order, are the same.
 */
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { testDialect } from '../support/database.js';

let api: TestApi;
let alice: TestUser;
let bob: TestUser;
const sent: string[] = [];
/** Statements a plain detail read sends. */
const detailStatements = testDialect === 'postgres' ? 1 : 2;

/** The database with every statement the app sends recorded: precompiled ones through `run`, the rest through Kysely. */
function recording(database: Database): Database {
  // Kysely also transforms the queries it only compiles: a statement counts once its result comes back.
  const compiled = new WeakMap<object, string>();
  const recorder: KyselyPlugin = {
    transformQuery: ({ node, queryId }) => {
      compiled.set(queryId, database.db.getExecutor().compileQuery(node, queryId).sql);
      return node;
    },
    transformResult: async ({ result, queryId }) => {
      sent.push(compiled.get(queryId)!);
      return result;
    },
  };
  return {
    ...database,
    db: database.db.withPlugin(recorder),
    run: (text, parameters) => {
      sent.push(text);
      return database.run(text, parameters);
    },
  };
}

beforeAll(async () => {
  api = await startApi({}, undefined, { appDatabase: recording });
  alice = await api.user('alice');
  bob = await api.user('bob');
});
afterAll(() => api.close());
beforeEach(() => {
  sent.length = 0;
});

describe('a detail read authenticated by a token', () => {
  it('is one statement on PostgreSQL that reads the token and the record (two on SQLite)', async () => {
    const reply = await api.request('GET', `/api/v1/users/${bob.id}/`, { token: alice.token });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ id: bob.id, username: 'bob' });
    expect(sent).toHaveLength(detailStatements);
    expect(sent.join('\n')).toMatch(/"auth_tokens"/);
    expect(sent.at(-1)).toMatch(/"users"\."id" = /);
  });

  it('answers 404 for a missing record, in as many statements', async () => {
    const reply = await api.request('GET', '/api/v1/users/999999/', { token: alice.token });
    expect(reply.status).toBe(404);
    expect(reply.json.code).toBe('not_found');
    expect(sent).toHaveLength(detailStatements);
  });

  it('refuses an unknown token with 401 whether or not the record exists', async () => {
    for (const id of [bob.id, 999999]) {
      const reply = await api.request('GET', `/api/v1/users/${id}/`, { token: `rf_${'Z'.repeat(43)}` });
      expect(reply.status).toBe(401);
      expect(reply.json).toEqual({ error: 'Invalid token.', code: 'authentication_failed' });
    }
  });

  it('refuses the token of a deactivated user with 401', async () => {
    const carol = await api.user('carol');
    expect((await api.request('GET', `/api/v1/users/${bob.id}/`, { token: carol.token })).status).toBe(200);
    await api.database.db.updateTable('users').set({ is_active: 0 }).where('id', '=', carol.id).execute();
    const reply = await api.request('GET', `/api/v1/users/${bob.id}/`, { token: carol.token });
    expect(reply.status).toBe(401);
    expect(reply.json.code).toBe('authentication_failed');
  });

  it('still refuses a bad token before a bad id (401, not 400), reading the id only after authentication', async () => {
    const reply = await api.request('GET', '/api/v1/users/0/', { token: `rf_${'Z'.repeat(43)}` });
    expect(reply.status).toBe(401);
    expect((await api.request('GET', '/api/v1/users/0/', { token: alice.token })).status).toBe(400);
  });

  it('with fields= reads the narrowed record apart: two statements, the chosen fields only', async () => {
    const reply = await api.request('GET', `/api/v1/users/${bob.id}/?fields=id,username`, { token: alice.token });
    expect(reply.json).toEqual({ id: bob.id, username: 'bob' });
    expect(sent).toHaveLength(2);
  });
});

describe('a list', () => {
  /** The token lookup, then the count and the page: one statement on PostgreSQL, two on SQLite. */
  const pageStatements = testDialect === 'postgres' ? 2 : 3;
  const list = (query: string) => api.request('GET', `/api/v1/users/${query}`, { token: alice.token });

  it('reads its count and its page in one statement on PostgreSQL, in order', async () => {
    const reply = await list('?username__in=alice,bob&ordering=-username&page_size=1&page=2');
    expect(reply.status).toBe(200);
    expect(reply.json.count).toBe(2);
    expect(reply.json.results.map((user: { username: string }) => user.username)).toEqual(['alice']);
    expect(reply.json.next).toBeNull();
    expect(sent).toHaveLength(pageStatements);
  });

  it('answers an empty page and a page past the last as before', async () => {
    const empty = await list('?username__in=nobody');
    expect(empty.json).toMatchObject({ count: 0, results: [], next: null, previous: null });
    expect(sent).toHaveLength(2);
    sent.length = 0;
    const past = await list('?username__in=alice,bob&page_size=1&page=3');
    expect(past.status).toBe(404);
    expect(past.json.error).toBe('Invalid page.');
    expect(sent).toHaveLength(2);
  });

  it('reads a search after its count: the page is chosen knowing how many match', async () => {
    const reply = await list('?search=alice');
    expect(reply.json.results.map((user: { username: string }) => user.username)).toEqual(['alice']);
    expect(sent).toHaveLength(3);
  });
});
