/**
 * A serializer chosen per request (issue 46, DRF's `get_serializer_class` reading the request): a
 * collection's `chooseSerializer` picks one by the request's action and user, among those it
 * declares; undefined keeps the action's own (`serializers`), else `serializer`. Staff see and write
 * more fields than others; the OpenAPI document offers each serializer a request may get.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, defineApp, fields, model, serializer, type Serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { openEvents } from '../support/event-stream.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Show = model('shows', {
  id: fields.id(),
  title: fields.string({ maxLength: 100 }),
  budget: fields.integer({ nullable: true }),
  notes: fields.string({ maxLength: 200, nullable: true }),
});

const shown = serializer(Show, { fields: ['id', 'title'] });
const summary = serializer(Show, { name: 'ShowSummary', fields: ['id'] });
const staff = serializer(Show, { name: 'ShowStaff', fields: ['id', 'title', 'budget', 'notes'] });
const staffList = serializer(Show, { name: 'ShowStaffSummary', fields: ['id', 'budget'] });

const app = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('shows', {
        serializer: shown,
        serializers: { list: summary },
        chooseSerializer: {
          among: [staff, staffList],
          // Staff (here, superusers) read and write the budget; lists stay short for them too.
          choose: ({ action, user }) => (user?.isSuperuser ? (action === 'list' ? staffList : staff) : undefined),
        },
        live: true,
      }),
    ],
  }),
);

let api: TestApi;
let admin: TestUser;
let clerk: TestUser;
let id: number;

beforeAll(async () => {
  api = await startApi({}, app);
  admin = await api.user('admin', { superuser: true });
  clerk = await api.user('clerk');
  id = (await api.request('POST', '/api/v1/shows/', { token: admin.token, body: { title: 'Hamlet', budget: 5000, notes: 'over budget' } })).json.id;
});
afterAll(() => api.close());

const request = (method: string, path: string, user: TestUser, body?: unknown) => api.request(method, `/api/v1/shows/${path}`, { token: user.token, body });

describe('a serializer chosen by the user and the action', () => {
  it('shows staff more fields of a record than others', async () => {
    expect((await request('GET', `${id}/`, admin)).json).toEqual({ id, title: 'Hamlet', budget: 5000, notes: 'over budget' });
    expect((await request('GET', `${id}/`, clerk)).json).toEqual({ id, title: 'Hamlet' });
  });

  it('keeps the per-action serializer where the choice is undefined, and chooses per action', async () => {
    expect((await request('GET', '', clerk)).json.results).toEqual([{ id }]);
    expect((await request('GET', '', admin)).json.results).toEqual([{ id, budget: 5000 }]);
    // `?fields=` narrows the chosen serializer, naming its fields.
    expect((await request('GET', `${id}/?fields=budget`, admin)).json).toEqual({ budget: 5000 });
    const unknown = await request('GET', `${id}/?fields=budget`, clerk);
    expect(unknown.status).toBe(400);
    expect(unknown.json.details.fields[0]).toContain('Unknown field "budget"');
  });

  it('lets staff write the fields only their serializer has; to others they are unknown fields', async () => {
    const made = await request('POST', '', admin, { title: 'Lear', budget: 800 });
    expect(made.status).toBe(201);
    expect(made.json).toEqual({ id: made.json.id, title: 'Lear', budget: 800, notes: null });
    const refused = await request('POST', '', clerk, { title: 'Lear', budget: 800 });
    expect(refused.status).toBe(400);
    expect(refused.json.details).toEqual({ budget: ['Unknown field.'] });
    const patched = await request('PATCH', `${id}/`, admin, { budget: 6000 });
    expect(patched.json).toEqual({ id, title: 'Hamlet', budget: 6000, notes: 'over budget' });
    expect((await request('PATCH', `${id}/`, clerk, { budget: 1 })).json.details).toEqual({ budget: ['Unknown field.'] });
    const own = await request('PATCH', `${id}/`, clerk, { title: 'Hamlet, Prince of Denmark' });
    expect(own.status).toBe(200);
    expect(own.json).toEqual({ id, title: 'Hamlet, Prince of Denmark' });
  });

  it('documents each serializer a request may get, for every action (what `choose` answers is not known before a request)', async () => {
    const { paths, components } = (await api.request('GET', '/api/v1/schema/')).json;
    const refs = (schema: { anyOf?: { $ref: string }[]; $ref?: string }): string[] => (schema.anyOf ?? [schema]).map((each) => each.$ref!.split('/').at(-1)!);
    const detail = paths['/api/v1/shows/{id}/'];
    expect(refs(detail.get.responses['200'].content['application/json'].schema)).toEqual(['Show', 'ShowSubset', 'ShowStaff', 'ShowStaffSubset', 'ShowStaffSummary', 'ShowStaffSummarySubset']);
    expect(refs(detail.patch.requestBody.content['application/json'].schema)).toEqual(['ShowPartialUpdate', 'ShowStaffPartialUpdate', 'ShowStaffSummaryPartialUpdate']);
    expect(refs(detail.patch.responses['200'].content['application/json'].schema)).toEqual(['Show', 'ShowStaff', 'ShowStaffSummary']);
    expect(refs(paths['/api/v1/shows/'].post.requestBody.content['application/json'].schema)).toEqual(['ShowCreate', 'ShowStaffCreate', 'ShowStaffSummaryCreate']);
    const listed = paths['/api/v1/shows/'].get.responses['200'].content['application/json'].schema.properties.results.items;
    // The list's own serializer first.
    expect(refs(listed)).toEqual(['ShowSummary', 'ShowSummarySubset', 'ShowStaff', 'ShowStaffSubset', 'ShowStaffSummary', 'ShowStaffSummarySubset']);
    expect(Object.keys(components.schemas.ShowStaffCreate.properties)).toEqual(['title', 'budget', 'notes', 'id']);
  });
});

describe('a live stream', () => {
  it('renders each change with the serializer chosen for its subscriber', async () => {
    const base = `http://127.0.0.1:${await api.listen()}/api/v1/shows/events/`;
    // The clerk first: subscribers reading alike share one read of each change.
    const clerkStream = await openEvents(base, { authorization: `Bearer ${clerk.token}` });
    const adminStream = await openEvents(base, { authorization: `Bearer ${admin.token}` });
    try {
      const made = (await request('POST', '', admin, { title: 'Macbeth', budget: 300 })).json;
      expect((await clerkStream.next()).data).toEqual({ id: made.id });
      expect((await adminStream.next()).data).toEqual({ id: made.id, budget: 300 });
    } finally {
      clerkStream.close();
      adminStream.close();
    }
  });
});

describe('declaring it', () => {
  const Other = model('others', { id: fields.id(), name: fields.string({ maxLength: 10 }) });
  const declared = (among: Serializer[], choose: () => Serializer | undefined) => () => collection('shows', { serializer: shown, chooseSerializer: { among, choose } });

  it('refuses a serializer over another model', () => {
    expect(declared([serializer(Other, { fields: ['id'] })], () => undefined)).toThrow('shows: chooseSerializer\'s serializer "Other" is over "others", not "shows".');
  });

  it('refuses, as a server error, a choice it did not declare', () => {
    const chosen = declared([staff], () => summary)();
    expect(() => chosen.serializerFor({ action: 'retrieve', user: null })).toThrow('shows: chooseSerializer chose the serializer "ShowSummary", which is not among those it declared.');
  });
});
