/**
 * What a validating proxy (Prism) in front of the service would see: real requests and responses,
 * for every operation of /api/v1/schema/, in success and in error, each checked against the
 * document as the proxy checks them. A response: its status listed, its media type and body valid
 * under its schema, every header the document names for clients declared where it is sent, and
 * the declared headers' values valid. A request the service answers with success: its credential
 * one of the operation's security requirements (a `bearer` scheme admits `Authorization: Bearer …`
 * only, an API key its header or cookie), its body valid under the request body (and none sent
 * where none is documented), its path, query and header parameters valid. The validator is Ajv
 * (JSON Schema 2020-12, OpenAPI 3.1's dialect) with formats.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collection, csvRenderer, defineApp, fields, serializer } from '../../src/framework/index.js';
import { PASSWORD, startApi, type Reply, type TestApi, type TestUser } from '../support/api.js';
import { setCookieLine } from '../support/auth-session-suite.js';
import { withGeneratedMigrations } from '../support/migrations.js';
import { lintProblems } from '../support/openapi-lint.js';
import { Note } from '../support/owned-notes.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- an OpenAPI document is read as plain JSON */

/** Headers the document promises to name wherever they are sent. */
const DECLARED_HEADERS = ['location', 'etag', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'www-authenticate'];

const pointer = (...parts: string[]): string => parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** A request as it went out: what the proxy checks of it. */
interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

interface CallOptions {
  user?: TestUser;
  body?: unknown;
  headers?: Record<string, string>;
}

/** `method path` → the statuses seen, each checked. */
type Seen = Map<string, Set<number>>;

