/**
 * What a validating proxy in front of the service would see: real responses,
 * for every operation of /api/v1/schema/, in success and in error, each checked
 * against the document (status listed, body valid under its schema, media type,
 * and every header the document names for clients declared where it is sent).
 * The validator is Ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect) with formats.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- an OpenAPI document is read as plain JSON */
let api: TestApi;
let document: any;
let ajv: Ajv2020;
let admin: TestUser;
let writer: TestUser;
/** `method path` → the statuses seen, each checked. */
const seen = new Map<string, Set<number>>();

/** Headers the document promises to name wherever they are sent. */
const DECLARED_HEADERS = ['location', 'etag', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'www-authenticate'];

const pointer = (...parts: string[]): string => parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

beforeAll(async () => {
  // Throttling on, so the RateLimit-* headers are there to be checked.
  api = await startApi({ THROTTLE_ANON: '1000/min', THROTTLE_USER: '1000/min', THROTTLE_LOGIN: '1000/min' });
  document = (await api.request('GET', '/api/v1/schema/')).json;
  ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv);
  ajv.addSchema(document, 'openapi.json');
  admin = await api.user('root', { superuser: true });
  writer = await api.user('writer');
});
afterAll(() => api.close());

/** Checks `reply` against the operation `method path` of the document. */
function check(method: string, path: string, reply: Reply): Reply {
  const operation = document.paths[path]?.[method];
  expect(operation, `${method} ${path} is documented`).toBeDefined();
  const where = `${method.toUpperCase()} ${path} → ${reply.status} ${reply.body.slice(0, 200)}`;
  const response = operation.responses[String(reply.status)];
  expect(response, `${where}: status documented`).toBeDefined();
  const key = `${method} ${path}`;
  seen.set(key, (seen.get(key) ?? new Set()).add(reply.status));

  const declared = Object.keys(response.headers ?? {}).map((name) => name.toLowerCase());
  for (const name of DECLARED_HEADERS) {
    if (reply.headers[name] !== undefined) expect(declared, `${where}: header ${name} declared`).toContain(name);
  }
  if (!response.content) {
    expect(reply.body, `${where}: no body documented`).toBe('');
    return reply;
  }
  const mediaType = String(reply.headers['content-type']).split(';')[0]!;
  expect(Object.keys(response.content), `${where}: media type`).toContain(mediaType);
  const schemaPointer = `openapi.json#${pointer('', 'paths', path, method, 'responses', String(reply.status), 'content', mediaType, 'schema')}`;
  const validate = ajv.getSchema(schemaPointer) ?? ajv.compile({ $ref: schemaPointer });
  const body = mediaType === 'application/json' ? reply.json : reply.body;
  expect(validate(body) ? [] : validate.errors, `${where}: body valid`).toEqual([]);
  return reply;
}

const as = (user: TestUser | undefined) => (user ? { token: user.token } : {});

/** Sends the request, checks the reply against `method path`, and returns it. */
async function call(method: string, path: string, url: string, options: { user?: TestUser; body?: unknown; headers?: Record<string, string> } = {}) {
  return check(method, path, await api.request(method.toUpperCase(), url, { ...as(options.user), body: options.body, headers: options.headers }));
}

