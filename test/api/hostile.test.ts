/**
 * Hostile input against both surfaces (/api/v1 collections and /api/posts):
 * every request gets its documented 4xx (never a 500, never a crash), and the
 * stored data is exactly the same afterwards. Protocol-level input (raw bytes
 * in the request line, 100 KB URLs, odd methods) goes over a real socket.
 */
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, startApi, type TestApi, type TestUser } from '../support/api.js';

let api: TestApi;
let admin: TestUser;
let port: number;
let userId: number;
let articleId: number;
let postId: number;
let before: string;

const TABLES = ['users', 'auth_user_permissions', 'auth_tokens', 'articles', 'posts'];

/** Every row of every table, in a stable order. */
async function snapshot(): Promise<string> {
  const tables: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    tables[table] = await api.database.db.selectFrom(table).selectAll().orderBy('id').execute();
  }
  return JSON.stringify(tables);
}

beforeAll(async () => {
  api = await startApi();
  admin = await api.user('admin', { superuser: true });
  userId = (await api.user('plain')).id;
  const article = await api.request('POST', '/api/v1/articles/', { token: admin.token, body: { title: 'Hello', body: 'World' } });
  articleId = article.json.id;
  const post = await api.request('POST', '/api/posts', { body: { title: 'Hello', content: 'World', published: true } });
  postId = post.json.id;
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  port = (api.app.server.address() as AddressInfo).port;
  before = await snapshot();
});
afterAll(() => api?.close());

/** The stored data is untouched by everything in this file. */
afterAll(async () => {
  expect(await snapshot()).toBe(before);
});

interface Case {
  readonly method: string;
  readonly url: string;
  /** A string is sent as is (raw JSON text), a Buffer as bytes. */
  readonly body?: string | Buffer;
  readonly status: number;
  /** Surface A error code, when the status is an error. */
  readonly code?: string;
  readonly anonymous?: boolean;
}

async function send(testCase: Case) {
  const headers: Record<string, string> = {};
  if (!testCase.anonymous) headers.authorization = `Bearer ${admin.token}`;
  if (testCase.body !== undefined) headers['content-type'] = 'application/json';
  return api.app.inject({ method: testCase.method as 'GET', url: testCase.url, headers, payload: testCase.body });
}

const deep = (depth: number, open: string, close: string, inner = '1'): string => open.repeat(depth) + inner + close.repeat(depth);
const DEEP_ARRAY = deep(100_000, '[', ']');
const DEEP_OBJECT = deep(100_000, '{"a":', '}');
const INVALID_UTF8 = Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('","content":"x"}')]);
const json = (text: string) => text; // raw JSON text: JSON.stringify would make `__proto__` a prototype, not a key

