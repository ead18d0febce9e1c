/**
 * react-admin's Django REST Framework provider (ra-data-django-rest-framework), used unchanged
 * against the example service over HTTP: its token auth provider logs in at the service's DRF-style
 * token endpoint, and its data provider's every call (getList, getOne, getMany, getManyReference,
 * create, update, updateMany, delete, deleteMany) reads and writes articles with `Token <key>`.
 * Where SPEC's error envelope differs from DRF's, what the provider shows differs: with the
 * default envelope, its generic message; with drfExceptionHandler, DRF's (docs/api-style.md).
 */
import { createRequire } from 'node:module';
import type { DataProvider } from 'ra-core';
import type * as Provider from 'ra-data-django-rest-framework';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineApp, drfExceptionHandler } from '../../src/framework/index.js';
import service from '../../src/service/app.js';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';

/** The browser's localStorage, where the auth provider keeps the token: a Map behind the Storage calls it makes. */
function browserStorage(): void {
  const items = new Map<string, string>();
  Object.assign(globalThis, {
    localStorage: {
      getItem: (key: string) => items.get(key) ?? null,
      setItem: (key: string, value: string) => items.set(key, String(value)),
      removeItem: (key: string) => items.delete(key),
    },
  });
}

/** An error the provider rejected with: react-admin's HttpError (message, status, body) or a plain Error. */
async function refusal(call: Promise<unknown>): Promise<{ message: string; status?: number; body?: unknown }> {
  const error = (await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )) as { message: string; status?: number; body?: unknown } | undefined;
  if (!error) throw new Error('the call succeeded');
  return { message: error.message, status: error.status, body: error.body };
}

/** The provider as Node loads it, a CommonJS module: its data provider is its `default` export (which TypeScript's NodeNext reading of a CommonJS module's types does not see). */
const { default: drfProvider, fetchJsonWithAuthToken, tokenAuthProvider } = createRequire(import.meta.url)('ra-data-django-rest-framework') as Omit<typeof Provider, 'default'> & {
  default: (apiUrl: string, httpClient?: typeof fetchJsonWithAuthToken) => DataProvider;
};

const sorted = (ids: readonly number[]) => [...ids].sort((a, b) => a - b);