/** The proxy's checks of one service's document, and what it saw. */
class Proxy {
  readonly seen: Seen = new Map();
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  // Parameters and headers arrive as text: read as their schemas' types, as the proxy reads them.
  private readonly text = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, coerceTypes: true });

  constructor(
    private readonly api: TestApi,
    readonly document: any,
  ) {
    for (const ajv of [this.ajv, this.text]) {
      addFormats.default(ajv);
      ajv.addSchema(document, 'openapi.json');
    }
  }

  /** Sends the request, checks it and the reply against `method path`, and returns the reply. */
  async call(method: string, path: string, url: string, options: CallOptions = {}): Promise<Reply> {
    const request = this.sent(method, url, options);
    const reply = await this.api.request(method.toUpperCase(), url, { body: options.body, headers: request.headers });
    this.check(method, path, reply);
    const where = `${method.toUpperCase()} ${url} → ${reply.status}`;
    // A request the service took must be one the document allows; one it refused may be either.
    if (reply.status < 400) expect(this.requestProblems(method, path, request), `${where}: request valid`).toEqual([]);
    return reply;
  }

  /** What the proxy finds wrong with a request (nothing: it lets it through). */
  requestProblems(method: string, path: string, request: SentRequest): string[] {
    const operation = this.document.paths[path][method];
    const problems: string[] = [];
    const security: Record<string, string[]>[] = operation.security ?? this.document.security ?? [];
    if (security.length > 0 && !security.some((requirement) => Object.keys(requirement).every((name) => this.satisfies(name, request.headers)))) {
      problems.push('security: no requirement met');
    }
    const location = this.pointerOf(method, path);
    const sentBody = request.body !== undefined;
    if (operation.requestBody && !sentBody && operation.requestBody.required) problems.push('body: required');
    if (!operation.requestBody && sentBody) problems.push('body: none documented');
    if (operation.requestBody && sentBody) {
      const mediaType = request.headers['content-type']!.split(';')[0]!;
      if (!operation.requestBody.content[mediaType]) problems.push(`body: media type ${mediaType}`);
      else {
        // A form's fields are text, read as the schema's types as a query string's are.
        const form = mediaType === 'application/x-www-form-urlencoded';
        const body = form ? Object.fromEntries(new URLSearchParams(String(request.body))) : typeof request.body === 'string' ? JSON.parse(request.body) : request.body;
        problems.push(...this.errors(form ? this.text : this.ajv, `${location}/requestBody/content/${pointer(mediaType)}/schema`, body));
      }
    }
    const { pathname, searchParams } = new URL(request.url, 'http://proxy.test');
    const values: Record<string, Record<string, string | undefined>> = {
      path: pathParameters(path, pathname),
      query: Object.fromEntries(searchParams),
      header: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value])),
    };
    for (const [index, parameter] of (operation.parameters ?? []).entries()) {
      const value = values[parameter.in]![parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name];
      if (value === undefined) {
        if (parameter.required) problems.push(`${parameter.in} ${parameter.name}: required`);
        continue;
      }
      problems.push(...this.errors(this.text, `${location}/parameters/${index}/schema`, value).map((error) => `${parameter.in} ${parameter.name}: ${error}`));
    }
    return problems;
  }

  /** Checks `reply` against the operation `method path` of the document. */
  check(method: string, path: string, reply: Reply): void {
    const operation = this.document.paths[path]?.[method];
    expect(operation, `${method} ${path} is documented`).toBeDefined();
    const where = `${method.toUpperCase()} ${path} → ${reply.status} ${reply.body.slice(0, 200)}`;
    const response = operation.responses[String(reply.status)];
    expect(response, `${where}: status documented`).toBeDefined();
    const key = `${method} ${path}`;
    this.seen.set(key, (this.seen.get(key) ?? new Set()).add(reply.status));

    const location = `${this.pointerOf(method, path)}/responses/${reply.status}`;
    const declared = Object.fromEntries(Object.keys(response.headers ?? {}).map((name) => [name.toLowerCase(), name]));
    for (const name of DECLARED_HEADERS) {
      if (reply.headers[name] !== undefined) expect(Object.keys(declared), `${where}: header ${name} declared`).toContain(name);
    }
    for (const [name, as] of Object.entries(declared)) {
      if (reply.headers[name] === undefined) continue;
      expect(this.errors(this.text, `${location}/headers/${pointer(as)}/schema`, String(reply.headers[name])), `${where}: header ${name} valid`).toEqual([]);
    }
    if (!response.content) {
      expect(reply.body, `${where}: no body documented`).toBe('');
      return;
    }
    const mediaType = String(reply.headers['content-type']).split(';')[0]!;
    expect(Object.keys(response.content), `${where}: media type`).toContain(mediaType);
    const body = mediaType === 'application/json' ? reply.json : reply.body;
    expect(this.errors(this.ajv, `${location}/content/${pointer(mediaType)}/schema`, body), `${where}: body valid`).toEqual([]);
  }

  /** Every operation of the document (of the paths `include` names) not seen both succeeding and failing. */
  unseen(include: (path: string) => boolean = () => true): string[] {
    const missing: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, unknown>>(this.document.paths)) {
      if (!include(path)) continue;
      for (const method of Object.keys(operations)) {
        const statuses = [...(this.seen.get(`${method} ${path}`) ?? [])];
        if (!statuses.some((status) => status < 400) || !statuses.some((status) => status >= 400)) missing.push(`${method} ${path}: ${statuses.join(',')}`);
      }
    }
    return missing;
  }

  private sent(method: string, url: string, { user, body, headers = {} }: CallOptions): SentRequest {
    const sent: Record<string, string> = { ...(user && { authorization: `Bearer ${user.token}` }), ...headers };
    if (body !== undefined) sent['content-type'] ??= 'application/json';
    return { method, url, headers: sent, body };
  }

  /** Whether the request carries the credential of the scheme `name`, as the proxy tells. */
  private satisfies(name: string, headers: Record<string, string>): boolean {
    const scheme = this.document.components.securitySchemes[name];
    if (scheme.type === 'http' && scheme.scheme === 'bearer') return /^Bearer\s.+$/i.test(headers.authorization ?? '');
    if (scheme.type === 'apiKey' && scheme.in === 'header') return Boolean(headers[scheme.name.toLowerCase()]);
    if (scheme.type === 'apiKey' && scheme.in === 'cookie') return new RegExp(`${scheme.name}=.+`).test(headers.cookie ?? '');
    throw new Error(`a scheme the proxy does not check: ${JSON.stringify(scheme)}`);
  }

  private pointerOf(method: string, path: string): string {
    return `openapi.json#${pointer('', 'paths', path, method)}`;
  }

  /** `value` checked against the schema at `schemaPointer`: its errors (none: valid). */
  private errors(ajv: Ajv2020, schemaPointer: string, value: unknown): string[] {
    const validate = ajv.getSchema(schemaPointer) ?? ajv.compile({ $ref: schemaPointer });
    return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`.trim());
  }
}

/** `/api/v1/users/{id}/` and `/api/v1/users/7/` → `{ id: '7' }`. */
function pathParameters(template: string, pathname: string): Record<string, string> {
  const names = [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '([^/]+)')}$`);
  const values = pattern.exec(pathname)?.slice(1) ?? [];
  return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(values[index] ?? '')]));
}

