/**
 * Writes at the edges of a model's shape: a model whose only field is its key is created from an
 * empty body, and object validation sees a timestamp as a Date on a PATCH, as it does on a create,
 * on both databases (SQLite hands stored timestamps back as text).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Marker = model('markers', { id: fields.id() });
const Slot = model('slots', { id: fields.id(), title: fields.string({ maxLength: 50 }), opens: fields.timestamp(), closes: fields.timestamp({ nullable: true }) });

/** What each object validation saw of the timestamps: their types. */
const seen: string[][] = [];
const typeOf = (value: unknown): string => (value instanceof Date ? 'Date' : value === null ? 'null' : typeof value);

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('markers', { serializer: serializer(Marker, { fields: ['id'] }) }),
      collection('slots', {
        serializer: serializer(Slot, {
          fields: ['id', 'title', 'opens', 'closes'],
          validate: (values) => {
            seen.push([typeOf(values.opens), typeOf(values.closes)]);
            if (values.opens instanceof Date && values.closes instanceof Date && values.closes < values.opens) return { closes: ['Must not be before opens.'] };
          },
        }),
      }),
    ],
  }),
);

let api: TestApi;
let alice: TestUser;

beforeAll(async () => {
  api = await startApi({}, app);
  alice = await api.user('alice');
});
afterAll(() => api.close());

describe('a model whose only field is its key', () => {
  it('is created from an empty body: 201 with the new id', async () => {
    const first = await api.request('POST', '/api/v1/markers/', { token: alice.token, body: {} });
    expect(first.status).toBe(201);
    expect(Object.keys(first.json)).toEqual(['id']);
    const second = await api.request('POST', '/api/v1/markers/', { token: alice.token, body: {} });
    expect(second.status).toBe(201);
    expect(second.json.id).toBeGreaterThan(first.json.id);
    expect((await api.request('GET', `/api/v1/markers/${second.json.id}/`, { token: alice.token })).json).toEqual({ id: second.json.id });
  });

  it('refuses a field it does not have, and a body that is no object', async () => {
    const unknown = await api.request('POST', '/api/v1/markers/', { token: alice.token, body: { name: 'x' } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.details).toEqual({ name: ['Unknown field.'] });
    expect((await api.request('POST', '/api/v1/markers/', { token: alice.token, body: [] })).status).toBe(400);
  });
});

describe('object validation of timestamps', () => {
  it('sees Dates on a PATCH, the stored ones and the sent ones, as on a create', async () => {
    seen.length = 0;
    const created = await api.request('POST', '/api/v1/slots/', { token: alice.token, body: { title: 'a', opens: '2026-01-02T10:00:00Z', closes: null } });
    expect(created.status).toBe(201);
    expect(seen).toEqual([['Date', 'null']]);
    seen.length = 0;
    const renamed = await api.request('PATCH', `/api/v1/slots/${created.json.id}/`, { token: alice.token, body: { title: 'b' } });
    expect(renamed.status).toBe(200);
    expect(seen[0]).toEqual(['Date', 'null']);
    seen.length = 0;
    const closing = await api.request('PATCH', `/api/v1/slots/${created.json.id}/`, { token: alice.token, body: { closes: '2026-01-01T10:00:00Z' } });
    expect(seen[0]).toEqual(['Date', 'Date']);
    // The comparison a rule makes works on what was stored too.
    expect(closing.status).toBe(400);
    expect(closing.json.details).toEqual({ closes: ['Must not be before opens.'] });
    const fine = await api.request('PATCH', `/api/v1/slots/${created.json.id}/`, { token: alice.token, body: { closes: '2026-01-03T10:00:00.000Z' } });
    expect(fine.status).toBe(200);
    expect(fine.json).toEqual({ id: created.json.id, title: 'b', opens: '2026-01-02T10:00:00.000Z', closes: '2026-01-03T10:00:00.000Z' });
  });
});
