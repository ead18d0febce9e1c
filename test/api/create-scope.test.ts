/**
 * A scoped collection's create, through HTTP: where the scope's conditions can be told on the
 * values (a whole number or a boolean compared, a null asked), the create is judged before it is
 * stored, one INSERT with no transaction or read after; a record outside it is refused (403) with
 * no statement sent. Where they cannot (text, whose comparison is the database's collation), the
 * record is read again within the scope in the write's transaction, as before.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { recording } from '../support/statements.js';

const Card = model('scope_cards', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  archived: fields.boolean({ default: false }),
  status: fields.string({ maxLength: 20, default: 'open' }),
  owner_id: fields.foreignKey('users', { default: ({ userId }) => userId }),
});
const shape = serializer(Card, { fields: ['id', 'title', 'archived', 'status', 'owner_id'] });

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('cards', { serializer: shape, bulkCreate: { max: 10 }, scope: ({ user }) => ({ owner_id: user?.id ?? null, archived: false }) }),
      collection('open-cards', { serializer: shape, scope: () => ({ status: 'open' }) }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;
const sent: string[] = [];

beforeAll(async () => {
  api = await startApi({}, app, { appDatabase: recording(sent) });
  alice = await api.user('alice');
});
afterAll(() => api.close());
beforeEach(() => {
  sent.length = 0;
});

/** The statements the create sent of the cards' table (the token's user aside). */
async function creating(path: string, body: unknown): Promise<Reply & { statements: string[] }> {
  sent.length = 0;
  const reply = await api.request('POST', `/api/v1/${path}/`, { token: alice.token, body });
  return { ...reply, statements: sent.filter((text) => text.includes('scope_cards')) };
}

const stored = async (title: string): Promise<number> => (await api.database.db.selectFrom('scope_cards').select('id').where('title', '=', title).execute()).length;

describe('a scoped create', () => {
  it('is one INSERT, judged on its values, where the scope compares whole numbers and booleans', async () => {
    const { status, json, statements } = await creating('cards', { title: 'Inside' });
    expect(status).toBe(201);
    expect(json).toMatchObject({ title: 'Inside', archived: false, owner_id: alice.id });
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^insert/i);
    expect(await stored('Inside')).toBe(1);
  });

  it('refuses a record outside the scope before anything is sent, and stores nothing', async () => {
    const { status, json, statements } = await creating('cards', { title: 'Archived', archived: true });
    expect(status).toBe(403);
    expect(json.error).toBe('You may not create a record outside the ones you may see.');
    expect(statements).toEqual([]);
    expect(await stored('Archived')).toBe(0);
  });

  it('refuses a bulk create with one record outside the scope, storing none of them', async () => {
    const { status } = await creating('cards', [{ title: 'Bulk one' }, { title: 'Bulk two', archived: true }]);
    expect(status).toBe(403);
    expect(await stored('Bulk one')).toBe(0);
    expect(await stored('Bulk two')).toBe(0);
  });

  it('reads the record again within the scope where it compares text, refusing one outside it', async () => {
    const inside = await creating('open-cards', { title: 'Open' });
    expect(inside.status).toBe(201);
    expect(inside.statements.some((text) => /^select/i.test(text))).toBe(true);
    const outside = await creating('open-cards', { title: 'Closed', status: 'closed' });
    expect(outside.status).toBe(403);
    expect(await stored('Closed')).toBe(0);
  });
});