let api: TestApi;
let proxy: Proxy;
let admin: TestUser;
let writer: TestUser;
const call = (method: string, path: string, url: string, options?: CallOptions) => proxy.call(method, path, url, options);

beforeAll(async () => {
  // Throttling on, so the RateLimit-* headers are there to be checked; live streams ended at once by their age, so a request answers.
  api = await startApi({ THROTTLE_ANON: '1000/min', THROTTLE_USER: '1000/min', THROTTLE_LOGIN: '1000/min', LIVE_MAX_AGE_MS: '1' });
  proxy = new Proxy(api, (await api.request('GET', '/api/v1/schema/')).json);
  admin = await api.user('root', { superuser: true });
  writer = await api.user('writer');
});
afterAll(() => api.close());

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
    const logout = '/api/v1/auth/logout/';
    await call('post', logout, logout, { headers: { authorization: `Bearer ${session}` } });
    await call('post', logout, logout, { headers: { authorization: `Bearer ${session}` } });
    // A browser's: the cookie, with the CSRF token login answered (403 without it).
    const browser = await call('post', '/api/v1/auth/login/', '/api/v1/auth/login/', { body: credentials });
    const cookie = setCookieLine(browser)!.split(';')[0]!;
    await call('post', logout, logout, { headers: { cookie } });
    expect((await call('post', logout, logout, { headers: { cookie, 'x-csrf-token': browser.json.csrf_token } })).status).toBe(204);
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

    // Narrowed by ?fields= or ?omit=: any of the record's fields, as <Name>Subset says.
    const narrowed = await call('get', list, `${list}?fields=id,username&ordering=-id`, { user: admin });
    expect(Object.keys(narrowed.json.results[0])).toEqual(['id', 'username']);
    await call('get', list, `${list}?omit=email,articles`, { user: admin });
    await call('get', list, `${list}?fields=nope`, { user: admin });
    expect((await call('get', detail, `${url}?fields=username`, { user: admin })).json).toEqual({ username: 'carol' });
    await call('get', detail, `${url}?omit=email`, { user: admin });

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
    // The collection's own POST takes an array too (the contract), but the document says one record in, one out
    // (so a generated create answers one record): a proxy refuses the array form there, which bulk/ takes.
    const arrayForm = [{ title: 'Six' }, { title: 'Seven' }];
    const sent = { method: 'POST', url: list, headers: { authorization: `Bearer ${writer.token}`, 'content-type': 'application/json' }, body: arrayForm };
    expect(proxy.requestProblems('post', list, sent)).toEqual(['must be object']);
    const listed = await api.request('POST', list, { token: writer.token, body: arrayForm });
    expect([listed.status, listed.json.map((article: { title: string }) => article.title)]).toEqual([201, ['Six', 'Seven']]);
    const nested = await call('get', list, `${list}?fields=title,author.username&ordering=-id`, { user: writer });
    expect(nested.json.results[0]).toEqual({ title: 'Seven', author: { username: 'writer' } });
    await call('get', detail, `${url}?omit=author,body`, { user: writer });

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

  it('the articles\' live stream: text/event-stream, or 401 and 406 in the error envelope', async () => {
    const events = '/api/v1/articles/events/';
    expect((await call('get', events, `${events}?search=live&fields=id,title`, { user: writer })).body).toContain('retry:');
    expect((await call('get', events, events)).status).toBe(401);
    expect((await call('get', events, events, { user: writer, headers: { accept: 'application/json' } })).status).toBe(406);
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

  it('the groups and users under /auth/', async () => {
    const groups = '/api/v1/auth/groups/';
    const group = '/api/v1/auth/groups/{id}/';
    const made = await call('post', groups, groups, { user: admin, body: { name: 'documented' } });
    const url = `${groups}${made.json.id}/`;
    await call('post', groups, groups, { user: writer, body: { name: 'nope' } });
    await call('get', groups, groups, { user: admin });
    await call('get', groups, groups, { user: writer });
    await call('get', group, url, { user: admin });
    await call('get', group, `${groups}999999/`, { user: admin });
    await call('put', group, url, { user: admin, body: { name: 'documented-too' } });
    await call('put', group, url, { user: admin, body: { name: '' } });
    await call('patch', group, url, { user: admin, body: { name: 'documented' } });
    await call('patch', group, url, { user: writer, body: { name: 'x' } });
    const links: [string, string, Record<string, unknown>, Record<string, unknown>][] = [
      ['/api/v1/auth/groups/{parent}/permissions/', `${url}permissions/`, { name: 'tags.change' }, { name: 'tags.delete' }],
      ['/api/v1/auth/groups/{parent}/members/', `${url}members/`, { user_id: writer.id }, { user_id: admin.id }],
      ['/api/v1/auth/users/{parent}/groups/', `/api/v1/auth/users/${admin.id}/groups/`, { group_id: made.json.id }, { group_id: made.json.id }],
      ['/api/v1/auth/users/{parent}/permissions/', `/api/v1/auth/users/${admin.id}/permissions/`, { name: 'documented.one' }, { name: 'documented.two' }],
    ];
    for (const [list, at, body, other] of links) {
      const detail = `${list}{id}/`;
      const link = await call('post', list, at, { user: admin, body });
      await call('post', list, at, { user: admin, body });
      await call('get', list, at, { user: admin });
      await call('get', list, at, { user: writer });
      await call('get', detail, `${at}${link.json.id}/`, { user: admin });
      await call('get', detail, `${at}999999/`, { user: admin });
      await call('put', detail, `${at}${link.json.id}/`, { user: admin, body: other });
      await call('put', detail, `${at}${link.json.id}/`, { user: writer, body: other });
      await call('patch', detail, `${at}${link.json.id}/`, { user: admin, body: other });
      await call('patch', detail, `${at}${link.json.id}/`, { user: writer, body: other });
      await call('delete', detail, `${at}${link.json.id}/`, { user: writer });
      await call('delete', detail, `${at}${link.json.id}/`, { user: admin });
      await call('post', list, at, { user: admin, body });
      await call('delete', list, `${at}?${Object.keys(body)[0]}=${String(Object.values(body)[0])}`, { user: admin });
      await call('delete', list, at, { user: admin });
    }
    await call('get', '/api/v1/auth/users/', '/api/v1/auth/users/', { user: admin });
    await call('get', '/api/v1/auth/users/', '/api/v1/auth/users/', { user: writer });
    await call('get', '/api/v1/auth/users/{id}/', `/api/v1/auth/users/${admin.id}/`, { user: admin });
    await call('get', '/api/v1/auth/users/{id}/', '/api/v1/auth/users/999999/', { user: admin });
    await call('patch', '/api/v1/auth/users/{id}/', `/api/v1/auth/users/${writer.id}/`, { user: admin, body: { is_staff: false } });
    await call('patch', '/api/v1/auth/users/{id}/', `/api/v1/auth/users/${admin.id}/`, { user: writer, body: { is_staff: true } });
    await call('delete', group, url, { user: writer });
    await call('delete', group, url, { user: admin });
  });

  it('covered every operation, each with a success and an error', () => {
    expect(proxy.unseen()).toEqual([]);
  });
});

