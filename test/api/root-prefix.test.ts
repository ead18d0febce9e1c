/**
 * A router mounted at the server's root (`prefix: ''`): its collections at `/<name>/`, its API root
 * at `/`, its authentication endpoints and schema beside them, and the framework's own paths
 * (`/readyz`) still answering.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, computed, defineApp, fields, isAuthenticated, model, serializer } from '../../src/framework/index.js';
import { mountedRouters } from '../../src/framework/routing/routers.js';
import { startApi, type TestApi, type TestUser } from '../support/api.js';
import { withGeneratedMigrations } from '../support/migrations.js';

const Thing = model('root_things', { id: fields.id(), name: fields.string({ maxLength: 20 }) });
const things = collection('things', { serializer: serializer(Thing, { fields: ['id', 'name', 'url'], computed: { url: computed.url() } }), permissions: [isAuthenticated] });
const app = withGeneratedMigrations(defineApp({ routers: [{ prefix: '' }], collections: [things] }));

let api: TestApi;
let user: TestUser;

beforeAll(async () => {
  api = await startApi({}, app);
  user = await api.user('rooted');
});
afterAll(() => api.close());

describe('collections at the root', () => {
  it('serves each collection at /<name>/, its records linking there', async () => {
    const created = await api.request('POST', '/things/', { token: user.token, body: { name: 'a' } });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`http://localhost/things/${created.json.id}/`);
    expect(created.json.url).toBe(`http://localhost/things/${created.json.id}/`);
    expect((await api.request('GET', '/things/', { token: user.token })).json).toMatchObject({ count: 1, results: [{ name: 'a' }] });
    expect((await api.request('GET', `/things/${created.json.id}/`, { token: user.token })).json).toMatchObject({ name: 'a' });
    expect(await api.request('GET', '/things?x=1')).toMatchObject({ status: 308, headers: { location: '/things/?x=1' } });
  });

  it('answers its API root at /, its schema and authentication beside, and JSON 404s elsewhere', async () => {
    expect((await api.request('GET', '/')).json).toEqual({ things: 'http://localhost/things/' });
    expect((await api.request('GET', '/', { headers: { accept: 'text/html' } })).headers['content-type']).toMatch(/^text\/html/);
    expect((await api.request('GET', '/schema/')).json.paths['/things/']).toBeDefined();
    expect((await api.request('POST', '/auth/token/', { body: { username: 'rooted', password: 'wrong' } })).status).toBe(400);
    expect(await api.request('GET', '/nothing/')).toMatchObject({ status: 404, json: { code: 'not_found' } });
    expect((await api.request('GET', '/readyz')).status).toBe(200);
  });

  it('still refuses a prefix that is no path', () => {
    for (const prefix of ['/', 'api', '/api/', '//x']) expect(() => mountedRouters([{ prefix }], [things])).toThrow(/must be a path/);
  });
});