describe.each([
  ['the default error envelope', service],
  ['drfExceptionHandler', defineApp({ ...service, exceptionHandler: drfExceptionHandler })],
])('react-admin\'s DRF provider against the example service, with %s', (style, app) => {
  const drf = style === 'drfExceptionHandler';
  let api: TestApi;
  let apiUrl: string;
  let writer: TestUser;
  let other: TestUser;
  let provider: DataProvider;

  beforeAll(async () => {
    browserStorage();
    api = await startApi({}, app);
    apiUrl = `http://127.0.0.1:${await api.listen()}/api/v1`;
    writer = await api.user('writer');
    other = await api.user('other');
    provider = drfProvider(apiUrl, fetchJsonWithAuthToken);
  });
  afterAll(() => api.close());

  const auth = () => tokenAuthProvider({ obtainAuthTokenUrl: `${apiUrl}/auth/token/` });

  it('logs in with the token auth provider, and refuses a wrong password', async () => {
    const login = await refusal(auth().login({ username: 'writer', password: 'wrong' }));
    // DRF's obtain_auth_token answers {"non_field_errors": [...]}, which the provider shows; the
    // default envelope has them under details, so the provider shows the status text.
    expect(login.message).toBe(drf ? 'Unable to log in with the provided credentials.' : 'Bad Request');
    await expect(auth().checkAuth({})).rejects.toBeUndefined();
    await auth().login({ username: 'writer', password: PASSWORD });
    await expect(auth().checkAuth({})).resolves.toBeUndefined();
  });

  it('creates, reads, lists, pages, filters, searches and sorts', async () => {
    const created = [];
    for (const title of ['Alpha', 'Beta', 'Gamma']) created.push((await provider.create('articles', { data: { title, body: `about ${title}` } })).data);
    expect(created.map(({ title }) => title)).toEqual(['Alpha', 'Beta', 'Gamma']);
    const [alpha, beta, gamma] = created as [{ id: number }, { id: number }, { id: number }];

    expect((await provider.getOne('articles', { id: beta.id })).data).toMatchObject({ id: beta.id, title: 'Beta', author_id: writer.id });
    const many = await provider.getMany('articles', { ids: [alpha.id, gamma.id] });
    expect(many.data.map(({ title }) => title)).toEqual(['Alpha', 'Gamma']);

    const page = await provider.getList('articles', { pagination: { page: 1, perPage: 2 }, sort: { field: 'title', order: 'DESC' }, filter: {} });
    expect([page.total, page.data.map(({ title }) => title)]).toEqual([3, ['Gamma', 'Beta']]);
    const second = await provider.getList('articles', { pagination: { page: 2, perPage: 2 }, sort: { field: 'id', order: 'DESC' }, filter: {} });
    expect(second.data.map(({ id }) => id)).toEqual([alpha.id]);
    // The full-text box sends `q` as `search`; other filters go as they are.
    const searched = await provider.getList('articles', { pagination: { page: 1, perPage: 10 }, sort: { field: 'id', order: 'ASC' }, filter: { q: 'about Beta' } });
    expect(searched.data.map(({ id }) => id)).toEqual([beta.id]);
    const filtered = await provider.getList('articles', { pagination: { page: 1, perPage: 10 }, sort: { field: 'id', order: 'ASC' }, filter: { title__startswith: 'G' } });
    expect(filtered.data.map(({ id }) => id)).toEqual([gamma.id]);

    const otherArticle = (await api.request('POST', '/api/v1/articles/', { token: other.token, body: { title: 'Elsewhere' } })).json;
    const byAuthor = await provider.getManyReference('articles', {
      target: 'author_id',
      id: writer.id,
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'id', order: 'ASC' },
      filter: {},
    });
    expect([byAuthor.total, byAuthor.data.map(({ id }) => id)]).toEqual([3, [alpha.id, beta.id, gamma.id]]);
    expect(byAuthor.data.map(({ id }) => id)).not.toContain(otherArticle.id);
  });

  it('updates one and many, deletes one and many', async () => {
    const ids = [];
    for (const title of ['One', 'Two', 'Three']) ids.push((await provider.create('articles', { data: { title } })).data.id as number);
    const [one, two, three] = ids as [number, number, number];
    const updated = await provider.update('articles', { id: one, data: { title: 'One, edited' }, previousData: { id: one } });
    expect(updated.data).toMatchObject({ id: one, title: 'One, edited' });
    expect(sorted((await provider.updateMany('articles', { ids: [two, three], data: { body: 'same' } })).data as number[])).toEqual([two, three]);
    expect((await provider.getMany('articles', { ids: [two, three] })).data.map(({ body }) => body)).toEqual(['same', 'same']);

    expect((await provider.delete('articles', { id: one, previousData: { id: one } })).data).toEqual({ id: one });
    expect((await provider.deleteMany('articles', { ids: [two, three] })).data).toEqual([]);
    for (const id of ids) expect((await api.request('GET', `/api/v1/articles/${id}/`, { token: writer.token })).status).toBe(404);
  });

  it('rejects with the status and body react-admin reads: 400 on a bad field, 403 on another\'s record, 404', async () => {
    const invalid = await refusal(provider.create('articles', { data: { title: 'x'.repeat(201) } }));
    expect(invalid.status).toBe(400);
    // react-admin shows an HttpError's message: the status text either way; its body is the envelope.
    expect(invalid.message).toBe('Bad Request');
    const fieldMessages = drf ? (invalid.body as Record<string, unknown>).title : (invalid.body as { details: Record<string, unknown> }).details.title;
    expect(fieldMessages).toEqual([expect.stringContaining('200')]);

    const theirs = (await api.request('POST', '/api/v1/articles/', { token: other.token, body: { title: 'Not yours' } })).json;
    const forbidden = await refusal(provider.update('articles', { id: theirs.id, data: { title: 'Mine now' }, previousData: theirs }));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual(drf ? { detail: expect.any(String) } : { error: expect.any(String), code: 'permission_denied' });
    // The auth provider's checkError logs out on 401 and 403, as with DRF.
    await expect(auth().checkError({ status: 403 })).rejects.toBeUndefined();
    await auth().login({ username: 'writer', password: PASSWORD });

    expect((await refusal(provider.getOne('articles', { id: 999_999 }))).status).toBe(404);
  });

  it('is refused 401 once logged out', async () => {
    await auth().logout({});
    expect((await refusal(provider.getList('articles', { pagination: { page: 1, perPage: 1 }, sort: { field: 'id', order: 'ASC' }, filter: {} }))).status).toBe(401);
    await auth().login({ username: 'writer', password: PASSWORD });
  });
});