describe('the proxy’s request checks', () => {
  it('refuse what the document does not allow: a missing credential, a bad body, path or query', () => {
    const request = (method: string, url: string, options: { headers?: Record<string, string>; body?: unknown } = {}) => ({
      method,
      url,
      headers: { authorization: `Bearer ${admin.token}`, ...(options.body !== undefined && { 'content-type': 'application/json' }), ...options.headers },
      body: options.body,
    });
    const users = '/api/v1/users/';
    expect(proxy.requestProblems('get', users, request('GET', users))).toEqual([]);
    expect(proxy.requestProblems('get', users, { ...request('GET', users), headers: {} })).toEqual(['security: no requirement met']);
    expect(proxy.requestProblems('get', users, request('GET', `${users}?page=first`))).toEqual(['query page: must be integer']);
    expect(proxy.requestProblems('get', '/api/v1/users/{id}/', request('GET', '/api/v1/users/abc/'))).toEqual(['path id: must be integer']);
    expect(proxy.requestProblems('patch', '/api/v1/users/{id}/', request('PATCH', '/api/v1/users/1/', { body: { is_active: 'yes' } }))).toEqual(['/is_active must be boolean']);
    expect(proxy.requestProblems('delete', '/api/v1/users/{id}/', request('DELETE', '/api/v1/users/1/', { body: {} }))).toEqual(['body: none documented']);
  });
});

