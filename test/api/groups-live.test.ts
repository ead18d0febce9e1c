/**
 * A change to a group reaches open live streams at once (docs/authentication.md, Groups): with the
 * periodic check out of the way (LIVE_RECHECK_MS an hour), a stream whose list needs a permission
 * its user holds through a group ends with `event: revoked` once the group loses it, or the user
 * leaves the group, through the API.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { collection, defineApp, fields, model, modelPermissions, serializer } from '../../src/framework/index.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { openEvents, type EventStreamClient } from '../support/event-stream.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Report = model('group_reports', { id: fields.id(), title: fields.string({ maxLength: 50 }) });
const app = withGeneratedMigrations(
  defineApp({
    collections: [collection('reports', { serializer: serializer(Report, { fields: ['id', 'title'], readOnly: ['id'] }), live: true, permissions: modelPermissions('reports', { view: true }) })],
  }),
);

let api: TestApi;
let port: number;
let admin: TestUser;
let reader: TestUser;
const opened: EventStreamClient[] = [];

beforeEach(async () => {
  api = await startApi({ LIVE_RECHECK_MS: '3600000' }, app);
  port = await api.listen();
  admin = await api.user('admin', { superuser: true });
  reader = await api.user('reader');
});
afterEach(async () => {
  opened.forEach((stream) => stream.close());
  await api.close();
});

const asAdmin = (method: string, url: string, body?: unknown) => api.request(method, url, { token: admin.token, body });

async function readersGroup(): Promise<{ group: number; grant: number; membership: number }> {
  const group = (await asAdmin('POST', '/api/v1/auth/groups/', { name: 'readers' })).json.id as number;
  const grant = (await asAdmin('POST', `/api/v1/auth/groups/${group}/permissions/`, { name: 'reports.view' })).json.id as number;
  const membership = (await asAdmin('POST', `/api/v1/auth/groups/${group}/members/`, { user_id: reader.id })).json.id as number;
  return { group, grant, membership };
}

async function stream(): Promise<EventStreamClient> {
  const opening = await openEvents(`http://127.0.0.1:${port}/api/v1/reports/events/`, { authorization: `Bearer ${reader.token}` });
  opened.push(opening);
  expect(opening.status).toBe(200);
  return opening;
}

const revoked = async (open: EventStreamClient) => (await open.ended(5000)).map(({ event, data }) => [event, data.code]);

it("ends a stream once the user's group loses the permission its list needs", async () => {
  const { group, grant } = await readersGroup();
  const open = await stream();
  expect((await asAdmin('DELETE', `/api/v1/auth/groups/${group}/permissions/${grant}/`)).status).toBe(204);
  expect(await revoked(open)).toEqual([['revoked', 'permission_denied']]);
});

it('ends a stream once its user leaves the group, and keeps the streams of those who stay', async () => {
  const { membership, group } = await readersGroup();
  const other = await api.user('other');
  await asAdmin('POST', `/api/v1/auth/groups/${group}/members/`, { user_id: other.id });
  const staying = await openEvents(`http://127.0.0.1:${port}/api/v1/reports/events/`, { authorization: `Bearer ${other.token}` });
  opened.push(staying);
  const open = await stream();
  expect((await asAdmin('DELETE', `/api/v1/auth/groups/${group}/members/${membership}/`)).status).toBe(204);
  expect(await revoked(open)).toEqual([['revoked', 'permission_denied']]);
  // The one who stays still hears the collection's changes.
  await asAdmin('POST', '/api/v1/reports/', { title: 'still heard' });
  expect((await staying.next()).data).toMatchObject({ title: 'still heard' });
});