describe('Surface A: collections', () => {
  const users = '/api/v1/users/';
  const cases: Case[] = [
    // SQL-shaped names: unknown filters and orderings are 400, naming what is allowed.
    { method: 'GET', url: `${users}?${encodeURIComponent('username;DROP TABLE users;--')}=1`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?${encodeURIComponent('"username"')}=x`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?${encodeURIComponent('username__exact) OR 1=1 --')}=x`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?${encodeURIComponent('users.password')}=x`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?password__startswith=scrypt`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?__proto__=1`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?constructor__in=1`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?ordering=${encodeURIComponent('id;DROP TABLE users')}`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?ordering=${encodeURIComponent('(SELECT password FROM users)')}`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?ordering=${encodeURIComponent('username DESC')}`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?ordering=-`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?ordering=password`, status: 400, code: 'validation_failed' },
    // SQL-shaped values where the type rejects them.
    { method: 'GET', url: `${users}?id=${encodeURIComponent('1 OR 1=1')}`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?id__in=${encodeURIComponent('1) OR (1=1')}`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?is_active=${encodeURIComponent("1' --")}`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?date_joined__gt=${encodeURIComponent("2024-01-01' OR '1'='1")}`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?page=${encodeURIComponent('1;SELECT 1')}`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?page_size=-1`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?page_size=1e3`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?page=99999999999999999999999`, status: 404, code: 'not_found' },
    // Numbers beyond 64 bits, and -0, in filters and paths.
    { method: 'GET', url: `${users}?id=18446744073709551616`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?id=1e400`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}18446744073709551616/`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}-0/`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}${encodeURIComponent('1 OR 1=1')}/`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}9223372036854775807/`, status: 404, code: 'not_found' },
    // NUL bytes and lone surrogates (percent-encoded as CESU: not UTF-8) in queries.
    { method: 'GET', url: `${users}?username=a%00b`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?search=%00`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?username=%ED%A0%80`, status: 400, code: 'validation_failed' },
    // Invalid UTF-8 in the query and in the path.
    { method: 'GET', url: `${users}?username=%FF`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?search=%C3`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?%FF=1`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}%FF/`, status: 400, code: 'parse_error' },
    { method: 'GET', url: '/api/v1/%FF%FE/', status: 400, code: 'parse_error' },
    // Duplicate parameters: the last value counts.
    { method: 'GET', url: `${users}?page=1&page=abc`, status: 400, code: 'validation_failed' },
    { method: 'GET', url: `${users}?ordering=id&ordering=${encodeURIComponent('id;--')}`, status: 400, code: 'validation_failed' },
    // A 100 KB query string.
    { method: 'GET', url: `${users}?search=${'x'.repeat(100_000)}`, status: 414, code: 'uri_too_long' },
    // Bodies: prototype keys are unknown fields, never properties of anything.
    { method: 'POST', url: users, body: json('{"username":"p1","password":"pw","__proto__":{"is_superuser":true}}'), status: 400, code: 'validation_failed' },
    { method: 'POST', url: users, body: json('{"username":"p2","password":"pw","constructor":{"prototype":{"polluted":true}}}'), status: 400, code: 'validation_failed' },
    { method: 'POST', url: users, body: json('{"username":"p3","password":"pw","prototype":{}}'), status: 400, code: 'validation_failed' },
    { method: 'PATCH', url: `${users}USER/`, body: json('{"__proto__":{"is_active":false}}'), status: 400, code: 'validation_failed' },
    { method: 'PUT', url: `${users}USER/`, body: json('{"username":"plain","constructor":{}}'), status: 400, code: 'validation_failed' },
    // SQL-shaped values in bodies are refused by the field's rules.
    { method: 'POST', url: users, body: JSON.stringify({ username: "x'; DROP TABLE users; --", password: 'pw' }), status: 400, code: 'validation_failed' },
    { method: 'PATCH', url: `${users}USER/`, body: JSON.stringify({ email: "a@b.c' OR '1'='1" }), status: 400, code: 'validation_failed' },
    // Deep nesting, huge and odd numbers, NUL and lone surrogates in bodies.
    { method: 'POST', url: users, body: DEEP_ARRAY, status: 400, code: 'parse_error' },
    { method: 'POST', url: users, body: DEEP_OBJECT, status: 400, code: 'validation_failed' },
    { method: 'PATCH', url: `${users}USER/`, body: json(`{"email":${DEEP_ARRAY}}`), status: 400, code: 'validation_failed' },
    { method: 'PATCH', url: `${users}USER/`, body: json('{"is_active":1e400}'), status: 400, code: 'validation_failed' },
    { method: 'POST', url: '/api/v1/articles/', body: json('{"title":"t","author_id":18446744073709551616}'), status: 400, code: 'validation_failed' },
    { method: 'POST', url: '/api/v1/articles/', body: json('{"title":"t","author_id":9007199254740993}'), status: 400, code: 'validation_failed' },
    { method: 'POST', url: '/api/v1/articles/', body: json('{"title":"t","author_id":1e400}'), status: 400, code: 'validation_failed' },
    { method: 'POST', url: '/api/v1/articles/', body: json('{"title":"t","author_id":-0}'), status: 400, code: 'validation_failed' },
    { method: 'PATCH', url: '/api/v1/articles/ARTICLE/', body: json('{"title":"a\\u0000b"}'), status: 400, code: 'validation_failed' },
    { method: 'PATCH', url: '/api/v1/articles/ARTICLE/', body: json('{"title":"\\ud800"}'), status: 400, code: 'validation_failed' },
    { method: 'PATCH', url: '/api/v1/articles/ARTICLE/', body: json('{"body":"\\udfff tail"}'), status: 400, code: 'validation_failed' },
    { method: 'PATCH', url: '/api/v1/articles/ARTICLE/', body: INVALID_UTF8, status: 400, code: 'parse_error' },
    { method: 'POST', url: users, body: json('{"username":"dup","username":"dup2","password":"pw","bogus":1}'), status: 400, code: 'validation_failed' },
    // Odd methods on known paths: 405 with Allow.
    { method: 'PROPFIND', url: users, status: 405, code: 'method_not_allowed' },
    { method: 'MKCOL', url: `${users}USER/`, status: 405, code: 'method_not_allowed' },
    { method: 'TRACE', url: users, status: 405, code: 'method_not_allowed' },
  ];

  it.each(cases.map((testCase) => [`${testCase.method} ${testCase.url.slice(0, 90)} ${String(testCase.body ?? '').slice(0, 60)}`, testCase] as const))(
    '%s',
    async (_name, testCase) => {
      const url = testCase.url.replace('USER', String(userId)).replace('ARTICLE', String(articleId));
      const reply = await send({ ...testCase, url });
      expect(reply.statusCode, reply.body.slice(0, 300)).toBe(testCase.status);
      expect(reply.headers['content-type']).toMatch(/^application\/json/);
      expect(reply.json().code).toBe(testCase.code);
    },
  );

  it('names a prototype key in the error like any unknown field, and pollutes nothing', async () => {
    const reply = await send({ method: 'POST', url: '/api/v1/users/', body: '{"username":"p9","password":"pw","__proto__":{"polluted":1}}', status: 400 });
    // An object literal's `__proto__` would set its prototype; this is an own key.
    expect(reply.json().details).toEqual(Object.fromEntries([['__proto__', ['Unknown field.']]]));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['username', "' OR '1'='1"],
    ['username__contains', '%'],
    ['username__startswith', '_'],
    ['email__iexact', "x' OR 1=1 --"],
    ['search', "'; DROP TABLE users; --"],
    ['search', '% _ \\'],
  ])('SQL-shaped text in %s=%s matches itself only (no rows)', async (name, value) => {
    const reply = await api.request('GET', `/api/v1/users/?${new URLSearchParams({ [name]: value })}`, { token: admin.token });
    expect(reply.status).toBe(200);
    expect(reply.json.count).toBe(0);
  });
});