/** An app of notes with custom actions: with a declared body (fields, a serializer), any JSON, and none. */
const notesApp = withGeneratedMigrations(
  defineApp({
    collections: [
      collection('notes', {
        serializer: serializer(Note, { fields: ['id', 'text', 'owner_id'], readOnly: ['owner_id'] }),
        scope: ({ user }) => ({ owner_id: user?.id ?? null }),
        actions: {
          publish: {
            detail: true,
            method: 'POST',
            body: { channel: fields.string({ maxLength: 20 }), urgent: fields.boolean({ default: false }) },
            response: {
              type: 'object',
              required: ['published', 'channel', 'urgent'],
              properties: { published: { type: 'integer' }, channel: { type: 'string' }, urgent: { type: 'boolean' } },
            },
            handler: ({ record, body }) => ({ published: record!.id, ...(body as object) }),
          },
          draft: {
            detail: false,
            method: 'POST',
            body: serializer(Note, { fields: ['text'] }),
            unknownFields: 'ignore',
            response: { type: 'object', required: ['draft'], properties: { draft: { type: 'string' } } },
            handler: ({ body }) => ({ draft: (body as { text: string }).text }),
          },
          echo: {
            detail: false,
            method: 'POST',
            response: { type: 'object', required: ['echoed'], properties: { echoed: {} } },
            handler: ({ body }) => ({ echoed: body }),
          },
          pin: {
            detail: true,
            method: 'POST',
            body: false,
            response: { type: 'object', required: ['pinned'], properties: { pinned: { type: 'integer' } } },
            handler: ({ record }) => ({ pinned: record!.id }),
          },
        },
      }),
    ],
  }),
);