describe('every operation, answered as the document says', () => {
  it('health, root and the document itself', async () => {
    await call('get', '/healthz', '/healthz');
    await call('get', '/readyz', '/readyz');
    await call('get', '/api/v1/', '/api/v1/');
    await call('get', '/api/v1/', '/api/v1/', { headers: { accept: 'image/png' } });
    await call('get', '/api/v1/schema/', '/api/v1/schema/');
    const long = `?q=${'x'.repeat(17 * 1024)}`;
    for (const path of ['/healthz', '/readyz', '/api/v1/', '/api/v1/schema/']) await call('get', path, `${path}${long}`);
  });

  it('the authentication endpoints', async () => {
    const credentials = { username: 'writer', password: PASSWORD };
    const token = (await call('post', '/api/v1/auth/token/', '/api/v1/auth/token/', { body: credentials })).json.token;
    await call('post', '/api/v1/auth/token/', '/api/v1/auth/token/', { body: { username: 'writer', password: 'wrong' } });
    await call('post', '/api/v1/auth/token/', '/api/v1/auth/token/', { body: credentials, headers: { 'content-type': 'text/plain' } });
    await call('delete', '/api/v1/auth/token/', '/api/v1/auth/token/', { headers: { authorization: `Token ${token}` } });
    await call('delete', '/api/v1/auth/token/', '/api/v1/auth/token/', { headers: { authorization: `Token ${token}` } });

    const pair = (await call('post', '/api/v1/auth/jwt/', '/api/v1/auth/jwt/', { body: credentials })).json;
    await call('post', '/api/v1/auth/jwt/', '/api/v1/auth/jwt/', { body: {} });
    await call('post', '/api/v1/auth/jwt/refresh/', '/api/v1/auth/jwt/refresh/', { body: { refresh: pair.refresh } });
    await call('post', '/api/v1/auth/jwt/refresh/', '/api/v1/auth/jwt/refresh/', { body: { refresh: pair.refresh } });
    await call('post', '/api/v1/auth/jwt/refresh/', '/api/v1/auth/jwt/refresh/', { body: {} });

    const session = (await call('post', '/api/v1/auth/login/', '/api/v1/auth/login/', { body: credentials })).json.session;
    await call('post', '/api/v1/auth/login/', '/api/v1/auth/login/', { body: '{"username":' });
    await call('post', '/api/v1/auth/logout/', '/api/v1/auth/logout/', { headers: { authorization: `Bearer ${session}` } });
    await call('post', '/api/v1/auth/logout/', '/api/v1/auth/logout/', { headers: { authorization: `Bearer ${session}` } });
  });

  it('the users collection, in every state a record passes through', async () => {
    const list = '/api/v1/users/';
    const detail = '/api/v1/users/{id}/';
    const created = await call('post', list, list, { user: admin, body: { username: 'carol', email: '', password: 'carol-pass-1' } });
    expect(created.json.email).toBe('');
    const url = `/api/v1/users/${created.json.id}/`;
    await call('post', list, list, { user: admin, body: { username: 'carol', password: 'x-pass-word' } });
    await call('post', list, list, { user: writer, body: { username: 'dave', password: 'dave-pass-1' } });
    await call('post', list, list, { body: { username: 'erin', password: 'erin-pass-1' } });

    const page = await call('get', list, `${list}?ordering=-id&page_size=2`, { user: admin });
    await call('get', list, `${list}?ordering=-id&page_size=2`, { user: admin, headers: { 'if-none-match': String(page.headers.etag) } });
    await call('get', list, `${list}?ordering=nope`, { user: admin });
    await call('get', list, `${list}?page=99`, { user: admin });
    await call('get', list, list, { user: admin, headers: { prefer: 'count=none' } });

    const record = await call('get', detail, url, { user: admin });
    await call('get', detail, url, { user: admin, headers: { 'if-none-match': String(record.headers.etag) } });
    await call('get', detail, '/api/v1/users/999999/', { user: admin });
    await call('get', detail, '/api/v1/users/abc/', { user: admin });

    // A GET result sent back as it is (password: null, read-only fields included) is a valid PUT.
    await call('put', detail, url, { user: admin, body: record.json });
    await call('put', detail, url, { user: admin, body: { email: 'no-username@example.com' } });
    await call('patch', detail, url, { user: admin, body: { is_active: false }, headers: { 'if-match': String(record.headers.etag) } });
    await call('patch', detail, url, { user: admin, body: { is_active: 'yes' } });
    await call('patch', detail, url, { user: writer, body: { is_active: true } });
    await call('delete', detail, url, { user: admin, headers: { 'if-match': '"stale"' } });
    await call('delete', detail, url, { user: admin });
    await call('delete', detail, url, { user: admin });
  });

  it('the articles collection, bulk create included', async () => {
    const list = '/api/v1/articles/';
    const detail = '/api/v1/articles/{id}/';
    const bulk = '/api/v1/articles/bulk/';
    const created = await call('post', list, list, { user: writer, body: { title: 'One', body: 'text' } });
    const url = `/api/v1/articles/${created.json.id}/`;
    await call('post', list, list, { user: writer, body: { title: 'x'.repeat(201) } });
    const many = await call('post', bulk, bulk, { user: writer, body: [{ title: 'Two' }, { title: 'Three' }] });
    expect(many.json.map((article: { title: string }) => article.title)).toEqual(['Two', 'Three']);
    await call('post', bulk, bulk, { user: writer, body: [{ title: 'Four' }, {}] });
    await call('post', bulk, bulk, { body: [{ title: 'Five' }] });

    // react-admin's Django REST Framework provider: Token keyword, `-id` ordering.
    const reactAdmin = await call('get', list, `${list}?ordering=-id&title__startswith=T`, { headers: { authorization: `Token ${writer.token}` } });
    expect(reactAdmin.json.results.map((article: { title: string }) => article.title)).toEqual(['Three', 'Two']);
    await call('get', list, list, { headers: { authorization: 'Token' } });
    await call('get', detail, url, { user: writer });
    await call('put', detail, url, { user: writer, body: { title: 'One, again', body: 'more' } });
    await call('patch', detail, url, { user: writer, body: { author_id: admin.id } });
    await call('patch', detail, url, { user: admin, body: { title: 'Edited' } });
    await call('put', detail, url, { user: writer, body: { body: 'no title' } });
    await call('delete', detail, url, { user: writer });
    await call('delete', detail, url, { user: writer });
    await call('get', detail, url, { user: writer });
  });

  it('the tags collection', async () => {
    const list = '/api/v1/tags/';
    const detail = '/api/v1/tags/{id}/';
    const created = await call('post', list, list, { user: writer, body: { name: 'dragons' } });
    await call('post', list, list, { user: writer, body: { name: 'dragons' } });
    const url = `/api/v1/tags/${created.json.id}/`;
    await call('get', list, `${list}?name=dragons`, { user: writer });
    await call('get', list, list);
    await call('get', detail, url, { user: writer });
    await call('get', detail, '/api/v1/tags/999999/', { user: writer });
    await call('put', detail, url, { user: admin, body: { name: 'wyrms' } });
    await call('put', detail, url, { user: writer, body: { name: 'drakes' } });
    await call('patch', detail, url, { user: admin, body: { name: 'drakes' } });
    await call('patch', detail, url, { user: admin, body: { name: '' } });
    await call('delete', detail, url, { user: writer });
    await call('delete', detail, url, { user: admin });
  });

  it('the posts', async () => {
    const list = '/api/posts';
    const detail = '/api/posts/{id}';
    const created = await call('post', list, list, { body: { title: 'A post', content: 'Hello', published: true } });
    const url = `/api/posts/${created.json.id}`;
    await call('post', list, list, { body: { title: 42 } });
    await call('get', list, list);
    await call('get', list, `${list}?q=${'x'.repeat(17 * 1024)}`);
    await call('get', detail, url);
    await call('get', detail, '/api/posts/abc');
    await call('put', detail, url, { body: { title: 'Renamed' } });
    await call('put', detail, '/api/posts/999999', { body: { title: 'Nobody' } });
    await call('delete', detail, url);
    await call('delete', detail, url);
  });

  it('covered every operation, each with a success and an error', () => {
    const missing: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, unknown>>(document.paths)) {
      for (const method of Object.keys(operations)) {
        const statuses = [...(seen.get(`${method} ${path}`) ?? [])];
        if (!statuses.some((status) => status < 400) || !statuses.some((status) => status >= 400)) missing.push(`${method} ${path}: ${statuses.join(',')}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