describe('Surface B: posts', () => {
  const cases: Case[] = [
    { method: 'GET', url: `/api/posts/${encodeURIComponent('1;DROP TABLE posts')}`, status: 400 },
    { method: 'GET', url: `/api/posts/${encodeURIComponent('1 OR 1=1')}`, status: 400 },
    { method: 'GET', url: '/api/posts/18446744073709551616', status: 400 },
    { method: 'GET', url: '/api/posts/1e400', status: 400 },
    { method: 'GET', url: '/api/posts/-0', status: 404 },
    { method: 'GET', url: '/api/posts/9223372036854775807', status: 404 },
    { method: 'GET', url: '/api/posts/%FF', status: 400 },
    { method: 'GET', url: '/api/posts/%00', status: 400 },
    { method: 'DELETE', url: `/api/posts/${encodeURIComponent("1' OR '1'='1")}`, status: 400 },
    { method: 'GET', url: `/api/posts?${'q'.repeat(100_000)}`, status: 414 },
    { method: 'POST', url: '/api/posts', body: DEEP_ARRAY, status: 400 },
    { method: 'POST', url: '/api/posts', body: DEEP_OBJECT, status: 400 },
    { method: 'POST', url: '/api/posts', body: json(`{"title":${DEEP_OBJECT},"content":"x"}`), status: 400 },
    { method: 'POST', url: '/api/posts', body: json('{"__proto__":{"published":true},"content":"x"}'), status: 400 },
    { method: 'POST', url: '/api/posts', body: json('{"constructor":{"prototype":{"title":"x"}},"content":"x"}'), status: 400 },
    { method: 'POST', url: '/api/posts', body: json('{"title":"t","content":"c","published":1e400}'), status: 400 },
    { method: 'POST', url: '/api/posts', body: json('{"title":"t","content":"c","published":-0}'), status: 400 },
    { method: 'POST', url: '/api/posts', body: json('{"title":18446744073709551616,"content":"c"}'), status: 400 },
    { method: 'POST', url: '/api/posts', body: json('{"title":"a\\u0000b","content":"c"}'), status: 400 },
    { method: 'POST', url: '/api/posts', body: json('{"title":"t","content":"\\ud83d"}'), status: 400 },
    { method: 'PUT', url: '/api/posts/POST', body: json('{"title":"\\udc00"}'), status: 400 },
    { method: 'PUT', url: '/api/posts/POST', body: INVALID_UTF8, status: 400 },
    { method: 'POST', url: '/api/posts', body: INVALID_UTF8, status: 400 },
    { method: 'PUT', url: '/api/posts/POST', body: json('{"title":"x\'; DROP TABLE posts; --","content":5}'), status: 400 },
    { method: 'PROPFIND', url: '/api/posts', status: 405 },
    { method: 'MKCOL', url: '/api/posts/POST', status: 405 },
    { method: 'TRACE', url: '/api/posts', status: 405 },
  ];

  it.each(cases.map((testCase) => [`${testCase.method} ${testCase.url.slice(0, 90)} ${String(testCase.body ?? '').slice(0, 60)}`, testCase] as const))(
    '%s',
    async (_name, testCase) => {
      const reply = await send({ ...testCase, url: testCase.url.replace('POST', String(postId)), anonymous: true });
      expect(reply.statusCode, reply.body.slice(0, 300)).toBe(testCase.status);
      expect(reply.headers['content-type']).toBe('text/plain; charset=utf-8');
    },
  );
});