describe('custom actions, answered as the document says', () => {
  let notes: TestApi;
  let notesProxy: Proxy;
  let owner: TestUser;
  beforeAll(async () => {
    notes = await startApi({}, notesApp);
    notesProxy = new Proxy(notes, (await notes.request('GET', '/api/v1/schema/')).json);
    owner = await notes.user('owner');
  });
  afterAll(() => notes.close());

  it('takes and refuses their bodies as documented', async () => {
    const note = (await notes.request('POST', '/api/v1/notes/', { token: owner.token, body: { text: 'hello' } })).json.id;
    const publish = '/api/v1/notes/{id}/publish/';
    const url = `/api/v1/notes/${note}/publish/`;
    expect((await notesProxy.call('post', publish, url, { user: owner, body: { channel: 'news' } })).json).toEqual({ published: note, channel: 'news', urgent: false });
    await notesProxy.call('post', publish, url, { user: owner, body: { channel: 'x'.repeat(21), urgent: 'yes' } });
    await notesProxy.call('post', publish, url, { user: owner, body: { channel: 'news', extra: 1 } });
    await notesProxy.call('post', publish, url, { user: owner, body: 'channel=news', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    await notesProxy.call('post', publish, '/api/v1/notes/999999/publish/', { user: owner, body: { channel: 'news' } });

    const draft = '/api/v1/notes/draft/';
    expect((await notesProxy.call('post', draft, draft, { user: owner, body: { text: 'kept', ignored: true } })).json).toEqual({ draft: 'kept' });
    await notesProxy.call('post', draft, draft, { user: owner, body: {} });

    const echo = '/api/v1/notes/echo/';
    expect((await notesProxy.call('post', echo, echo, { user: owner, body: [1, 'two'] })).json).toEqual({ echoed: [1, 'two'] });
    await notesProxy.call('post', echo, echo, { user: owner, body: '{' });

    const pin = '/api/v1/notes/{id}/pin/';
    await notesProxy.call('post', pin, `/api/v1/notes/${note}/pin/`, { user: owner });
    await notesProxy.call('post', pin, '/api/v1/notes/999999/pin/', { user: owner });

    expect(notesProxy.unseen((path) => /\/(publish|draft|echo|pin)\/$/.test(path))).toEqual([]);
  });
});

describe('an enveloped collection’s creates, answered as the document says', () => {
  it('wraps one record under its key, and bulk create’s array under the list’s', async () => {
    const enveloped = await startApi(
      {},
      withGeneratedMigrations(
        defineApp({
          collections: [
            collection('notes', {
              serializer: serializer(Note, { fields: ['id', 'text'] }),
              envelope: { record: 'note', list: 'notes' },
              bulkCreate: { max: 5 },
            }),
          ],
        }),
      ),
    );
    try {
      const checked = new Proxy(enveloped, (await enveloped.request('GET', '/api/v1/schema/')).json);
      expect(await lintProblems(checked.document)).toEqual([]);
      const user = await enveloped.user('writer');
      const [list, bulk] = ['/api/v1/notes/', '/api/v1/notes/bulk/'];
      expect((await checked.call('post', list, list, { user, body: { note: { text: 'one' } } })).json).toEqual({ note: { id: 1, text: 'one' } });
      await checked.call('post', list, list, { user, body: { note: { text: 'x'.repeat(101) } } });
      expect((await checked.call('post', bulk, bulk, { user, body: { notes: [{ text: 'two' }, { text: 'three' }] } })).json.notes).toHaveLength(2);
      await checked.call('post', bulk, bulk, { user, body: { notes: [] } });
      expect(checked.unseen((path) => path === list || path === bulk).filter((operation) => operation.startsWith('post'))).toEqual([]);
    } finally {
      await enveloped.close();
    }
  });
});

describe('a collection answering CSV too, answered as the document says', () => {
  it('lists and shows records as CSV (Accept or ?format=, with ?fields=), its errors as JSON', async () => {
    const served = await startApi(
      {},
      withGeneratedMigrations(
        defineApp({
          collections: [collection('notes', { serializer: serializer(Note, { fields: ['id', 'text', 'owner_id'], readOnly: ['owner_id'] }), renderers: [csvRenderer] })],
        }),
      ),
    );
    try {
      const checked = new Proxy(served, (await served.request('GET', '/api/v1/schema/')).json);
      expect(await lintProblems(checked.document)).toEqual([]);
      const user = await served.user('writer');
      const [list, detail] = ['/api/v1/notes/', '/api/v1/notes/{id}/'];
      const csv = { accept: 'text/csv' };
      for (const text of ['one', 'two, "quoted"']) await checked.call('post', list, list, { user, body: { text } });
      expect((await checked.call('get', list, list, { user, headers: csv })).body.split('\r\n')[0]).toBe('id,text,owner_id');
      expect((await checked.call('get', list, `${list}?format=csv&fields=id,text&ordering=-id`, { user })).body).toBe('id,text\r\n2,"two, ""quoted"""\r\n1,one\r\n');
      await checked.call('get', list, `${list}?format=csv&fields=nope`, { user });
      await checked.call('get', list, `${list}?format=csv`);
      await checked.call('get', detail, '/api/v1/notes/1/', { user, headers: csv });
      await checked.call('get', detail, '/api/v1/notes/999/', { user, headers: csv });
      expect(checked.unseen((path) => path === list || path === detail).filter((operation) => operation.startsWith('get'))).toEqual([]);
    } finally {
      await served.close();
    }
  });
});
