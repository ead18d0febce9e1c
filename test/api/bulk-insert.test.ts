/**
 * A bulk create's records in INSERTs of many rows (store/write/writes.ts insertRows): answered in
 * the order sent, whatever the key (a counter, or a UUID made on create); all or none when they
 * take several INSERTs; a refusal still named by its record's index (a clash with a stored record
 * or with another of the same request), nothing stored; and concurrent bulk creates on parallel
 * connections (PostgreSQL) each whole, in order, or refused whole.
 */
import { describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer } from '../../src/framework/index.js';
import { servedWithUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { statusCounts } from '../support/replies.js';

const Tag = model('tags', { id: fields.id(), code: fields.string({ maxLength: 40, unique: true }), note: fields.string({ maxLength: 40, blank: true, default: '' }) });
const Ticket = model('tickets', { id: fields.uuid({ primaryKey: true }), label: fields.string({ maxLength: 40 }) });

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      // Above 256 records (one INSERT's most), a bulk takes two INSERTs.
      collection('tags', { serializer: serializer(Tag, { fields: ['id', 'code', 'note'] }), bulkCreate: { max: 300 } }),
      collection('tickets', { serializer: serializer(Ticket, { fields: ['id', 'label'] }), bulkCreate: { max: 50 } }),
    ],
  }),
);

const served = servedWithUser(app, 'alice');
const post = (path: string, body: unknown) => served.api.request('POST', path, { token: served.user.token, body });
const storedCodes = async (prefix: string): Promise<string[]> =>
  (await served.api.database.db.selectFrom('tags').select('code').where('code', 'like', `${prefix}%`).orderBy('id').execute()).map((row) => row.code as string);
const tags = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => ({ code: `${prefix}-${index}` }));

describe('a bulk create in INSERTs of many rows', () => {
  it('answers 300 records (two INSERTs) in the order sent, each with its own id', async () => {
    const body = tags('big', 300);
    const reply = await post('/api/v1/tags/', body);
    expect(reply.status).toBe(201);
    expect(reply.json.map((tag: { code: string }) => tag.code)).toEqual(body.map(({ code }) => code));
    const ids = reply.json.map((tag: { id: number }) => tag.id);
    expect(new Set(ids).size).toBe(300);
    expect(await storedCodes('big-')).toHaveLength(300);
  });

  it('answers records keyed by a UUID made on create in the order sent', async () => {
    const labels = ['one', 'two', 'three', 'four', 'five'];
    const reply = await post('/api/v1/tickets/', labels.map((label) => ({ label })));
    expect(reply.status).toBe(201);
    expect(reply.json.map((ticket: { label: string }) => ticket.label)).toEqual(labels);
    for (const ticket of reply.json) expect(ticket.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses a clash with a stored record under its index, storing none of the bulk', async () => {
    expect((await post('/api/v1/tags/', [{ code: 'taken' }])).status).toBe(201);
    const body = [...tags('clash', 5), { code: 'taken' }, ...tags('clash-after', 3)];
    const reply = await post('/api/v1/tags/', body);
    expect(reply.status).toBe(400);
    expect(Object.keys(reply.json.details)).toEqual(['5.code']);
    expect(await storedCodes('clash')).toEqual([]);
  });

  it('refuses a clash between two records of one bulk under the later one, past the first INSERT, storing none', async () => {
    const body = tags('twice', 290);
    body[280] = { code: 'twice-3' };
    const reply = await post('/api/v1/tags/', body);
    expect(reply.status).toBe(400);
    expect(Object.keys(reply.json.details)).toEqual(['280.code']);
    expect(await storedCodes('twice-')).toEqual([]);
  });

  it('keeps 12 concurrent bulks each whole and in order', async () => {
    const bodies = Array.from({ length: 12 }, (_, request) => tags(`many${request}`, 20));
    const replies = await Promise.all(bodies.map((body) => post('/api/v1/tags/', body)));
    expect(statusCounts(replies)).toEqual({ 201: 12 });
    for (const [index, reply] of replies.entries()) expect(reply.json.map((tag: { code: string }) => tag.code)).toEqual(bodies[index]!.map(({ code }) => code));
    expect(await storedCodes('many')).toHaveLength(240);
  });

  it('lets one of 8 concurrent bulks sharing a code store, refusing the others whole under that record', async () => {
    const bodies = Array.from({ length: 8 }, (_, request) => [...tags(`race${request}`, 6), { code: 'race-shared' }]);
    const replies = await Promise.all(bodies.map((body) => post('/api/v1/tags/', body)));
    expect(statusCounts(replies)).toEqual({ 201: 1, 400: 7 });
    for (const reply of replies.filter(({ status }) => status === 400)) expect(Object.keys(reply.json.details)).toEqual(['6.code']);
    expect(await storedCodes('race')).toHaveLength(7);
  });
});