describe('secrets and cross-origin defaults', () => {
  it('stores neither tokens nor passwords in the clear', () => {
    expect(before).not.toContain(admin.token);
    expect(before).not.toContain(PASSWORD);
  });

  it('sends no CORS headers unless configured', async () => {
    const reply = await api.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/users/',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'DELETE' },
    });
    expect(Object.keys(reply.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });
});

/** One request over a raw socket; the status code of the answer (0 if the connection closed without one). */
function rawRequest(head: Buffer | string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
    socket.end(head);
  });
}

const requestLine = (method: string, target: string | Buffer, extra = ''): Buffer =>
  Buffer.concat([Buffer.from(`${method} `), Buffer.from(target), Buffer.from(` HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${extra}\r\n`)]);

describe('over a real socket', () => {
  it.each([
    ['a 100 KB query string', requestLine('GET', `/api/v1/users/?search=${'x'.repeat(100_000)}`), 414],
    ['a 100 KB query string on Surface B', requestLine('GET', `/api/posts?${'x'.repeat(100_000)}`), 414],
    ['raw invalid UTF-8 bytes in the path', requestLine('GET', Buffer.from([0x2f, 0x61, 0x70, 0x69, 0x2f, 0xff, 0xfe])), 400],
    ['PROPFIND on a collection', requestLine('PROPFIND', '/api/v1/users/', `Authorization: Bearer TOKEN\r\n`), 405],
    ['PROPFIND on Surface B', requestLine('PROPFIND', '/api/posts'), 405],
    ['an unknown method', requestLine('FOO', '/api/posts'), 400],
    ['a 100 000-deep JSON body', Buffer.concat([requestLine('POST', '/api/posts', `Content-Type: application/json\r\nContent-Length: ${DEEP_ARRAY.length}\r\n`), Buffer.from(DEEP_ARRAY)]), 400],
  ])('%s gets a 4xx and the server keeps serving', async (_name, head, status) => {
    const reply = await rawRequest(Buffer.from(head.toString('latin1').replace('TOKEN', admin.token), 'latin1'));
    expect(reply.status, reply.text.slice(0, 300)).toBe(status);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
  });
});
